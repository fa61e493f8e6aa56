import FlagAPI
import Foundation

/// Which webhook events an audit record tells of: the one place that maps the audit log's actions to events.
enum WebhookEvents {
    /// The events of `record`, with what `detail` adds: a version's `version.created` (and `change.applied` when a
    /// change request wrote it), a change request's decisions, tokens and SDK keys made and revoked. Other actions
    /// (sessions, settings, signing keys, webhooks themselves) tell of none.
    static func of(_ record: AuditEntry, set: String?, detail: EventDetail) -> [WebhookEvent] {
        var data = WebhookEventData(
            set: set, version: record.version, actor: record.actor, action: record.action, reason: record.reason,
            subject: record.subject)
        var types: [WebhookEventType] = []
        if record.version != nil {
            types.append(.versionCreated)
        }
        if let type = typeOf[record.action] {
            types.append(type)
        }
        switch detail {
        case .none: break
        case .version(let changed):
            data.flags = changed.filter { $0.kind == .flag }.map(\.key)
            data.cohorts = changed.filter { $0.kind == .cohort }.map(\.key)
        case .token(let role): data.role = role
        }
        return types.map { WebhookEvent(type: $0.rawValue, timestamp: record.time, data: data) }
    }

    /// The event of each audit action that has one besides `version.created`.
    private static let typeOf: [String: WebhookEventType] = [
        "change.propose": .changeOpened, "change.approve": .changeApproved, "change.apply": .changeApplied,
        "change.fail": .changeFailed, "change.reject": .changeRejected, "token.create": .tokenCreated,
        "token.revoke": .tokenRevoked, "key.create": .keyCreated, "key.revoke": .keyRevoked,
    ]

    /// A new event id, `msg_` and 32 hexadecimal digits of 128 random bits, so that no two events share one.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = (0..<2).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return "msg_" + digits.joined()
    }
}
