import FlagCore
import FlagSigning
import Foundation

/// The background refresh loop: runs the `RefreshStateMachine`'s actions against the transport, applies documents
/// and patches, keeps the cache, and publishes each new set to the core. All its state is isolated to the actor.
actor Refresher {
    let core: ClientCore
    private let server: URL
    let setName: String
    private let sdkKey: String
    var machine: RefreshStateMachine
    /// The whole decoded set in use (needed to apply patches); `nil` until one is decoded.
    private var model: FlagSet?
    var etag: String?
    private var lastEventID: String?
    /// The instance id the server last issued (`Flagstaff-Instance`), sent back when opening a stream or polling so
    /// that the id survives reconnects; `new` asks for a first one (a poll without the header gets none, as pollers
    /// from before telemetry do). Sent with telemetry off too: the server then counts a connection that does not
    /// report, rather than none.
    private var instance = "new"
    private var wasLive = false
    /// The cached document and patches read at launch, decoded in full here rather than on the caller's thread.
    private var pendingCached: (bytes: [UInt8], patches: [SetPatch])?
    /// Under `.manual`, the activated version the launch started from while the cached one waits: decoded in full
    /// here too, so that sessions read it as fast as any set in use.
    private var pendingActivated: (bytes: [UInt8], patches: [SetPatch])?
    /// What the cache should hold when writing it failed, to write when the cache takes writes again.
    private var unsaved: FlagCache.Stored?
    /// With trusted keys: checks what the server sends before it is used.
    let verifier: SetVerifier?
    /// With trusted keys: the version below which nothing is accepted besides the set in use (the verified
    /// bootstrap document's).
    private let floor: Int
    /// With trusted keys: the signed bytes of the set in use (the last signed document, the signed patches since),
    /// which is what the cache holds.
    var signed: FlagCache.Stored?

    init(core: ClientCore, configuration: FlagClient.Configuration, starting: StartingSet, verifier: SetVerifier?) {
        self.core = core
        self.server = configuration.server
        self.setName = configuration.set
        self.sdkKey = configuration.sdkKey
        self.machine = RefreshStateMachine(
            mode: configuration.refresh, pollInterval: configuration.pollInterval,
            longPollWait: configuration.longPollWait)
        self.verifier = verifier
        self.floor = starting.floor
        self.signed = starting.signed
        self.model = starting.model
        if let model {
            lastEventID = String(model.version)
            etag = "\"\(model.version)\""
        }
        pendingActivated = starting.activated.map { ($0.document.bytes, $0.patches) }
        if let (document, patches) = starting.cached {
            pendingCached = (document.bytes, patches)
            let version = patches.last?.version ?? document.version
            etag = document.etag ?? "\"\(version)\""
            lastEventID = String(version)
        }
    }

    /// Runs until the task is cancelled or the server refuses the key.
    func run() async {
        compileCached()
        pruneSessions()
        await loop()
    }

    /// The refresh loop proper: what the state machine says, until the task is cancelled or the key is refused.
    func loop() async {
        while !Task.isCancelled {
            let outcome: RefreshStateMachine.Outcome
            switch machine.next() {
            case .openStream:
                outcome = await runStream()
            case .fetch(let wait):
                outcome = await fetch(wait: wait)
            case .sleep(let seconds):
                do {
                    try await core.dependencies.sleep(seconds)
                } catch {
                    return  // cancelled: the client is going away
                }
                continue
            case .stop(let status):
                if status != 0 {
                    core.log(
                        .error,
                        "the server refused the SDK key for set '\(setName)' (HTTP \(status)); refreshing stopped. "
                            + "Check the key and that it is scoped to this set.")
                }
                return
            }
            if Task.isCancelled { return }
            machine.record(
                outcome, now: core.dependencies.now().timeIntervalSince1970, random: core.dependencies.random())
            switch outcome {
            case .failed, .throttled, .streamEnded, .badData, .unauthorized: markStale()
            case .streamOpened, .fetched, .notHeld, .streamUnsupported, .serverRetry: break
            }
        }
    }

    /// Decodes the whole cached document and applies the cached patches off the caller's thread, and replaces the
    /// lazy source with the result.
    func compileCached() {
        if let (bytes, patches) = pendingActivated {
            pendingActivated = nil
            do {
                core.replaceInUse(CompiledSource(try compile(bytes, patches)))
            } catch {
                core.log(.warning, "the activated set kept aside is unusable (\(error)); it is read flag by flag")
            }
        }
        guard let (bytes, patches) = pendingCached else { return }
        pendingCached = nil
        do {
            let compiled = try compile(bytes, patches)
            model = compiled.flagSet
            core.publish(source: CompiledSource(compiled), state: core.state)
        } catch {
            // The file passed quick_check, but its document no longer validates: download a new one.
            core.log(.warning, "the cached document is unusable (\(error)); it will be downloaded again")
            etag = nil
            lastEventID = nil
        }
    }

    /// A cached document with the cached patches applied, validated whole.
    private func compile(_ bytes: [UInt8], _ patches: [SetPatch]) throws -> CompiledFlagSet {
        let compiled = try Documents.validate(bytes, set: setName)
        guard !patches.isEmpty else { return compiled }
        let set = patches.reduce(compiled.flagSet) { FlagPatch($1).applied(to: $0) }
        let patched = CompiledFlagSet(set, sessionSlots: FlagSlots.slot)
        if set.schema <= FlagSet.currentSchema, let problem = patched.problems.first {
            throw DocumentRejected(message: "the cached patches make the set invalid: \(problem)")
        }
        return patched
    }

    private func pruneSessions() {
        guard let cache = core.cache else { return }
        do {
            try cache.deleteExpiredSessions(now: core.now(), ttl: core.sessionTTL)
        } catch {
            core.log(.warning, "could not delete expired sessions from the cache: \(error)")
        }
    }

    private func markStale() {
        if wasLive, case .live = core.state {
            core.setState(.stale(since: core.now()))
        }
    }

    /// The whole decoded set in use, when there is one.
    var currentModel: FlagSet? { model }

    func recordOpened() {
        machine.record(.streamOpened, now: core.dependencies.now().timeIntervalSince1970, random: 0)
    }

    func recordRetry(seconds: Double) {
        machine.record(.serverRetry(seconds: seconds), now: core.dependencies.now().timeIntervalSince1970, random: 0)
    }

    func setLastEventID(_ id: String?) {
        if let id { lastEventID = id }
    }

    /// Makes `set` the model in use, with the ETag and event id that name it. It comes from the server, so the
    /// client is live from now on, and stale when the connection fails later.
    func adopt(_ set: FlagSet, etag newETag: String) {
        wasLive = true
        model = set
        etag = newETag
        lastEventID = String(set.version)
    }

    /// Caches a validated document (and, with trusted keys, the signed patches applied since). A failed write (full
    /// disk, read-only file) is logged once per run of failures; the set stays in use in memory, and the write is
    /// tried again at each sign of life from the server (a heartbeat, a 304) until it succeeds, so that the cache
    /// catches up once the disk has room again.
    func store(_ stored: FlagCache.Stored) {
        guard let cache = core.cache else { return }
        do {
            var document = stored.document
            if document.index == nil { document.index = try DocumentIndex(scanning: document.bytes).encoded() }
            try cache.store(
                set: setName, document: document, patches: stored.patches, keepingActivated: { core.activatedVersion },
                now: core.now())
            if unsaved != nil { core.log(.info, "set '\(setName)' v\(stored.version) is cached again") }
            unsaved = nil
        } catch {
            if unsaved == nil {
                core.log(
                    .warning,
                    "could not cache set '\(setName)' v\(stored.version) (kept in memory, will retry): \(error)")
            }
            unsaved = stored
        }
    }

    /// With trusted keys: caches a signed patch after the signed bytes cached so far (`signed` already holds it).
    func store(_ patch: FlagCache.Patch) {
        guard let cache = core.cache, let signed else { return }
        guard unsaved == nil else {
            store(signed)
            return
        }
        do {
            try cache.append(
                set: setName, patch: patch, etag: etag, keepingActivated: { core.activatedVersion }, now: core.now())
        } catch {
            core.log(
                .warning, "could not cache set '\(setName)' v\(patch.version) (kept in memory, will retry): \(error)")
            unsaved = signed
        }
    }

    func markLive() {
        if let unsaved { store(unsaved) }
        guard let model else { return }
        wasLive = true
        core.setState(.live(version: model.version))
    }

    /// Keeps the set in use after a refusal, and says why in the log and the client's state.
    func refuse(_ refusal: SetRefusal) {
        core.log(.error, "refused an update of set '\(setName)': \(refusal.message)")
        core.setState(.refused(version: core.source?.version, refusal))
    }

    /// With trusted keys, the lowest version that may replace the set in use: its own, or the verified bootstrap
    /// document's when that is higher.
    var lowestAcceptable: Int {
        max(floor, model?.version ?? core.source?.version ?? 0)
    }

    // MARK: - Requests

    func request(path: String, wait: Int = 0, stream: Bool) -> TransportRequest {
        var url = server.appendingPathComponent("v1/sets/\(setName)\(path)")
        if wait > 0, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.queryItems = [URLQueryItem(name: "wait", value: String(wait))]
            url = components.url ?? url
        }
        var headers = ["Authorization": "Bearer \(sdkKey)", "User-Agent": "FlagClient/1"]
        if stream {
            headers["Accept"] = "text/event-stream"
            headers["Cache-Control"] = "no-cache"
            if let lastEventID, model != nil { headers["Last-Event-ID"] = lastEventID }
        } else {
            headers["Accept"] = "application/json"
            if let etag, model != nil { headers["If-None-Match"] = etag }
        }
        headers["Flagstaff-Instance"] = instance
        // A stream hears a heartbeat every 15 s: three missed mean the connection is dead.
        return TransportRequest(url: url, headers: headers, timeout: stream ? 45 : Double(wait) + 15)
    }

    func observe(_ head: TransportHead) {
        if let text = head["date"], let date = parseHTTPDate(text) {
            core.observeServerDate(date, localNow: core.dependencies.now())
        }
        if let id = head.issuedInstance {
            instance = id
            core.telemetry?.instanceIssued(id)
        }
    }

    /// A long poll answered within this many seconds with nothing new was not held by the server.
    static let heldAtLeast = 1.0

    /// One fetch of the document; `wait` > 0 long-polls.
    func fetch(wait: Int) async -> RefreshStateMachine.Outcome {
        let started = core.dependencies.now()
        let before = model?.version
        let outcome = await fetchOnce(wait: wait)
        guard wait > 0, outcome == .fetched, model?.version == before,
            core.dependencies.now().timeIntervalSince(started) < Self.heldAtLeast
        else { return outcome }
        return .notHeld
    }

    func fetchOnce(wait: Int) async -> RefreshStateMachine.Outcome {
        let head: TransportHead
        let body: [UInt8]
        do {
            (head, body) = try await core.dependencies.transport.fetch(request(path: "", wait: wait, stream: false))
        } catch {
            core.log(.info, "fetching set '\(setName)' failed: \(error.localizedDescription)")
            return .failed
        }
        observe(head)
        switch head.status {
        case 200:
            let applied = applyDocument(
                body, etag: head["etag"], signature: head[Signature.headerName], via: "fetched from the server")
            return applied ? .fetched : .badData
        case 304:
            markLive()
            return .fetched
        case 401, 403:
            return .unauthorized(status: head.status)
        default:
            return failure(head, "fetching set '\(setName)'")
        }
    }

    /// The outcome of an error status: throttled when the server said when to come back (`Retry-After`, sent with
    /// 429 and 503), else a plain failure with the usual backoff.
    func failure(_ head: TransportHead, _ what: String) -> RefreshStateMachine.Outcome {
        guard let seconds = head.retryAfter(localNow: core.dependencies.now()) else {
            core.log(.info, "\(what) answered HTTP \(head.status)")
            return .failed
        }
        let honoured = min(seconds, RefreshStateMachine.maximumRetryAfter)
        core.log(.info, "\(what) answered HTTP \(head.status); asking again in \(Int(honoured)) s or more, as it asked")
        return .throttled(retryAfter: seconds)
    }
}
