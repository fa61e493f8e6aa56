import FlagAPI
import Foundation

/// How a hook's deliveries are written.
package enum WebhookFormat: String, Sendable, CaseIterable {
    /// Standard Webhooks: the event's JSON, signed.
    case json
    /// A Slack incoming-webhook message.
    case slack
}

/// A webhook as the store keeps it; its secrets stay sealed until the sender signs with them.
package struct StoredWebhook: Sendable, Hashable {
    package var name: String
    package var url: String
    /// The sets it covers; `nil`: every set.
    package var sets: [String]?
    /// The event types it covers; `nil`: every type.
    package var events: [String]?
    package var format: WebhookFormat
    package var description: String?
    package var sealedSecret: [UInt8]
    /// The secret before the last rotation, which signs too until `previousUntil`.
    package var previousSealedSecret: [UInt8]?
    package var previousUntil: Date?
    package var createdBy: String
    package var createdAt: Date
    /// When it was disabled (a 410); nothing is queued for it or sent to it since.
    package var disabledAt: Date?
    package var disabledReason: String?

    /// A hook as stored; new hooks have no previous secret and are enabled.
    package init(
        name: String, url: String, sets: [String]?, events: [String]?, format: WebhookFormat, description: String?,
        sealedSecret: [UInt8], previousSealedSecret: [UInt8]? = nil, previousUntil: Date? = nil, createdBy: String,
        createdAt: Date, disabledAt: Date? = nil, disabledReason: String? = nil
    ) {
        self.name = name
        self.url = url
        self.sets = sets
        self.events = events
        self.format = format
        self.description = description
        self.sealedSecret = sealedSecret
        self.previousSealedSecret = previousSealedSecret
        self.previousUntil = previousUntil
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.disabledAt = disabledAt
        self.disabledReason = disabledReason
    }

    /// Whether an event of `type` about `set` (none for events outside a set) is queued for the hook. A hook limited
    /// to sets hears nothing of what happens outside them.
    package func covers(_ type: String, set: String?) -> Bool {
        if let events, !events.contains(type) { return false }
        guard let sets else { return true }
        guard let set else { return false }
        return sets.contains(set)
    }
}

/// A delivery leased by one sender: the event's bytes and what is needed to sign and post them.
package struct LeasedDelivery: Sendable, Hashable {
    package var id: Int64
    package var hook: StoredWebhook
    package var eventID: String
    package var eventType: String
    package var payload: [UInt8]
    package var createdAt: Date
    /// Attempts made before this one.
    package var attempts: Int
}

/// What became of one attempt.
package enum DeliveryOutcome: Sendable, Hashable {
    /// A 2xx.
    case delivered(status: Int)
    /// Anything else, to be tried again at `next` unless the event is older than the retry window.
    case retry(status: Int?, error: String)
    /// A 410: the receiver is gone; the hook is disabled.
    case gone
}

/// A flag whose expiry has passed, as a server's copy of its set has it.
package struct FlagExpiry: Sendable, Hashable {
    package var set: String
    package var flag: String
    package var expiresAt: Date
    /// The set's version in which the server saw it.
    package var version: Int

    package init(set: String, flag: String, expiresAt: Date, version: Int) {
        self.set = set
        self.flag = flag
        self.expiresAt = expiresAt
        self.version = version
    }
}

/// How many deliveries of a hook wait, and since when.
package struct PendingSummary: Sendable, Hashable {
    package var count: Int
    package var oldest: Date?
}

/// What a change adds to an event beyond its audit record.
package enum EventDetail: Sendable {
    case none
    /// The items a version changed.
    case version(changed: [ItemKey])
    /// The role of a token or key made.
    case token(role: String)
}

extension StoredWebhook {
    /// The hook as the admin API shows it, without its secrets.
    package func info(pending: Int) -> WebhookInfo {
        WebhookInfo(
            name: name, url: url, sets: sets, events: events, format: format.rawValue, description: description,
            createdBy: createdBy, createdAt: createdAt, previousSecretUntil: previousUntil, disabledAt: disabledAt,
            disabledReason: disabledReason, pending: pending)
    }
}
