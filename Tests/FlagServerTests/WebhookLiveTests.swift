import FlagAPI
import FlagCore
import FlagHTTP
import FlagLock
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// A receiver of webhooks on the real HTTP engine and a port of its own: it records every request and answers with
/// the status `answer` gives for the request's position (0 for the first).
final class WebhookReceiver: Sendable {
    struct Received: Sendable {
        var id: String
        var timestamp: String
        var signature: String
        var body: [UInt8]
        var host: String?
        var at: ContinuousClock.Instant

        var event: WebhookEvent? { try? WebhookEvent.decode(answer: body) }
    }

    private let received = Locked<[Received]>([])
    private let live: LiveHTTPServer

    init(answer: @escaping @Sendable (Int) -> Int = { _ in 204 }) throws {
        let received = received
        live = try LiveHTTPServer(
            configuration: LiveHTTPServer.configuration { $0.loopCount = 1 },
            handler: { request, responder in
                let position = received.withLock { list in
                    list.append(
                        Received(
                            id: request.headers["webhook-id"] ?? "",
                            timestamp: request.headers["webhook-timestamp"] ?? "",
                            signature: request.headers["webhook-signature"] ?? "", body: request.body,
                            host: request.headers["host"], at: ContinuousClock.now))
                    return list.count - 1
                }
                let status = answer(position)
                var headers: HTTPHeaders = [:]
                if (300..<400).contains(status) { headers.add(name: "Location", value: "http://127.0.0.1:9/elsewhere") }
                responder.respond(HTTPResponse(status: status, headers: headers))
            })
    }

    var port: Int { live.port }
    var url: String { "http://127.0.0.1:\(port)/hooks" }
    var requests: [Received] { received.withLock { $0 } }

    func stop() { live.stop(deadline: .milliseconds(100)) }
}

/// Webhooks end to end: the app's sender posting to a receiver over real sockets, with quick retries.
@Suite("Webhooks against a live receiver", .live)
struct WebhookLiveTests {
    static var settings: FlagServerApp.Settings {
        var settings = FlagServerApp.Settings()
        settings.webhooks.allowPrivate = true
        settings.webhooks.interval = .milliseconds(50)
        settings.webhooks.firstBackoff = .milliseconds(100)
        settings.webhooks.maxBackoff = .milliseconds(400)
        settings.webhooks.expiryCheck = .milliseconds(50)
        return settings
    }

    /// Runs `body` with a started harness (its sender running) and a hook named `chat` posting to `receiver`;
    /// `body` gets the hook's secret.
    func withHook(
        _ receiver: WebhookReceiver, events: [String]? = nil,
        _ body: (AppHarness, WebhookSecret) async throws -> Void
    ) async throws {
        try await withRunningHarness { harness in
            harness.app.start(server: nil)
            defer { harness.app.shutdown() }
            let created = try harness.call(
                API.createWebhook, PathParameters(),
                CreateWebhookRequest(name: "chat", url: receiver.url, events: events))
            try await body(harness, try WebhookSecret(text: created.secret))
        }
    }

    /// `/metrics` counts the outcomes, and shows the hook with nothing pending once the sender has summarized it.
    static func checkMetrics(_ harness: AppHarness, delivered: Int, retried: Int) {
        let text = (try? harness.send("GET", "/metrics").text) ?? ""
        #expect(text.contains("flagserver_webhook_deliveries_total{outcome=\"delivered\"} \(delivered)\n"))
        #expect(text.contains("flagserver_webhook_deliveries_total{outcome=\"retried\"} \(retried)\n"))
        #expect(text.contains("# TYPE flagserver_webhook_pending gauge\n"))
        #expect(text.contains("# TYPE flagserver_webhook_oldest_pending_seconds gauge\n"))
    }

    /// The hook's deliveries once none is pending: the receiver may have answered before the sender recorded it.
    static func settled(_ harness: AppHarness) async throws -> [WebhookDeliveryInfo] {
        var deliveries: [WebhookDeliveryInfo] = []
        try await eventually("every outcome recorded", timeout: .patience) {
            deliveries = (try? harness.call(API.getWebhook, PathParameters(name: "chat"), NoRequest()).deliveries) ?? []
            return !deliveries.isEmpty && deliveries.allSatisfy { $0.state != "pending" }
        }
        return deliveries
    }

    static func kill(_ harness: AppHarness, _ flag: String = "new-checkout") throws {
        #expect(try harness.send("POST", "/v1/admin/sets/ios-prod/flags/\(flag)/kill?reason=errors").status == 200)
    }

    static func restore(_ harness: AppHarness, _ flag: String = "new-checkout") throws {
        #expect(try harness.send("POST", "/v1/admin/sets/ios-prod/flags/\(flag)/restore").status == 200)
    }

    /// What the receiver got, verified as a Standard Webhooks receiver does: the signature over `id.timestamp.body`.
    static func verified(_ received: WebhookReceiver.Received, _ secret: WebhookSecret) throws -> Bool {
        let timestamp = try #require(Int(received.timestamp))
        let expected = try secret.signature(id: received.id, timestamp: timestamp, body: received.body)
        return received.signature.split(separator: " ").contains { $0 == expected }
    }

    @Test func aKillIsDeliveredOnceSignedWithWhatChanged() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        try await withHook(receiver) { harness, secret in
            try Self.kill(harness)
            try await eventually("the kill delivered", timeout: .patience) { !receiver.requests.isEmpty }
            try await Task.sleep(for: .milliseconds(300))
            let requests = receiver.requests
            #expect(requests.count == 1)
            let kill = try #require(requests.first)
            #expect(try Self.verified(kill, secret))
            #expect(kill.id.hasPrefix("msg_"))
            // Sent to the address checked, with the URL's host and port in Host.
            #expect(kill.host == "127.0.0.1:\(receiver.port)")
            let event = try #require(kill.event)
            #expect(event.type == "version.created")
            #expect(event.data.set == "ios-prod" && event.data.action == "flag.kill" && event.data.reason == "errors")
            #expect(event.data.flags == ["new-checkout"] && event.data.actor == "root")
            #expect(event.data.version == harness.app.service.state("ios-prod")?.version)
            #expect(!String(decoding: kill.body, as: UTF8.self).contains(harness.admin))
            let deliveries = try await Self.settled(harness)
            #expect(deliveries.map(\.state) == ["delivered"])
            #expect(deliveries.first?.id == kill.id && deliveries.first?.lastStatus == 204)
        }
    }

    @Test func aReceiverThatFailsThreeTimesGetsTheEventOnTheFourthTryAndNothingOvertakesIt() async throws {
        let receiver = try WebhookReceiver { position in position < 3 ? 500 : 200 }
        defer { receiver.stop() }
        try await withHook(receiver) { harness, secret in
            defer { Self.checkMetrics(harness, delivered: 2, retried: 3) }
            try Self.kill(harness)
            try Self.restore(harness)
            try await eventually("both delivered", timeout: .patience) { receiver.requests.count >= 5 }
            let requests = receiver.requests
            #expect(requests.count == 5)
            let ids = requests.map(\.id)
            #expect(Set(ids.prefix(4)).count == 1)  // the kill, four times, with the same id
            #expect(ids[4] != ids[0])
            #expect(
                requests.map { $0.event?.data.action } == Array(repeating: "flag.kill", count: 4) + ["flag.restore"])
            for request in requests { #expect(try Self.verified(request, secret)) }
            #expect(try await Self.settled(harness).map(\.attempts) == [1, 4])
        }
    }

    @Test func aReceiverDownForAWhileGetsEverythingAfterwardsInOrder() async throws {
        // A port that refuses connections until the receiver starts on it.
        let placeholder = try WebhookReceiver()
        let port = placeholder.port
        placeholder.stop()
        try await withRunningHarness { harness in
            harness.app.start(server: nil)
            defer { harness.app.shutdown() }
            _ = try harness.call(
                API.createWebhook, PathParameters(),
                CreateWebhookRequest(name: "chat", url: "http://127.0.0.1:\(port)/hooks"))
            for _ in 0..<3 {
                try Self.kill(harness)
                try Self.restore(harness)
            }
            try await eventually("a refused attempt recorded", timeout: .patience) {
                let shown = try? harness.call(API.getWebhook, PathParameters(name: "chat"), NoRequest())
                return shown?.deliveries.last?.lastError == "the connection was refused"
            }
            var configuration = LiveHTTPServer.configuration { $0.loopCount = 1 }
            configuration.port = port
            let received = Locked<[String]>([])
            let receiver = try LiveHTTPServer(configuration: configuration) { request, responder in
                received.withLock { $0.append(request.headers["webhook-id"] ?? "") }
                responder.respond(HTTPResponse(status: 200))
            }
            defer { receiver.stop() }
            try await eventually("all six delivered", timeout: .patience) { received.withLock { $0.count } >= 6 }
            let deliveries = try await Self.settled(harness)
            // Newest first in the answer; the receiver got them oldest first, each once.
            #expect(received.withLock { $0 } == deliveries.reversed().map(\.id))
            #expect(deliveries.allSatisfy { $0.state == "delivered" })
        }
    }

    @Test func a410DisablesTheHookAndARedirectIsNotFollowed() async throws {
        let receiver = try WebhookReceiver { position in position == 0 ? 302 : 410 }
        defer { receiver.stop() }
        try await withHook(receiver) { harness, _ in
            try Self.kill(harness)
            try await eventually("disabled", timeout: .patience) {
                let shown = try? harness.call(API.getWebhook, PathParameters(name: "chat"), NoRequest())
                return shown?.webhook.disabledAt != nil
            }
            #expect(receiver.requests.count == 2)  // the redirect was retried here, not followed
            let shown = try harness.call(API.getWebhook, PathParameters(name: "chat"), NoRequest())
            #expect(shown.deliveries.first?.state == "failed" && shown.deliveries.first?.lastStatus == 410)
            #expect(shown.webhook.disabledReason?.contains("410") == true)
            try Self.restore(harness)
            try await Task.sleep(for: .milliseconds(300))
            #expect(receiver.requests.count == 2)
            #expect(
                try harness.call(API.getWebhook, PathParameters(name: "chat"), NoRequest())
                    .deliveries.count == 1)
        }
    }

    @Test func aRotatedSecretAndTheOneBeforeBothSignForADay() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        try await withHook(receiver) { harness, old in
            let rotated = try harness.call(API.rotateWebhookSecret, PathParameters(name: "chat"), ChangeRequest())
            let new = try WebhookSecret(text: rotated.secret)
            let test = try harness.call(API.testWebhook, PathParameters(name: "chat"), ChangeRequest())
            try await eventually("the test delivered", timeout: .patience) { !receiver.requests.isEmpty }
            let received = try #require(receiver.requests.first)
            #expect(received.id == test.id && received.event?.type == "webhook.test")
            #expect(received.signature.split(separator: " ").count == 2)
            #expect(try Self.verified(received, new) && Self.verified(received, old))
            // A day later only the new one signs.
            harness.clock.advance(seconds: 24 * 3600 + 1)
            _ = try harness.call(API.testWebhook, PathParameters(name: "chat"), ChangeRequest())
            try await eventually("the second test delivered", timeout: .patience) { receiver.requests.count == 2 }
            let later = receiver.requests[1]
            #expect(later.signature.split(separator: " ").count == 1)
            #expect(try Self.verified(later, new) && !Self.verified(later, old))
        }
    }

    @Test func aFlagsExpiryIsToldOfOnce() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        try await withHook(receiver, events: ["flag.expired"]) { harness, secret in
            let at = ISO8601.format(harness.clock.now.addingTimeInterval(1))
            #expect(
                try harness.send(
                    "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/expire", body: #"{"at":"\#(at)","keep":false}"#
                ).status == 200)
            try await eventually("the expiry told of", timeout: .patience) { !receiver.requests.isEmpty }
            try await Task.sleep(for: .milliseconds(300))
            let requests = receiver.requests
            #expect(requests.count == 1)
            let expired = try #require(requests.first)
            #expect(try Self.verified(expired, secret))
            #expect(expired.event?.type == "flag.expired")
            #expect(expired.event?.data.subject == "new-checkout" && expired.event?.data.set == "ios-prod")
        }
    }

    /// A pass that sent something looks again at once: a backlog drains without waiting for writes or the interval.
    @Test func aBacklogDrainsAtOnce() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        var settings = Self.settings
        settings.webhooks.interval = .seconds(30)
        try await withTemporaryDirectory { directory in
            let harness = try AppHarness(directory: directory, clock: TestClock(running: true), settings: settings)
            harness.app.start(server: nil)
            defer { harness.app.shutdown() }
            _ = try harness.call(
                API.createWebhook, PathParameters(), CreateWebhookRequest(name: "chat", url: receiver.url))
            let store = harness.app.service.store.webhooks
            for _ in 0..<20 {
                let event = WebhookEvent(type: "webhook.test", timestamp: harness.clock.now, data: WebhookEventData())
                let audit = AuditEntry(time: harness.clock.now, actor: "test", action: "webhook.test")
                #expect(try store.enqueue(event, id: WebhookEvents.newID(), to: "chat", audit: audit))
            }
            harness.app.webhooks?.wake()
            try await eventually("all twenty delivered", timeout: .patience) { receiver.requests.count == 20 }
        }
    }

    /// A receiver that never answers holds back only its own hook: another hook's event goes out meanwhile.
    @Test func aHangingReceiverHoldsBackNoOtherHook() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let hanging = try LoopbackListener()  // connections complete, nothing is ever read or answered
        defer { hanging.stop() }
        try await withRunningHarness { harness in
            harness.app.start(server: nil)
            defer { harness.app.shutdown() }
            _ = try harness.call(
                API.createWebhook, PathParameters(),
                CreateWebhookRequest(name: "hanging", url: "http://127.0.0.1:\(hanging.port)/hooks"))
            _ = try harness.call(
                API.createWebhook, PathParameters(), CreateWebhookRequest(name: "chat", url: receiver.url))
            let started = ContinuousClock.now
            try Self.kill(harness)
            try Self.restore(harness)
            try await eventually("both delivered to chat", timeout: .patience) { receiver.requests.count == 2 }
            // Both arrived well within the 5 s the hanging attempt may take (the receiver notes when, on its own
            // thread: this test's task may wait for a thread of its own under a loaded suite).
            let last = try #require(receiver.requests.last)
            #expect(last.at - started < .seconds(3))
        }
    }

    @Test func aPrivateAddressIsRefusedWhenTheHookIsMade() async throws {
        try await withHarness { harness in
            let response = try harness.send(
                "POST", "/v1/admin/webhooks", body: #"{"name":"inside","url":"http://169.254.169.254/latest"}"#)
            #expect(response.status == 400)
            #expect(try response.json("error.path") == .string("url"))
            #expect(try response.json("error.message")?.text?.contains("--allow-private-webhooks") == true)
        }
    }
}

/// A harness whose clock runs, with the webhook settings of `WebhookLiveTests`.
func withRunningHarness(_ body: (AppHarness) async throws -> Void) async throws {
    try await withTemporaryDirectory { directory in
        try await body(
            AppHarness(directory: directory, clock: TestClock(running: true), settings: WebhookLiveTests.settings))
    }
}

extension AppHarness {
    /// Sends `endpoint` as the admin and reads its 2xx answer with its answer type.
    func call<Request, Answer>(
        _ endpoint: Endpoint<Request, Answer>, _ parameters: PathParameters, _ request: Request
    ) throws -> Answer {
        let call = try endpoint.call(parameters, request)
        let response = try send(
            call.method, call.target, headers: call.headers, body: String(decoding: call.body, as: UTF8.self))
        guard (200..<300).contains(response.status) else {
            throw TestClientError(description: "\(endpoint.info.label) answered \(response.status): \(response.text)")
        }
        return try endpoint.answer(response.body)
    }
}
