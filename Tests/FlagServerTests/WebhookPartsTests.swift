import FlagAPI
import FlagCore
import FlagHTTP
import FlagTestBasics
import Foundation
import Testing

@testable import FlagServer

/// The parts of webhooks that need no network: which addresses a hook may reach, which events an audit record tells
/// of, and the Slack body.
struct WebhookPartsTests {
    @Test(arguments: [
        "http://127.0.0.1/x", "http://127.12.0.1:8080/x", "http://10.1.2.3/", "http://172.16.0.1/",
        "http://172.31.9.9/",
        "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data", "http://100.64.0.1/", "http://0.0.0.0/",
        "http://[::1]/", "http://[fe80::1]/", "http://[fd00:ec2::254]/", "http://[::ffff:127.0.0.1]/",
        "http://[64:ff9b::a00:1]/", "http://224.0.0.1/", "http://localhost/x",
    ])
    func privateAddressesAreRefusedUnlessAllowed(url: String) throws {
        let address = try WebhookAddress(url)
        #expect {
            try address.resolve(allowPrivate: false)
        } throws: { error in
            "\(error)".contains("--allow-private-webhooks")
        }
        #expect(try !address.resolve(allowPrivate: true).isEmpty)
    }

    @Test(arguments: ["https://203.0.113.10/hooks", "http://8.8.8.8:8080/x", "https://[2001:4860:4860::8888]/x"])
    func publicAddressesAreAllowed(url: String) throws {
        #expect(try WebhookAddress(url).resolve(allowPrivate: false).count == 1)
    }

    @Test(arguments: [
        ("ftp://203.0.113.10/x", "scheme must be http or https"), ("file:///etc/passwd", "scheme must be http"),
        ("https://user:pass@203.0.113.10/x", "user name or password"), ("not a url", "scheme must be http or https"),
        ("https://[bad/x", "not a URL"),
        ("https:///x", "no host"), ("https://does-not-resolve.invalid/x", "does not resolve"),
    ])
    func aBadURLSaysWhatIsWrong(url: String, says: String) {
        #expect {
            try WebhookAddress(url).resolve(allowPrivate: true)
        } throws: { error in
            "\(error)".contains(says)
        }
    }

    @Test func eachAuditActionTellsOfItsEvents() {
        func types(_ action: String, version: Int? = nil) -> [String] {
            var record = AuditEntry(time: Date(timeIntervalSince1970: 0), actor: "alice", action: action, subject: "x")
            record.version = version
            return WebhookEvents.of(record, set: "prod", detail: .none).map(\.type)
        }
        #expect(types("flag.kill", version: 4) == ["version.created"])
        #expect(types("change.apply", version: 5) == ["version.created", "change.applied"])
        #expect(types("change.propose") == ["change.opened"])
        #expect(types("change.approve") == ["change.approved"])
        #expect(types("change.reject") == ["change.rejected"])
        #expect(types("change.fail") == ["change.failed"])
        #expect(types("token.create") == ["token.created"])
        #expect(types("token.revoke") == ["token.revoked"])
        #expect(types("key.create") == ["key.created"])
        #expect(types("key.revoke") == ["key.revoked"])
        for quiet in ["session.start", "set.settings", "signing-key.rotate", "webhook.create", "change.schedule"] {
            #expect(types(quiet).isEmpty, "\(quiet)")
        }
        let ids = (0..<1000).map { _ in WebhookEvents.newID() }
        #expect(Set(ids).count == 1000)
        #expect(ids.allSatisfy { $0.hasPrefix("msg_") && $0.count == 36 })
    }

    @Test func theExpiriesToTellOfAreThoseOfTheLastDayOfFlagsNotArchived() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func flag(_ key: String, _ hoursAgo: Double?, archived: Bool = false) -> Flag {
            Flag(
                key: key, type: .bool, defaultValue: .bool(false),
                expiresAt: hoursAgo.map { now.addingTimeInterval(-$0 * 3600) }, archived: archived)
        }
        var set = FlagSet(name: "prod", version: 7)
        for flag in [
            flag("just-now", 0), flag("an-hour-ago", 1), flag("two-days-ago", 48), flag("tomorrow", -24),
            flag("never", nil), flag("archived", 1, archived: true),
        ] {
            set.flags[flag.key] = flag
        }
        let state = SetState(compiled: CompiledFlagSet(set), items: [:])
        let found = WebhookSender.expired(in: [state], now: now, window: .seconds(24 * 3600))
        #expect(found.map(\.flag) == ["an-hour-ago", "just-now"])
        #expect(found.allSatisfy { $0.set == "prod" && $0.version == 7 })
    }

    /// The dashboard's form offers the event types FlagAPI knows, in their order.
    @Test func theDashboardOffersEveryEventType() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/FlagServer/Dashboard/webhooks.js")
        let text = try String(contentsOf: file, encoding: .utf8)
        let list = try #require(text.split(separator: "export const EVENT_TYPES = [").last?.split(separator: "]").first)
        let offered = list.split(separator: "'").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        #expect(offered == WebhookEventType.allCases.map(\.rawValue))
    }

    /// Slack's incoming webhooks take `text` (the notification) and `blocks` (what is shown), with `&`, `<` and `>`
    /// escaped in text (api.slack.com, "Formatting text for app surfaces").
    @Test func aSlackBodyHasTheLineAndALinkToTheDashboard() throws {
        let event = WebhookEvent(
            type: "version.created", timestamp: Date(timeIntervalSince1970: 0),
            data: WebhookEventData(
                set: "prod", version: 42, actor: "alice", action: "flag.kill", reason: "payment errors <5xx>",
                subject: "new-checkout", flags: ["new-checkout"], cohorts: []))
        let body = TestResponse(
            status: 200, body: try WebhookMessage.slackBody(event, publicURL: "https://flags.example.com/"))
        let line = "alice killed new-checkout in prod: payment errors &lt;5xx&gt; (v42)"
        #expect(try body.json("text") == .string(line))
        #expect(try body.json("blocks[0].type") == .string("section"))
        #expect(try body.json("blocks[0].text.type") == .string("mrkdwn"))
        #expect(try body.json("blocks[0].text.text") == .string(line))
        #expect(try body.json("blocks[1].type") == .string("context"))
        #expect(
            try body.json("blocks[1].elements[0].text")
                == .string(
                    "<https://flags.example.com/ui/#/sets/prod/flags/new-checkout|Open in the Flagstaff dashboard>"))
        #expect(try body.json("blocks[2]") == nil)
        // Without a public address there is no link.
        let plain = TestResponse(status: 200, body: try WebhookMessage.slackBody(event, publicURL: nil))
        #expect(try plain.json("blocks[1]") == nil)
    }
}
