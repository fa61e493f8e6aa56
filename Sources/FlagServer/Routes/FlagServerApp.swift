import Dispatch
import FlagCore
import FlagHTTP
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
    package struct Settings: Sendable {
        /// The longest `?wait=` a long-poll may ask for, in seconds; longer asks are cut to it.
        package var longPollMaxSeconds: Int
        /// How often open event streams get a heartbeat comment.
        package var heartbeatInterval: Duration
        /// The most history entries or audit records one request returns.
        package var maxListLimit: Int
        /// How often client telemetry is written to the store.
        package var telemetryFlushInterval: Duration
        /// How often the store is asked for scheduled change requests that are due.
        package var changeSchedulerInterval: Duration
        /// How webhooks are sent.
        package var webhooks = WebhookSender.Settings()

        /// The defaults: 300 s long-polls, a heartbeat every 15 s, lists of at most 1,000, telemetry written every
        /// half second, due changes looked for four times a second.
        package init(
            longPollMaxSeconds: Int = 300, heartbeatInterval: Duration = .seconds(15), maxListLimit: Int = 1000,
            telemetryFlushInterval: Duration = .milliseconds(500),
            changeSchedulerInterval: Duration = .milliseconds(250)
        ) {
            self.changeSchedulerInterval = changeSchedulerInterval
            self.longPollMaxSeconds = longPollMaxSeconds
            self.heartbeatInterval = heartbeatInterval
            self.maxListLimit = maxListLimit
            self.telemetryFlushInterval = telemetryFlushInterval
        }
    }

    /// The flag sets.
    package let service: FlagService
    /// The tokens.
    package let tokens: TokenAuthority
    /// Request counters.
    package let metrics = ServerMetrics()
    let clock: ServerClock
    let settings: Settings
    /// Long-poll timeouts and heartbeats run here, never on a loop thread.
    let timers = DispatchQueue(label: "flagserver.timers")
    /// Requests that wait on SQLite (admin reads and writes, old versions) run here, one at a time, so that an
    /// fsync or a large set's validation never stalls the event loop serving documents and streams.
    let storeWork = DispatchQueue(label: "flagserver.store")
    /// When waiting long-polls give up.
    let deadlines: Deadlines
    /// Applies scheduled change requests at their time.
    let scheduler: ChangeScheduler
    /// The prepared answers of each set's current version.
    let answers = AnswerCache()
    /// The dashboard's files, served under `/ui/`.
    let dashboard: DashboardFiles
    /// The streams and long-polls by the token that opened them, ended when it is revoked.
    let watch = TokenWatch()
    /// Sends the webhooks' deliveries; `nil` without a key-encryption key, which their secrets are sealed with.
    package let webhooks: WebhookSender?
    /// The sync with other servers sharing the store, when there are any (PostgreSQL).
    package let replicas: ReplicaSync?
    /// Whether this server has its dashboard to serve under `/ui/`.
    package var servesDashboard: Bool { dashboard.isAvailable }
    /// The route table, compiled once for the process.
    static let router = Router()
    /// `router`, held by the instance so that a request reads it without the lazy global's check.
    let router = FlagServerApp.router
    private let heartbeatTimer = Locked<HeartbeatTimer?>(nil)
    private let usesTimer = Locked<HeartbeatTimer?>(nil)
    private let telemetryTimer = Locked<HeartbeatTimer?>(nil)
    private let engineMetrics = Locked<(@Sendable () -> HTTPServerMetrics)?>(nil)
    /// Minutes the token-uses timer has run, so that it prunes sessions every 60th.
    private let minutesRun = Atomic<Int>(0)

    /// An application over a loaded service and token authority, and the sync of both with other servers sharing
    /// their store, if any.
    package init(
        service: FlagService, tokens: TokenAuthority, clock: ServerClock, settings: Settings = Settings(),
        replicas: ReplicaSync? = nil
    ) {
        self.service = service
        self.tokens = tokens
        self.clock = clock
        self.settings = settings
        self.replicas = replicas
        self.deadlines = Deadlines(queue: timers)
        self.scheduler = ChangeScheduler(service: service, queue: storeWork)
        self.dashboard = .bundled
        self.webhooks = service.keyEncryptionKey.map { key in
            WebhookSender(
                store: service.store.webhooks, keyEncryptionKey: key, clock: clock, settings: settings.webhooks,
                sets: { [service] in service.states() }, log: service.log)
        }
        tokens.onRevoked { [watch] names in watch.end(names) }
    }

    /// The handler to give `HTTPServer`.
    public var handler: HTTPHandler {
        { [self] request, responder in handle(request, responder) }
    }

    /// Starts the stream heartbeats and reads the engine's counters for `/metrics` from `server`.
    public func start(server: HTTPServer?) {
        if let server { engineMetrics.withLock { $0 = { server.metrics } } }
        scheduler.start(every: settings.changeSchedulerInterval, on: timers)
        webhooks?.start()
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
        // When tokens were last used goes to the store once a minute, not on every request; ended dashboard sessions
        // are pruned once an hour.
        let uses = DispatchSource.makeTimerSource(queue: timers)
        uses.schedule(deadline: .now() + 60, repeating: 60)
        uses.setEventHandler { [self] in
            recordTokenUses()
            if minutesRun.add(1, ordering: .relaxed).oldValue % 60 == 0 { pruneEndedSessions() }
        }
        uses.resume()
        usesTimer.withLock { old in
            old?.source.cancel()
            old = HeartbeatTimer(source: uses)
        }
        // Telemetry goes to the store in batches from its own queue, never ahead of an admin write.
        let telemetry = service.telemetry
        let flush = DispatchSource.makeTimerSource(queue: telemetry.queue)
        let every = settings.telemetryFlushInterval.timeInterval
        flush.schedule(deadline: .now() + every, repeating: every)
        flush.setEventHandler { [service] in
            telemetry.flush()
            telemetry.refreshClientGauge(sets: service.states().map(\.name))
        }
        flush.resume()
        telemetryTimer.withLock { old in
            old?.source.cancel()
            old = HeartbeatTimer(source: flush)
        }
    }

    /// Deletes the dashboard sessions that ended over a week ago; a failure is logged, and tried again in an hour.
    private func pruneEndedSessions() {
        do {
            try tokens.pruneEndedSessions()
        } catch {
            service.log("deleting ended dashboard sessions failed: \(error)")
        }
    }

    /// Stores when tokens were last used; a failure is logged, and the uses are kept for the next try.
    private func recordTokenUses() {
        do {
            try tokens.recordUses()
        } catch {
            service.log("recording when tokens were last used failed: \(error)")
        }
    }

    /// Answers waiting long-polls (304) and finishes every event stream; new ones are refused with 503. Call before
    /// `HTTPServer.shutdown(deadline:)` so that the drain does not wait on streams.
    public func shutdown() {
        let timer = heartbeatTimer.withLock { timer in
            defer { timer = nil }
            return timer
        }
        timer?.source.cancel()
        for timer in [usesTimer, telemetryTimer] {
            timer.withLock { timer in
                timer?.source.cancel()
                timer = nil
            }
        }
        scheduler.stop()
        webhooks?.stop()
        replicas?.stop()
        service.registry.close()
    }

    /// Waits until every admin request already accepted has finished its store work, so that the process can exit
    /// without cutting a write short. Call after `HTTPServer.shutdown(deadline:)`.
    public func finishStoreWork() {
        storeWork.sync {}
        recordTokenUses()
        service.telemetry.flushNow()
    }

    /// Answers one request: resolves its route, checks the caller against the route's `Access` (and a session's
    /// person's own token where the route asks for it), then runs the handler on the calling (loop) thread or on
    /// the store queue, as the route's entry says.
    package func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        switch router.match(method: request.method, path: request.path) {
        case .notFound:
            let exchange = Exchange(request: request, responder: responder, route: nil, metrics: metrics)
            exchange.respond(
                errorResponse(ServiceError.notFound("no route \(request.path)", subject: .route), exchange))
        case .wrongMethod(let endpoint, let parameters):
            // The caller is checked as the path's routes would check it, so that a caller without the right token
            // learns nothing of which methods a path has. A 405's label would carry whatever method the client
            // invented: it is counted as `unmatched`.
            let exchange = Exchange(request: request, responder: responder, route: nil, metrics: metrics)
            var memo = request.connection.flatMap(ConnectionMemo.of)
            do {
                let generation = tokens.generation.load(ordering: .acquiring)
                _ = try authorize(request, endpoint.spec.access, parameters, memo: &memo, generation: generation)
                throw ServiceError.methodNotAllowed(request.method, request.path)
            } catch {
                exchange.respond(errorResponse(error, exchange))
            }
        case .route(let endpoint, let parameters):
            let exchange = Exchange(request: request, responder: responder, route: endpoint.route, metrics: metrics)
            var memo = request.connection.flatMap(ConnectionMemo.of)
            let call: Call
            do {
                // Read before the token is looked up: a revocation after this moves it (`watchToken` relies on it).
                let generation = tokens.generation.load(ordering: .acquiring)
                let principal = try authorize(
                    request, endpoint.spec.access, parameters, memo: &memo, generation: generation)
                if endpoint.spec.reauthenticatesSessions { try confirmPerson(request, principal) }
                call = Call(
                    exchange: exchange, parameters: parameters, principal: principal, memo: memo,
                    generation: generation)
            } catch {
                exchange.respond(errorResponse(error, exchange))
                return
            }
            switch endpoint.spec.executor {
            case .loop: run(call, endpoint.spec.handler)
            case .store:
                // A write's fan-out starts once it has answered (`SetRegistry.answeringFirst`).
                // A write may have queued webhook events: the sender looks at once rather than at its next pass.
                storeWork.async { [self] in
                    service.registry.answeringFirst { run(call, endpoint.spec.handler) }
                    if request.method != "GET" { webhooks?.wake() }
                }
            case .telemetry: service.telemetry.queue.async { [self] in run(call, endpoint.spec.handler) }
            }
        }
    }

    private func run(_ call: Call, _ handler: RouteSpec.Handler) {
        do {
            if let response = try handler(self, call) { call.exchange.respond(response) }
        } catch {
            call.exchange.respond(errorResponse(error, call.exchange))
        }
    }

    /// The error answer for anything a route throws (a store failure is a 500): SPEC §4's, or OFREP's on its paths.
    func errorResponse(_ error: any Error, _ exchange: Exchange) -> HTTPResponse {
        Self.errorResponse(error as? ServiceError ?? .storage(error), path: exchange.request.path)
    }

    /// `GET /healthz`: 200 while the server serves flags, `"degraded"` with the reason while its store cannot be
    /// reached (reads go on from memory, so a load balancer should keep sending them).
    func health() -> HTTPResponse {
        JSONResponse.object { writer in
            switch service.store.health {
            case .up:
                writer.member("status", "ok")
            case .down(let reason):
                writer.member("status", "degraded")
                writer.member("reason", reason)
            }
            writer.member("sets", service.states().count)
        }
    }

    /// The Prometheus text of `/metrics`.
    func metricsResponse() -> HTTPResponse {
        var text = MetricsText()
        metrics.render(into: &text)
        text.family("flagserver_set_version", .gauge, help: "Current version per flag set.")
        for state in service.states() {
            text.sample("flagserver_set_version", ["set": state.name], state.version)
        }
        text.family("flagserver_writes_total", .counter, help: "Writes that made a version.")
        text.sample("flagserver_writes_total", service.counters.writes.load(ordering: .relaxed))
        text.family("flagserver_write_rejections_total", .counter, help: "Writes rejected, by reason.")
        text.sample(
            "flagserver_write_rejections_total", ["reason": "invalid"],
            service.counters.invalid.load(ordering: .relaxed))
        text.sample(
            "flagserver_write_rejections_total", ["reason": "conflict"],
            service.counters.conflicts.load(ordering: .relaxed))
        renderTelemetry(into: &text)
        scheduler.render(into: &text)
        webhooks?.render(into: &text)
        text.family("flagserver_store_up", .gauge, help: "Whether the store answered its last call (1) or not (0).")
        text.sample("flagserver_store_up", service.store.health == .up ? 1 : 0)
        if let replicas { Self.render(replicas.status, into: &text) }
        if let engine = engineMetrics.withLock({ $0 })?() {
            text.family("flagserver_open_connections", .gauge, help: "Connections open now.")
            text.sample("flagserver_open_connections", engine.openConnections)
            text.family(
                "flagserver_http_rejections_total", .counter, help: "Requests or connections the HTTP engine refused.")
            for (reason, count) in engine.rejections.sorted(by: { $0.key < $1.key }) {
                text.sample("flagserver_http_rejections_total", ["reason": reason], count)
            }
        }
        return HTTPResponse(
            status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
            body: Array(text.text.utf8))
    }
}

extension FlagServerApp {
    /// The metrics of client telemetry (docs/telemetry.md).
    func renderTelemetry(into text: inout MetricsText) {
        let telemetry = service.telemetry
        text.family(
            "flagserver_clients", .gauge,
            help: "Active client instances (reported in the last 5 minutes) per set and applied version, across "
                + "every server sharing the store; refreshed every 10 s.")
        for (set, versions) in telemetry.clientsByVersion.sorted(by: { $0.key < $1.key }) {
            for (version, count) in versions.sorted(by: { ($0.key ?? 0) < ($1.key ?? 0) }) {
                text.sample("flagserver_clients", ["set": set, "version": version.map(String.init) ?? "none"], count)
            }
        }
        text.family(
            "flagserver_evaluations_total", .counter, help: "Evaluations clients of this server reported, per set.")
        for (set, count) in telemetry.evaluations.sorted(by: { $0.key < $1.key }) {
            text.sample("flagserver_evaluations_total", ["set": set], count)
        }
        text.family("flagserver_telemetry_reports_total", .counter, help: "Client reports this server took.")
        text.sample("flagserver_telemetry_reports_total", telemetry.accepted.load(ordering: .relaxed))
        text.family(
            "flagserver_telemetry_dropped_total", .counter, help: "Reports refused, or parts dropped, by reason.")
        let dropped = telemetry.dropped
        for reason in ClientTelemetry.DropReason.allCases {
            text.sample("flagserver_telemetry_dropped_total", ["reason": reason.rawValue], dropped[reason] ?? 0)
        }
        text.family(
            "flagserver_telemetry_instances", .gauge, help: "Client instances this server tracks (issued or reported).")
        text.sample("flagserver_telemetry_instances", telemetry.trackedInstances)
    }

    /// The metrics of the sync with other servers sharing the store.
    static func render(_ status: ReplicaSync.Status, into text: inout MetricsText) {
        text.family(
            "flagserver_set_version_lag", .gauge,
            help: "Versions the store was ahead of this server at the last check.")
        for (set, lag) in status.lag.sorted(by: { $0.key < $1.key }) {
            text.sample("flagserver_set_version_lag", ["set": set], lag)
        }
        text.family(
            "flagserver_replica_notifications_total", .counter, help: "Change notifications received from the store.")
        text.sample("flagserver_replica_notifications_total", status.notifications)
        text.family(
            "flagserver_replica_catchups_total", .counter, help: "Versions or sets loaded that other servers wrote.")
        text.sample("flagserver_replica_catchups_total", status.catchUps)
        text.family(
            "flagserver_replica_listening", .gauge, help: "Whether the connection listening for changes is up.")
        text.sample("flagserver_replica_listening", status.listening ? 1 : 0)
        text.family(
            "flagserver_postgres_notification_queue_usage", .gauge,
            help: "pg_notification_queue_usage(), from 0 to 1.")
        text.sample("flagserver_postgres_notification_queue_usage", status.notificationQueueUsage)
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
