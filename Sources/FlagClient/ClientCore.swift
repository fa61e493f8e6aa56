import FlagCore
import FlagLock
import Foundation

/// The state sessions and the refresh loop share: the set in use, the client state, the server-clock correction,
/// the open sessions (for kills) and the subscribers to updates.
final class ClientCore: Sendable {
    struct Current: Sendable {
        /// What sessions evaluate: the set in use, with the kills of a waiting set over it (ClientCore+Pending.swift).
        var source: (any EvaluationSource)?
        var state: ClientState
        /// Seconds to add to the local clock to get the server's (from the `Date` of its responses).
        var skew: Double = 0
        /// The set in use and the newer one an apply policy holds back.
        var versions = HeldVersions()
    }

    let setName: String
    let sessionTTL: Double
    let dependencies: ClientDependencies
    let cache: FlagCache?
    let overrides: OverrideStore?
    let logger: (@Sendable (FlagClientLogMessage) -> Void)?
    /// Reports to the server what the client did; `nil` with telemetry or refresh off.
    let telemetry: TelemetryReporter?
    /// Where sessions count their evaluations; `nil` when nothing is reported.
    let counter: EvaluationCounter?
    /// Whether a new version waits for the next launch or `activate()` (`.nextLaunch`, `.manual`).
    let holdsNewVersions: Bool
    /// Whether the cache keeps the activated version while a newer one waits (`.manual`), so that it waits across
    /// launches too.
    let keepsActivated: Bool
    let current: Locked<Current>
    /// The state the app reads: set once a change's kills reached open sessions, so that a session read after the
    /// state names a version has that version's kills.
    private let announced: Locked<ClientState>
    /// Held over a change and its announcement, so that changes are announced one at a time, in the order made. It
    /// counts the changes announced: `Locked` guards a value, not `Void`.
    private let changing = Locked(0)
    private let sessions = Locked<[ObjectIdentifier: OpenSession]>([:])
    private let subscribers = Locked<[UUID: AsyncStream<FlagClientUpdate>.Continuation]>([:])
    /// Writes of persisted sessions' values, in order, off the reading thread.
    private let persistence = DispatchQueue(label: "FlagClient.persistence")

    init(
        setName: String, sessionTTL: Double, dependencies: ClientDependencies, cache: FlagCache?,
        overrides: OverrideStore?, logger: (@Sendable (FlagClientLogMessage) -> Void)?,
        telemetry: TelemetryReporter?, source: (any EvaluationSource)?, state: ClientState,
        applyPolicy: FlagClient.ApplyPolicy = .nextSession
    ) {
        self.setName = setName
        self.sessionTTL = sessionTTL
        self.dependencies = dependencies
        self.cache = cache
        self.overrides = overrides
        self.logger = logger
        self.telemetry = telemetry
        self.counter = telemetry?.counter
        self.holdsNewVersions = applyPolicy != .nextSession
        self.keepsActivated = applyPolicy == .manual
        self.current = Locked(Current(source: source, state: state, versions: HeldVersions(inUse: source)))
        self.announced = Locked(state)
    }

    func log(_ level: FlagClientLogMessage.Level, _ message: String) {
        logger?(FlagClientLogMessage(level: level, message: message))
    }

    /// The set in use and the server-clock correction, read together.
    func sourceAndSkew() -> (source: (any EvaluationSource)?, skew: Double) {
        current.withLock { ($0.source, $0.skew) }
    }

    /// The local clock corrected by the server's.
    func now() -> Date {
        dependencies.now().addingTimeInterval(current.withLock { $0.skew })
    }

    /// The state the refresh loop works from; it may name a version whose kills are still on their way to open
    /// sessions.
    var state: ClientState { current.withLock { $0.state } }
    /// The state the app reads: it names a version only once open sessions have that version's kills.
    var announcedState: ClientState { announced.withLock { $0 } }
    var source: (any EvaluationSource)? { current.withLock { $0.source } }

    /// Records the server's clock: `serverDate` was read from a response received at local time `localNow`.
    /// The `Date` header has whole seconds, so differences under 2 s are noise and ignored.
    func observeServerDate(_ serverDate: Date, localNow: Date) {
        let skew = serverDate.timeIntervalSince(localNow)
        current.withLock { $0.skew = abs(skew) < 2 ? 0 : skew }
    }

    /// Puts `source` in use (when given), or, under a policy that holds new versions, keeps it waiting with its
    /// kills in use; sets the state, naming the version in use. Kills new to sessions apply to open sessions at once.
    func publish(source: (any EvaluationSource)?, state: ClientState) {
        change { current in
            if let source { current.receive(source, holding: holdsNewVersions) }
            current.state = current.versions.naming(state)
            return true
        }
    }

    /// Changes the set in use or waiting, or the state, with `body` (`false` when it finds nothing to change), then
    /// announces the change; `false` when there was none.
    @discardableResult
    func change(_ body: (inout Current) -> Bool) -> Bool {
        changing.withLock { announcedChanges in
            let change = current.withLock { current -> VersionChange? in
                let before = VersionChange.Side(current)
                guard body(&current) else { return nil }
                return VersionChange(before: before, after: VersionChange.Side(current))
            }
            guard let change else { return false }
            announce(change)
            announcedChanges += 1
            return true
        }
    }

    /// What follows a change of the set in use or waiting: kills to open sessions, telemetry, the updates.
    private func announce(_ change: VersionChange) {
        let (before, after) = (change.before, change.after)
        // Only another version can kill: the same version in another form (the lazy cached set compiled whole)
        // changes nothing that sessions saw.
        if before.versions != after.versions, let killed = after.source?.killed, !killed.isEmpty,
            let version = after.source?.version
        {
            let already = before.source?.killed ?? [:]
            let newlyKilled = killed.filter { already[$0.key] == nil }
            if !newlyKilled.isEmpty { applyKills(newlyKilled, version: version) }
        }
        announced.withLock { $0 = after.state }
        if let version = after.versions.inUse, before.versions.inUse != version {
            telemetry?.versionApplied(version, at: dependencies.now())
        }
        if before.state != after.state || before.versions != after.versions {
            let update = FlagClientUpdate(
                state: after.state, version: after.versions.inUse, pendingVersion: after.versions.pending)
            for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(update) }
        }
    }

    /// Sets the state only.
    func setState(_ state: ClientState) {
        publish(source: nil, state: state)
    }

    private func applyKills(_ killed: [String: JSONValue], version: Int) {
        let kills = killed.map { FlagSession.Kill(name: $0.key, slot: FlagSlots.slot(for: $0.key), value: $0.value) }
        // Copied out first: the writes to each session's values and the persistence happen outside this lock.
        let open = sessions.withLock { Array($0.values) }
        for session in open { FlagSession.applyKills(kills, version: version, to: session, core: self) }
    }

    /// Registers a new session's frozen values for kills; the session's `deinit` unregisters them.
    func register(_ id: ObjectIdentifier, _ session: OpenSession) {
        sessions.withLock { $0[id] = session }
    }

    func unregister(_ id: ObjectIdentifier) {
        sessions.withLock { $0[id] = nil }
    }

    /// A new stream of updates; it ends when the subscriber stops iterating.
    func subscribe() -> AsyncStream<FlagClientUpdate> {
        let (stream, continuation) = AsyncStream<FlagClientUpdate>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.subscribers.withLock { $0[id] = nil } }
        return stream
    }

    /// Ends every update stream (the client is going away).
    func finishSubscribers() {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }

    /// Stores values of a persisted session in the background.
    func persist(sessionID: String, values: [(key: String, detail: EvaluationDetail<JSONValue>)]) {
        guard let cache, !values.isEmpty else { return }
        let now = now()
        persistence.async { [self] in
            do {
                try cache.saveSessionValues(id: sessionID, values: values, now: now)
            } catch {
                log(.warning, "could not save the frozen values of a persisted session: \(error)")
            }
        }
    }

    /// Waits until every queued session write is done.
    func flushPersistence() {
        persistence.sync {}
    }
}

/// What a kill needs of an open session: its frozen values and its persisted id. Held strongly and removed by the
/// session's `deinit`: the registry used to hold the session weakly, and a weakly referenced object keeps its counts
/// in a side table, which made every retain and release of a session take the runtime's slow path.
struct OpenSession: Sendable {
    let id: String?
    let frozen: Locked<FrozenValues>
}
