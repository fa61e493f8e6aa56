import FlagHTTP
import FlagLock
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

/// `flagctl webhooks …` against the built server and a receiver in the test.
@Suite("flagctl webhooks", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineWebhookTests {
    @Test func createListTestShowRotateAndDelete() async throws {
        let received = Locked<[(id: String, timestamp: String, signature: String, body: [UInt8])]>([])
        let receiver = try LiveHTTPServer(configuration: LiveHTTPServer.configuration { $0.loopCount = 1 }) {
            request, responder in
            let headers = request.headers
            received.withLock {
                $0.append(
                    (
                        headers["webhook-id"] ?? "", headers["webhook-timestamp"] ?? "",
                        headers["webhook-signature"] ?? "", request.body
                    ))
            }
            responder.respond(HTTPResponse(status: 204))
        }
        defer { receiver.stop() }
        let server = try LiveServer(configuration: #"{"allowPrivateWebhooks":true}"#)
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        let url = "http://127.0.0.1:\(receiver.port)/hooks"

        let created = try server.ctl(["webhooks", "create", "chat", url, "--sets", "t", "--events", "webhook.test"])
        #expect(created.status == 0, "\(created)")
        let secret = try WebhookSecret(text: created.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(
            created.stderrLines == [
                "created webhook chat; its signing secret is shown only this once: give it to the receiver"
            ])

        let list = try server.ctl(["webhooks", "list"])
        #expect(list.stdoutLines.count == 2)
        #expect(list.stdoutLines[1].hasPrefix("chat  "))
        #expect(list.stdoutLines[1].contains("webhook.test") && list.stdoutLines[1].contains("enabled"))

        let test = try server.ctl(["webhooks", "test", "chat"])
        #expect(test.status == 0)
        let id = try #require(test.stdout.split(separator: " ").dropFirst(3).first.map(String.init))
        #expect(id.hasPrefix("msg_"))
        try await eventually("the test delivered", timeout: .patience) { received.withLock { !$0.isEmpty } }
        let delivery = try #require(received.withLock { $0.first })
        #expect(delivery.id == id)
        let expected = try secret.signature(
            id: delivery.id, timestamp: try #require(Int(delivery.timestamp)), body: delivery.body)
        #expect(delivery.signature == expected)

        try await eventually("shown delivered", timeout: .patience) {
            (try? server.ctl(["webhooks", "show", "chat"]))?.stdout.contains("delivered") == true
        }
        let shown = try server.ctl(["webhooks", "show", "chat"])
        #expect(shown.stdoutLines.first == "chat  json  \(url)")
        #expect(shown.stdoutLines.contains { $0.hasPrefix(id) && $0.contains("webhook.test") })

        let rotated = try server.ctl(["webhooks", "rotate-secret", "chat"])
        #expect(rotated.status == 0)
        #expect(try WebhookSecret(text: rotated.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) != secret)

        #expect(try server.ctl(["webhooks", "delete", "chat"]).stdout == "deleted webhook chat\n")
        let missing = try server.ctl(["webhooks", "show", "chat"])
        #expect(missing.status != 0)
        #expect(missing.stderrLines.first?.contains("no webhook \"chat\"") == true)
    }

    @Test func aPrivateURLIsRefusedWithTheSettingToChange() throws {
        let server = try LiveServer()
        let refused = try server.ctl(["webhooks", "create", "inside", "http://10.0.0.8/hooks"])
        #expect(refused.status != 0)
        #expect(refused.stderrLines.first?.contains("--allow-private-webhooks") == true)
    }
}
