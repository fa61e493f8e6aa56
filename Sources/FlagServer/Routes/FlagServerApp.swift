import Dispatch
import FlagCore
import FlagLock
import Foundation
import Synchronization

/// The server application: routes HTTP requests to the flag service, checks tokens, streams versions to clients,
/// and counts everything for `/metrics`. Its `handler` is what `HTTPServer` runs.
///
/// ```swift
/// let app = FlagServerApp(service: service, tokens: tokens, clock: .system)
/// let server = HTTPServer(configuration: configuration, handler: app.handler)
/// app.start(server: server)
/// ```
public final class FlagServerApp: Sendable {
    /// Limits and intervals of the application layer.
    public struct Settings: Sendable {
        /// The longest `?wait=` a long-poll may ask for, in seconds; longer asks are cut to it.
        public var longPollMaxSeconds: Int
        /// How often open event streams get a heartbeat comment.
        public var heartbeatInterval: Duration
        /// The most history entries or audit records one request returns.
        public var maxListLimit: Int

        /// The defaults: 300 s long-polls, a heartbeat every 15 s, lists of at most 1,000.
        public init(longPollMaxSeconds: Int = 300, heartbeatInterval: Duration = .seconds(15), maxListLimit: Int = 1000)
        {
            self.longPollMaxSeconds = longPollMaxSeconds
            self.heartbeatInterval = heartbeatInterval
            self.maxListLimit = maxListLimit
        }
    }

    /// The flag sets.
    public let service: FlagService
    /// The tokens.
    public let tokens: TokenAuthority
    /// Request counters.
    public let metrics = ServerMetrics()
    let clock: ServerClock
    let settings: Settings
    /// Long-poll timeouts and heartbeats run here, never on a loop thread.
    let timers = DispatchQueue(label: "flagserver.timers")
    /// Requests that wait on SQLite (admin reads and writes, old versions) run here, one at a time, so that an
    /// fsync or a large set's validation never stalls the event loop serving documents and streams.
    let storeWork = DispatchQueue(label: "flagserver.store")
    /// When waiting long-polls give up.
    let deadlines: Deadlines
    private let heartbeatTimer = Locked<HeartbeatTimer?>(nil)
    private let engineMetrics = Locked<(@Sendable () -> HTTPServerMetrics)?>(nil)

    /// An application over a loaded service and token authority.
    public init(service: FlagService, tokens: TokenAuthority, clock: ServerClock, settings: Settings = Settings()) {
        self.service = service
        self.tokens = tokens
        self.clock = clock
        self.settings = settings
        self.deadlines = Deadlines(queue: timers)
    }

    /// The handler to give `HTTPServer`.
    public var handler: HTTPHandler {
        { [self] request, responder in handle(request, responder) }
    }

    /// Starts the stream heartbeats and reads the engine's counters for `/metrics` from `server`.
    public func start(server: HTTPServer?) {
        if let server { engineMetrics.withLock { $0 = { server.metrics } } }
        let timer = DispatchSource.makeTimerSource(queue: timers)
        let interval = settings.heartbeatInterval
        timer.schedule(deadline: .now() + interval.timeInterval, repeating: interval.timeInterval)
        timer.setEventHandler { [service] in service.registry.heartbeat() }
        timer.resume()
        let previous = heartbeatTimer.withLock { old in
            defer { old = HeartbeatTimer(source: timer) }
            return old
        }
        previous?.source.cancel()
    }

    /// Answers waiting long-polls (304) and finishes every event stream; new ones are refused with 503. Call before
    /// `HTTPServer.shutdown(deadline:)` so that the drain does not wait on streams.
    public func shutdown() {
        let timer = heartbeatTimer.withLock { timer in
            defer { timer = nil }
            return timer
        }
        timer?.source.cancel()
        service.registry.close()
    }

    /// Waits until every admin request already accepted has finished its store work, so that the process can exit
    /// without cutting a write short. Call after `HTTPServer.shutdown(deadline:)`.
    public func finishStoreWork() {
        storeWork.sync {}
    }

    /// Answers one request: from memory on the calling (loop) thread, or on the store queue when it needs SQLite.
    public func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        if answerDocumentQuickly(request, responder) { return }
        let exchange = Exchange(request: request, responder: responder, metrics: metrics)
        if Self.touchesStore(request.path) {
            storeWork.async { [self] in run(exchange) }
        } else {
            run(exchange)
        }
    }

    /// Whether answering may read or write SQLite: the admin API and old versions.
    static func touchesStore(_ path: String) -> Bool {
        // Byte-wise: `String.contains(_:)` on a string resolves to Foundation's, which bridged through NSString
        // and cost 6 % of the serving profile.
        var path = path
        return path.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            let admin: StaticString = "/v1/admin/"
            if bytes.count >= admin.utf8CodeUnitCount && memcmp(base, admin.utf8Start, admin.utf8CodeUnitCount) == 0 {
                return true
            }
            let needle: StaticString = "/versions/"
            let count = needle.utf8CodeUnitCount
            guard bytes.count >= count else { return false }
            return (0...(bytes.count - count)).contains { start in memcmp(base + start, needle.utf8Start, count) == 0 }
        }
    }

    private func run(_ exchange: Exchange) {
        do {
            if let response = try route(exchange) { exchange.respond(response) }
        } catch let error as ServiceError {
            exchange.respond(JSONResponse.error(error))
        } catch {
            exchange.respond(JSONResponse.error(.storage(error)))
        }
    }

    /// Finds the route; returns the response, or `nil` when the route answers later (long-poll, stream).
    private func route(_ exchange: Exchange) throws -> HTTPResponse? {
        let request = exchange.request
        // The route nearly every request takes, matched without splitting the path into an array of strings.
        if let set = Self.documentSet(request.path) { return try documentRoute(exchange, set: set) }
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        switch segments.first {
        case "healthz" where segments.count == 1:
            try exchange.match(.health)
            return JSONResponse.object { writer in
                writer.member("status", "ok")
                writer.member("sets", service.states().count)
            }
        case "metrics" where segments.count == 1:
            try exchange.match(.metrics)
            try requireAdmin(request)
            return metricsResponse()
        case "v1" where segments.count >= 2 && segments[1] == "sets":
            return try clientRoute(exchange, Array(segments.dropFirst(2)))
        case "v1" where segments.count >= 2 && segments[1] == "admin":
            let principal = try requireAdmin(request)
            return try adminRoute(exchange, Array(segments.dropFirst(2)), actor: principal.name)
        case "ofrep"
        where segments.count >= 4 && segments[1] == "v1" && segments[2] == "evaluate"
            && segments[3] == "flags":
            return try ofrepRoute(exchange, Array(segments.dropFirst(4)))
        default:
            throw ServiceError.notFound("no route \(request.path)")
        }
    }

    /// The `{set}` of a path that is exactly `/v1/sets/{set}`; nil for any other path (which the general router
    /// handles, with the same result for this route's odd spellings such as a trailing slash).
    static func documentSet(_ path: String) -> String? {
        var path = path
        return path.withUTF8 { bytes -> String? in
            let prefix: StaticString = "/v1/sets/"
            let count = prefix.utf8CodeUnitCount
            guard bytes.count > count, let base = bytes.baseAddress, memcmp(base, prefix.utf8Start, count) == 0
            else { return nil }
            let rest = UnsafeBufferPointer(rebasing: bytes[count...])
            guard !rest.contains(ASCII.slash) else { return nil }
            return String(decoding: rest, as: UTF8.self)
        }
    }

    /// The principal of the request's token: 401 without a valid one, or with more than one `Authorization` field.
    @discardableResult
    func authenticate(_ request: HTTPRequest) throws -> Principal {
        // Two fields may name two principals (one added by a proxy, say); answering as the first would let the order
        // of fields decide who the caller is.
        // The header is read as bytes: a keep-alive client's repeated header is recognised without a `String`.
        let headers = request.headers
        let connection = request.connection
        var count = 0
        var remembered: Principal?
        headers.forEachValue(named: "Authorization") { value in
            count += 1
            if count == 1, let connection { remembered = tokens.rememberedPrincipal(value, connection: connection) }
            return true
        }
        guard count <= 1 else { throw ServiceError.unauthorized("send one Authorization header, not several") }
        if let remembered { return remembered }
        return try tokens.authenticate(headers["Authorization"], connection: connection)
    }

    /// The admin principal of the request: 401 without a valid token, 403 for an SDK key.
    @discardableResult
    func requireAdmin(_ request: HTTPRequest) throws -> Principal {
        let principal = try authenticate(request)
        guard case .admin = principal else {
            throw ServiceError.forbidden("SDK keys are read-only: this route needs an admin token")
        }
        return principal
    }

    /// The Prometheus text of `/metrics`.
    private func metricsResponse() -> HTTPResponse {
        var text = ""
        metrics.render(into: &text)
        text += "# HELP flagserver_set_version Current version per flag set.\n"
        text += "# TYPE flagserver_set_version gauge\n"
        for state in service.states() {
            text += "flagserver_set_version{set=\"\(ServerMetrics.escape(state.name))\"} \(state.version)\n"
        }
        text += "# HELP flagserver_writes_total Writes that made a version.\n"
        text += "# TYPE flagserver_writes_total counter\n"
        text += "flagserver_writes_total \(service.counters.writes.load(ordering: .relaxed))\n"
        text += "# HELP flagserver_write_rejections_total Writes rejected, by reason.\n"
        text += "# TYPE flagserver_write_rejections_total counter\n"
        text += "flagserver_write_rejections_total{reason=\"invalid\"} "
        text += "\(service.counters.invalid.load(ordering: .relaxed))\n"
        text += "flagserver_write_rejections_total{reason=\"conflict\"} "
        text += "\(service.counters.conflicts.load(ordering: .relaxed))\n"
        if let engine = engineMetrics.withLock({ $0 })?() {
            text += "# HELP flagserver_open_connections Connections open now.\n"
            text += "# TYPE flagserver_open_connections gauge\n"
            text += "flagserver_open_connections \(engine.openConnections)\n"
            text += "# HELP flagserver_http_rejections_total Requests or connections the HTTP engine refused.\n"
            text += "# TYPE flagserver_http_rejections_total counter\n"
            for (reason, count) in engine.rejections.sorted(by: { $0.key < $1.key }) {
                text += "flagserver_http_rejections_total{reason=\"\(ServerMetrics.escape(reason))\"} \(count)\n"
            }
        }
        return HTTPResponse(
            status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
            body: Array(text.utf8))
    }
}

/// A timer source (heartbeats, long-poll deadlines).
// @unchecked: dispatch sources are thread-safe objects (cancel may be called from any thread); the type is only
// not annotated Sendable.
final class HeartbeatTimer: @unchecked Sendable {
    let source: DispatchSourceTimer

    init(source: DispatchSourceTimer) {
        self.source = source
    }
}

extension Duration {
    /// The duration in seconds, for Dispatch.
    var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
