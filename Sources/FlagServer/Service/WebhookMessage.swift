import FlagAPI
import FlagCore
import FlagSigning
import Foundation

/// One attempt's request body and headers, in the Standard Webhooks format: `webhook-id`, `webhook-timestamp` and
/// `webhook-signature` on every format, so that a receiver verifies a Slack-shaped body the same way.
struct WebhookMessage: Sendable {
    var body: [UInt8]
    var headers: [(name: String, value: String)]

    /// The message of `delivery`, signed at `now` with `secrets` (the current one first; during a rotation the one
    /// before too, each signature apart by a space). `publicURL` is where people reach the dashboard.
    init(_ delivery: LeasedDelivery, secrets: [WebhookSecret], now: Date, publicURL: String?) throws {
        let body: [UInt8]
        switch delivery.hook.format {
        case .json: body = delivery.payload
        case .slack: body = try Self.slackBody(WebhookEvent.decode(answer: delivery.payload), publicURL: publicURL)
        }
        let timestamp = Int(now.timeIntervalSince1970)
        let signatures = try secrets.map {
            try $0.signature(id: delivery.eventID, timestamp: timestamp, body: body)
        }
        self.body = body
        headers = [
            ("Content-Type", "application/json"), ("webhook-id", delivery.eventID),
            ("webhook-timestamp", String(timestamp)), ("webhook-signature", signatures.joined(separator: " ")),
            ("User-Agent", "Flagstaff-Webhooks/1"),
        ]
    }

    /// A Slack incoming-webhook body: `text`, the line notifications show, and `blocks`, the same line and a link to
    /// the dashboard when the server knows its public address.
    static func slackBody(_ event: WebhookEvent, publicURL: String?) throws -> [UInt8] {
        let line = summary(event)
        var blocks: [JSONValue] = [
            .object([
                "type": .string("section"),
                "text": .object(["type": .string("mrkdwn"), "text": .string(escaped(line))]),
            ])
        ]
        if let link = dashboardLink(event, publicURL: publicURL) {
            blocks.append(
                .object([
                    "type": .string("context"),
                    "elements": .array([
                        .object([
                            "type": .string("mrkdwn"), "text": .string("<\(link)|Open in the Flagstaff dashboard>"),
                        ])
                    ]),
                ]))
        }
        return JSONValue.object(["text": .string(escaped(line)), "blocks": .array(blocks)]).canonicalBytes
    }

    /// The event in one line: "alice killed new-checkout in prod: payment errors (v42)".
    static func summary(_ event: WebhookEvent) -> String {
        let data = event.data
        let actor = data.actor ?? "someone"
        let what: String
        switch WebhookEventType(rawValue: event.type) {
        case .versionCreated:
            let verb = data.action.flatMap { verbs[$0] } ?? "changed (\(data.action ?? "a write"))"
            what = [verb, data.subject].compactMap { $0 }.joined(separator: " ")
        case .changeOpened: what = "opened \(data.subject ?? "a change request")"
        case .changeApproved: what = "approved \(data.subject ?? "a change request")"
        case .changeApplied: what = "applied \(data.subject ?? "a change request")"
        case .changeFailed: what = "could not apply \(data.subject ?? "a change request")"
        case .changeRejected: what = "rejected \(data.subject ?? "a change request")"
        case .tokenCreated: what = "created the \(data.role ?? "admin") token \(data.subject ?? "")"
        case .tokenRevoked: what = "revoked the token \(data.subject ?? "")"
        case .keyCreated: what = "created the SDK key \(data.subject ?? "")"
        case .keyRevoked: what = "revoked the SDK key \(data.subject ?? "")"
        case .flagExpired:
            return "\(data.subject ?? "a flag") expired in \(data.set ?? "its set") (v\(data.version ?? 0))"
        case .test: what = "sent a test event to the webhook \(data.webhook ?? "")"
        case nil: what = event.type
        }
        var line = "\(actor) \(what)"
        if let set = data.set { line += " in \(set)" }
        if let reason = data.reason, !reason.isEmpty { line += ": \(reason)" }
        if let version = data.version { line += " (v\(version))" }
        return line
    }

    /// What the audit actions that write a version did, as a verb before the subject.
    private static let verbs: [String: String] = [
        "flag.kill": "killed", "flag.restore": "restored", "flag.create": "created", "flag.replace": "changed",
        "flag.delete": "deleted", "flag.archive": "archived", "flag.unarchive": "unarchived",
        "flag.default": "changed the default of", "flag.expire": "set the expiry of",
        "flag.override.add": "added an override to", "flag.override.remove": "removed an override from",
        "flag.rule.add": "added a rule to", "flag.rule.remove": "removed a rule from",
        "flag.rollout.set": "changed the rollout of", "flag.rollout.remove": "removed the rollout of",
        "flag.prerequisite.set": "set a prerequisite of", "flag.prerequisite.remove": "removed a prerequisite of",
        "flag.values.set": "set the values of", "flag.values.remove": "removed the values of",
        "flag.promote": "promoted", "cohort.create": "created the cohort", "cohort.replace": "changed the cohort",
        "cohort.delete": "deleted the cohort", "set.create": "created the set", "set.import": "imported",
        "set.rollback": "rolled back", "set.seed": "seeded", "change.apply": "applied",
    ]

    /// The dashboard's page for the event: the flag when one flag changed, else the set's history; `nil` without a
    /// public address.
    static func dashboardLink(_ event: WebhookEvent, publicURL: String?) -> String? {
        guard let publicURL, let set = event.data.set else { return nil }
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        let escapedSet = pathSegment(set)
        if let flags = event.data.flags, flags.count == 1, event.data.cohorts?.isEmpty ?? true {
            return "\(base)/ui/#/sets/\(escapedSet)/flags/\(pathSegment(flags[0]))"
        }
        if event.type.hasPrefix("change.") { return "\(base)/ui/#/sets/\(escapedSet)/changes" }
        return "\(base)/ui/#/sets/\(escapedSet)/history"
    }

    private static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/", "#", "?"])) ?? text
    }

    /// Text with Slack's three control characters escaped, as its message formatting asks.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
