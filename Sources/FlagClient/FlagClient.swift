import FlagCore
import FlagLock
import Foundation

/// The flag client a service or an app embeds: it serves flags from compiled defaults, the disk cache and the
/// server's live set, evaluates them locally and freezes them per session. Never does network I/O on the caller's
/// thread; the first value comes from disk during `init`.
///
/// ```swift
/// let client = try FlagClient(configuration: .init(server: url, set: "ios-prod", sdkKey: key, cacheDirectory: dir))
/// let session = client.session(unitID: "u-42", attributes: ["country": "DE"])
/// if session.value(.newCheckout) { … }
/// ```
public final class FlagClient: Sendable {
    /// The configuration the client was created with.
    public let configuration: Configuration
    let core: ClientCore
    /// The refresh loop and the telemetry reporter's loop, and whether the app suspended them
    /// (FlagClient+Lifecycle.swift).
    let background: Locked<BackgroundWork>
    let refresher: Refresher

    // App extensions (FlagClient+Extensions.swift): kept in a block of their own.
    /// A read-only client's reader of the app's cache; `nil` for a read-write client.
    let sharedReader: SharedCacheReader?

    /// Creates a client: reads the cache (or seeds it from the bootstrap document) synchronously, then starts
    /// refreshing in the background. Throws only for a configuration that cannot work (a bad set name or URL);
    /// cache and network trouble are logged and served around.
    public convenience init(configuration: Configuration) throws {
        try self.init(configuration: configuration, dependencies: .live())
    }

    init(configuration: Configuration, dependencies: ClientDependencies) throws {
        guard OverridesParser.isFlagKey(configuration.set) else {
            throw FlagClientError.invalidConfiguration(
                "set name '\(configuration.set)' is not valid: use a-z, 0-9, '.', '_' and '-'")
        }
        guard let scheme = configuration.server.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw FlagClientError.invalidConfiguration(
                "server URL '\(configuration.server)' must start with http:// or https://")
        }
        self.configuration = configuration
        let logger = configuration.logger
        let log: @Sendable (FlagClientLogMessage.Level, String) -> Void = { level, message in
            logger?(FlagClientLogMessage(level: level, message: message))
        }
        let now = dependencies.now()
        let started = ContinuousClock.now
        let verifier = SetVerifier(set: configuration.set, keys: configuration.trustedKeys)
        let launch = Self.openCacheForLaunch(configuration, verifier: verifier, now: now, log: log)
        sharedReader = launch.reader
        let starting = Self.loadSet(configuration, verifier: verifier, cache: launch.cache, now: now, log: log)
        let (cache, source, state) = (starting.cache, starting.source, starting.state)
        log(
            .debug,
            "cache opened, checked and read (\(state)) in \(ContinuousClock.now - started)")
        var overrides: OverrideStore?
        if configuration.overridesEnabled {
            var api: [String: String] = [:]
            do {
                api = try cache?.overrides(set: configuration.set) ?? [:]
            } catch {
                log(.warning, "could not read the saved overrides: \(error)")
            }
            overrides = OverrideStore.load(
                file: configuration.overridesFile, environment: configuration.environment, api: api, log: log)
        }
        // No refresh, no instance id: nothing could be reported, so nothing is counted.
        var telemetry: TelemetryReporter?
        if let period = configuration.telemetry.period, configuration.refresh != .off {
            telemetry = TelemetryReporter(
                configuration: configuration, period: period, dependencies: dependencies,
                applied: source.map { ($0.version, now) })
        }
        core = ClientCore(
            setName: configuration.set, sessionTTL: configuration.sessionTTL, dependencies: dependencies,
            cache: launch.reader == nil ? cache : nil, overrides: overrides, logger: logger, telemetry: telemetry,
            source: source, state: state, applyPolicy: configuration.applyNewVersions)
        // Under `.manual`, the newest set cached waits as it did before the relaunch, its kills applied; handed over
        // before the refresh loop starts, which carries on from it.
        if let pending = starting.pending { core.publish(source: pending, state: state) }
        let refresher = Refresher(
            core: core, configuration: configuration, starting: Self.refresherStart(starting, launch.reader),
            verifier: verifier)
        self.refresher = refresher
        self.background = Locked(
            BackgroundWork(
                refresh: Task.detached(priority: .utility) { await refresher.run() },
                telemetry: telemetry.map { telemetry in Task.detached(priority: .utility) { await telemetry.run() } }))
    }

    deinit {
        background.withLock { $0.end() }
        core.finishSubscribers()
    }

    /// Stops refreshing and reporting (the values in use stay; counts not yet reported are not sent), waits for
    /// the persisted sessions' pending writes and closes the cache, so that a client created next on the same cache
    /// directory resumes them at once; `deinit` stops refreshing and reporting too. Nothing is cached after it.
    public func shutdown() {
        background.withLock { $0.end() }
        core.finishSubscribers()
        core.flushPersistence()
        core.cache?.close()
        sharedReader?.close()
    }

    /// Where the values come from right now. Once it names a version, open sessions have that version's kills.
    public var state: ClientState { core.announcedState }

    /// A new stream of state and version changes; each access returns a new stream.
    ///
    /// ```swift
    /// for await update in client.updates { print(update.state) }
    /// ```
    public var updates: AsyncStream<FlagClientUpdate> { core.subscribe() }

    /// Waits until a set fresh from the server is in use, or `timeout` passes; `true` when live.
    ///
    /// Values are served at once either way; wait only where stale flags must not be shown.
    /// ```swift
    /// if await client.ready(timeout: .seconds(2)) == false { log("using cached or default flags") }
    /// ```
    @discardableResult
    public func ready(timeout: Duration) async -> Bool {
        if case .live = state { return true }
        let updates = updates
        if case .live = state { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await update in updates {
                    if case .live = update.state { return true }
                }
                return false
            }
            group.addTask {
                // Cancellation just ends the wait early, which is the point of cancelling it.
                try? await Task.sleep(for: timeout)
                return false
            }
            let result = await group.next() ?? false
            group.cancelAll()
            return result
        }
    }

    /// A session living in memory: each flag freezes at its first read. A ``CacheAccess/readOnly`` client first
    /// checks whether the app stored a newer set or changed its overrides (see ``reload()``).
    ///
    /// ```swift
    /// let session = client.session(unitID: "u-42", attributes: ["country": "DE", "appVersion": "5.3.0"])
    /// ```
    public func session(unitID: String, attributes: [String: String] = [:]) -> FlagSession {
        sharedReader?.check(core)
        return FlagSession(
            core: core, id: nil, context: EvaluationContext(unitID: unitID, attributes: attributes), frozen: [:])
    }

    /// A persisted session: the same `id` resumes with the same frozen values after a restart, until the session
    /// TTL (counted from its creation) passes. Without a cache it lives in memory only. Reads the cache database
    /// (no network) on the calling thread. A ``CacheAccess/readOnly`` client resumes the values the app stored for
    /// `id` and keeps the values it freezes itself in memory only.
    ///
    /// ```swift
    /// let session = client.session(id: "checkout-\(order.id)", unitID: user.id, attributes: ["country": "DE"])
    /// ```
    public func session(id: String, unitID: String, attributes: [String: String] = [:]) -> FlagSession {
        var frozen: [String: EvaluationDetail<JSONValue>] = [:]
        do {
            if let sharedReader {
                // Read only: what the app stored for `id`, recording nothing.
                sharedReader.check(core)
                frozen =
                    try sharedReader.cache?.storedSession(
                        id: id, set: configuration.set, unitID: unitID, now: core.now(), ttl: configuration.sessionTTL)
                    ?? [:]
            } else if let cache = core.cache {
                frozen = try cache.resumeSession(
                    id: id, set: configuration.set, unitID: unitID, now: core.now(), ttl: configuration.sessionTTL)
            }
        } catch {
            core.log(.warning, "could not resume a persisted session; starting it afresh: \(error)")
        }
        return FlagSession(
            core: core, id: id, context: EvaluationContext(unitID: unitID, attributes: attributes), frozen: frozen)
    }

    /// Forces a flag's value in this process (a debug menu), kept in the cache across restarts; `nil` clears it.
    /// Does nothing when overrides are disabled. A ``CacheAccess/readOnly`` client keeps it in memory only, over the
    /// overrides the app stored, and logs that it does.
    public func setOverride<Value: FlagValue>(_ key: FlagKey<Value>, to value: Value?) {
        setOverride(key.name, to: value?.flagValue)
    }

    /// Forces an enum key's value in this process (a debug menu), as `setOverride` does any other; `nil` clears it.
    public func setOverride<Value: RawRepresentable>(_ key: FlagKey<Value>, to value: Value?)
    where Value.RawValue == String {
        setOverride(key.name, to: value.map { .string($0.rawValue) })
    }

    func setOverride(_ name: String, to value: JSONValue?) {
        guard let overrides = core.overrides else { return }
        var text: String?
        if let value {
            switch value {
            case .string(let string): text = "\"\(string)\""  // quoted, so that quotes inside survive
            case let json:
                var writer = JSONWriter()
                writer.value(json)
                text = String(decoding: writer.bytes, as: UTF8.self)
            }
        }
        if sharedReader != nil {
            overrides.setInMemoryOverride(name, text: text)
            core.log(
                .info,
                "the override of '\(name)' applies in this process only: a read-only client does not write the cache")
            return
        }
        overrides.setAPIOverride(name, text: text)
        do {
            try core.cache?.setOverride(set: configuration.set, key: name, text: text)
        } catch {
            core.log(.warning, "could not save the override of '\(name)': \(error)")
        }
    }
}
