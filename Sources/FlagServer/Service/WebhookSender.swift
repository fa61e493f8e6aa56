import FlagAPI
import FlagLock
import FlagSigning
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends the outbox's deliveries (docs/webhooks.md), on every server that shares the store: each pass leases the
/// oldest due delivery of each hook not in flight and posts them; each outcome is recorded when its answer comes,
/// so that a hook whose receiver hangs holds back no other. A pass runs after each write on this server and each
/// outcome (`wake()`), and at least once per `interval`.
///
/// - 2xx is delivered; 410 disables the hook; anything else, a timeout or a refused connection is tried again after
///   1 s, doubling up to an hour, until the event is a day old, when it is marked failed.
/// - Redirects are not followed, and the host's addresses are checked before each attempt.
/// - A server killed mid-post leaves its lease to run out; another server then posts the same event again (with the
///   same `webhook-id`), so delivery is at least once.
package final class WebhookSender: Sendable {
    /// How the sender behaves; the defaults are the documented ones.
    package struct Settings: Sendable {
        /// Posting to loopback, private and link-local addresses is allowed (`--allow-private-webhooks`).
        package var allowPrivate = false
        /// Where people reach the dashboard, for the links of Slack messages.
        package var publicURL: String?
        /// The longest wait between passes.
        package var interval: Duration = .seconds(1)
        /// How long one attempt may take.
        package var timeout: Duration = .seconds(5)
        /// How long a lease lasts: longer than an attempt, so that only a dead server's leases run out.
        package var lease: Duration = .seconds(30)
        /// The first retry's delay, doubled at each failure up to `maxBackoff`.
        package var firstBackoff: Duration = .seconds(1)
        package var maxBackoff: Duration = .seconds(3600)
        /// How long an event is retried before it is marked failed.
        package var retryWindow: Duration = .seconds(24 * 3600)
        /// How long delivered and failed deliveries are kept.
        package var retention: Duration = .seconds(7 * 24 * 3600)
        /// How often the sets are looked at for flags whose expiry has passed.
        package var expiryCheck: Duration = .seconds(10)
        /// How far back an expiry is still told of: a server that starts (or a hook made) later does not announce
        /// every flag that expired long ago.
        package var expiryWindow: Duration = .seconds(24 * 3600)
        /// The most deliveries in flight at once.
        package var batch = 32

        package init() {}
    }

    /// Counters and gauges for `/metrics`.
    struct Counts: Sendable {
        var delivered = 0
        var retried = 0
        var failed = 0
        var disabled = 0
        /// Pending deliveries and the oldest one's time, by hook, as of the last summary.
        var pending: [String: PendingSummary] = [:]
        var summarizedAt: Date?
        var prunedAt: Date?
        var expiriesCheckedAt: Date?
    }

    let store: WebhookStore
    let keyEncryptionKey: KeyEncryptionKey
    let clock: ServerClock
    let settings: Settings
    let log: @Sendable (String) -> Void
    /// The sets this server serves now, for their flags' expiries.
    let sets: @Sendable () -> [SetState]
    /// This server's name on the leases it takes.
    let owner: String
    let counts = Locked(Counts())
    private let session: URLSession
    private let signal = DispatchSemaphore(value: 0)
    private let running = Locked<(started: Bool, stopped: Bool)>((false, false))
    private let finished = DispatchSemaphore(value: 0)
    /// The posts under way: how many, and a group that `stop()` waits on.
    private let inFlight = Locked(0)
    private let posts = DispatchGroup()

    package init(
        store: WebhookStore, keyEncryptionKey: KeyEncryptionKey, clock: ServerClock, settings: Settings,
        sets: @escaping @Sendable () -> [SetState], log: @escaping @Sendable (String) -> Void
    ) {
        self.store = store
        self.sets = sets
        self.keyEncryptionKey = keyEncryptionKey
        self.clock = clock
        self.settings = settings
        self.log = log
        self.owner = "\(ProcessInfo.processInfo.hostName):\(getpid()):\(WebhookEvents.newID().suffix(8))"
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = settings.timeout.timeInterval
        configuration.timeoutIntervalForResource = settings.timeout.timeInterval
        configuration.httpMaximumConnectionsPerHost = 8
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        self.session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    /// Starts the passes on a thread of their own.
    package func start() {
        let first = running.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.stopped
        }
        guard first else { return }
        let thread = Thread { [self] in
            while !running.withLock({ $0.stopped }) {
                pass()
                _ = signal.wait(timeout: .now() + settings.interval.timeInterval)
            }
            finished.signal()
        }
        thread.name = "flagserver.webhooks"
        thread.start()
    }

    /// Runs a pass soon: a write on this server may have queued events.
    package func wake() { signal.signal() }

    /// Ends the passes and cancels the posts under way, without recording them: their leases run out, and the
    /// events go again from the next start or from another server.
    package func stop() {
        let wasRunning = running.withLock { state -> Bool in
            defer { state.stopped = true }
            return state.started && !state.stopped
        }
        guard wasRunning else { return }
        signal.signal()
        finished.wait()
        session.invalidateAndCancel()
        // A cancelled post completes at once; the bound is for a transport that never calls back.
        _ = posts.wait(timeout: .now() + settings.timeout.timeInterval)
    }

    /// One pass: leases what is due (up to `batch` in flight), starts posting it, and now and then notes expired
    /// flags, summarizes the pending deliveries for `/metrics` and prunes old ones. Returns how many deliveries it
    /// started.
    @discardableResult
    package func pass() -> Int {
        let now = clock.now()
        let room = settings.batch - inFlight.withLock { $0 }
        var leased: [LeasedDelivery] = []
        if room > 0 {
            do {
                leased = try store.lease(
                    owner: owner, now: now, until: now.addingTimeInterval(settings.lease.timeInterval), limit: room)
            } catch {
                log("webhooks: leasing deliveries failed (tried again in \(settings.interval)): \(error)")
            }
        }
        for delivery in leased {
            inFlight.withLock { $0 += 1 }
            posts.enter()
            attempt(delivery) { [self] outcome in
                defer {
                    inFlight.withLock { $0 -= 1 }
                    posts.leave()
                }
                guard !running.withLock({ $0.stopped }) else { return }
                record(delivery, outcome)
                // The hook's next event may be due now.
                wake()
            }
        }
        housekeeping()
        return leased.count
    }

    /// Records one outcome, with its next attempt's time after a failure.
    private func record(_ delivery: LeasedDelivery, _ outcome: DeliveryOutcome) {
        let now = clock.now()
        let exponent = min(delivery.attempts, 30)
        let backoff = min(
            settings.firstBackoff.timeInterval * Double(1 << exponent), settings.maxBackoff.timeInterval)
        let giveUpAt = delivery.createdAt.addingTimeInterval(settings.retryWindow.timeInterval)
        let next = now.addingTimeInterval(backoff)
        // Counted before the store shows it, so that whoever reads the outcome in the store finds it in /metrics.
        counts.withLock { counts in
            switch outcome {
            case .delivered: counts.delivered += 1
            case .gone: counts.disabled += 1
            case .retry where next > giveUpAt: counts.failed += 1
            case .retry: counts.retried += 1
            }
        }
        do {
            try store.finish(delivery, owner: owner, outcome, now: now, next: next, giveUpAt: giveUpAt)
        } catch {
            log("webhooks: recording delivery \(delivery.eventID) to \(delivery.hook.name) failed: \(error)")
            return
        }
        switch outcome {
        case .delivered: break
        case .gone:
            log("webhooks: \(delivery.hook.name) answered 410 Gone; the webhook is disabled")
        case .retry(_, let reason) where next > giveUpAt:
            log("webhooks: gave up event \(delivery.eventID) to \(delivery.hook.name) after a day: \(reason)")
        case .retry: break
        }
    }

    /// Posts one delivery and calls `done` with the outcome; never throws, never follows a redirect.
    private func attempt(_ delivery: LeasedDelivery, done: @escaping @Sendable (DeliveryOutcome) -> Void) {
        let request: URLRequest
        do {
            request = try self.request(delivery)
        } catch let refusal as WebhookAddress.Refusal {
            return done(.retry(status: nil, error: refusal.message))
        } catch {
            return done(.retry(status: nil, error: "the delivery could not be signed: \(error)"))
        }
        session.dataTask(with: request) { _, response, error in
            if let response = response as? HTTPURLResponse {
                let status = response.statusCode
                if (200..<300).contains(status) { return done(.delivered(status: status)) }
                if status == 410 { return done(.gone) }
                let what = (300..<400).contains(status) ? "a redirect, which is not followed" : "not a 2xx"
                return done(.retry(status: status, error: "the receiver answered HTTP \(status), \(what)"))
            }
            let reason = (error as? URLError).map { Self.describe($0) } ?? "no answer"
            done(.retry(status: nil, error: reason))
        }.resume()
    }

    /// The signed request of one attempt. For `http` it goes to the address just checked, with the URL's host in
    /// `Host`, so that the name cannot resolve elsewhere between the check and the connection; `https` needs the
    /// name for its certificate and connects to what the system's resolver answers then.
    func request(_ delivery: LeasedDelivery) throws -> URLRequest {
        let address = try WebhookAddress(delivery.hook.url)
        let addresses = try address.resolve(allowPrivate: settings.allowPrivate)
        let now = clock.now()
        var secrets = [
            try WebhookSecret(sealed: delivery.hook.sealedSecret, with: keyEncryptionKey, hook: delivery.hook.name)
        ]
        if let previous = delivery.hook.previousSealedSecret, let until = delivery.hook.previousUntil, until > now {
            secrets.append(try WebhookSecret(sealed: previous, with: keyEncryptionKey, hook: delivery.hook.name))
        }
        let message = try WebhookMessage(delivery, secrets: secrets, now: now, publicURL: settings.publicURL)
        var url = address.url
        var hostHeader: String?
        if url.scheme?.lowercased() == "http", let first = addresses.first,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        {
            hostHeader =
                components.port.map { "\(components.percentEncodedHost ?? address.host):\($0)" }
                ?? components.percentEncodedHost
            components.host = first.isIPv4 ? first.description : "[\(first.description)]"
            url = components.url ?? url
        }
        var request = URLRequest(url: url, timeoutInterval: settings.timeout.timeInterval)
        request.httpMethod = "POST"
        request.httpBody = Data(message.body)
        for (name, value) in message.headers { request.setValue(value, forHTTPHeaderField: name) }
        if let hostHeader { request.setValue(hostHeader, forHTTPHeaderField: "Host") }
        return request
    }

    /// Every few seconds, the flags whose expiry has passed and the pending deliveries for `/metrics`; every hour,
    /// the pruning of old deliveries.
    private func housekeeping() {
        let now = clock.now()
        let (expiries, summarize, prune) = counts.withLock { counts in
            (
                counts.expiriesCheckedAt.map { now.timeIntervalSince($0) >= settings.expiryCheck.timeInterval } ?? true,
                counts.summarizedAt.map { now.timeIntervalSince($0) >= 5 } ?? true,
                counts.prunedAt.map { now.timeIntervalSince($0) >= 3600 } ?? true
            )
        }
        if expiries {
            do {
                for expiry in Self.expired(in: sets(), now: now, window: settings.expiryWindow) {
                    try store.noteExpiry(expiry)
                }
                counts.withLock { $0.expiriesCheckedAt = now }
            } catch {
                log("webhooks: noting expired flags failed: \(error)")
            }
        }
        if summarize {
            do {
                let hooks = try store.hooks()
                counts.withLock { counts in
                    counts.pending = Dictionary(
                        hooks.map { ($0.hook.name, $0.pending) }, uniquingKeysWith: { first, _ in first })
                    counts.summarizedAt = now
                }
            } catch {
                log("webhooks: reading the pending deliveries failed: \(error)")
            }
        }
        if prune {
            do {
                let removed = try store.prune(finishedBefore: now.addingTimeInterval(-settings.retention.timeInterval))
                if removed > 0 { log("webhooks: pruned \(removed) deliveries finished over a week ago") }
                counts.withLock { $0.prunedAt = now }
            } catch {
                log("webhooks: pruning old deliveries failed: \(error)")
            }
        }
    }

    /// The flags of `states` whose expiry passed within `window` before `now`, archived ones aside.
    static func expired(in states: [SetState], now: Date, window: Duration) -> [FlagExpiry] {
        let since = now.addingTimeInterval(-window.timeInterval)
        return states.flatMap { state in
            state.compiled.flagSet.flags.values.compactMap { flag -> FlagExpiry? in
                guard !flag.archived, let at = flag.expiresAt, at <= now, at > since else { return nil }
                return FlagExpiry(set: state.name, flag: flag.key, expiresAt: at, version: state.version)
            }
        }
        .sorted { ($0.expiresAt, $0.set, $0.flag) < ($1.expiresAt, $1.set, $1.flag) }
    }

    /// A transport failure in words, without the URL (which may hold a secret path).
    static func describe(_ error: URLError) -> String {
        switch error.code {
        case .timedOut: "no answer within the timeout"
        case .cannotConnectToHost: "the connection was refused"
        case .cannotFindHost, .dnsLookupFailed: "the host does not resolve"
        case .networkConnectionLost: "the connection was lost"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            "the TLS handshake failed"
        default: "the request failed (URLError \(error.code.rawValue))"
        }
    }

    /// Writes the sender's counters and gauges for `/metrics`.
    func render(into text: inout MetricsText) {
        let counts = counts.withLock { $0 }
        text.family("flagserver_webhook_deliveries_total", .counter, help: "Webhook delivery attempts by outcome.")
        for (outcome, value) in [
            ("delivered", counts.delivered), ("retried", counts.retried), ("failed", counts.failed),
            ("disabled", counts.disabled),
        ] {
            text.sample("flagserver_webhook_deliveries_total", ["outcome": outcome], value)
        }
        let pending = counts.pending.sorted { $0.key < $1.key }
        text.family("flagserver_webhook_pending", .gauge, help: "Webhook deliveries not made yet, by hook.")
        for (hook, summary) in pending {
            text.sample("flagserver_webhook_pending", ["hook": hook], summary.count)
        }
        text.family(
            "flagserver_webhook_oldest_pending_seconds", .gauge, help: "Age of the oldest pending delivery, by hook.")
        let now = clock.now()
        for (hook, summary) in pending {
            let age = summary.oldest.map { max(0, now.timeIntervalSince($0)) } ?? 0
            text.sample("flagserver_webhook_oldest_pending_seconds", ["hook": hook], age)
        }
    }
}

/// Refuses every redirect: the redirect itself comes back as the answer, which is not a 2xx.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
