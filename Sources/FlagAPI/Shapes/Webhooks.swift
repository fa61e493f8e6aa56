import Foundation

/// What a webhook is told of (docs/webhooks.md).
public enum WebhookEventType: String, Sendable, Codable, CaseIterable {
    /// A set reached a new version: a flag or cohort written, killed, restored, rolled back, imported.
    case versionCreated = "version.created"
    /// A change request was opened.
    case changeOpened = "change.opened"
    /// A change request was approved.
    case changeApproved = "change.approved"
    /// A change request was written as a version.
    case changeApplied = "change.applied"
    /// A scheduled change request could not be applied.
    case changeFailed = "change.failed"
    /// A change request was rejected.
    case changeRejected = "change.rejected"
    /// A token of the admin API was made.
    case tokenCreated = "token.created"
    /// A token of the admin API was revoked.
    case tokenRevoked = "token.revoked"
    /// An SDK key was made.
    case keyCreated = "key.created"
    /// An SDK key was revoked.
    case keyRevoked = "key.revoked"
    /// A flag's expiry passed (sent once per expiry, by whichever server sees it first).
    case flagExpired = "flag.expired"
    /// Sent by `POST /v1/admin/webhooks/{name}/test`, to that hook only.
    case test = "webhook.test"
}

/// The body of every delivery in the `json` format (Standard Webhooks): `{type, timestamp, data}`.
public struct WebhookEvent: APIAnswer, Codable, Hashable {
    /// The event's type, e.g. `version.created`.
    public var type: String
    /// When the change happened.
    public var timestamp: Date
    /// What happened.
    public var data: WebhookEventData

    /// An event.
    public init(type: String, timestamp: Date, data: WebhookEventData) {
        self.type = type
        self.timestamp = timestamp
        self.data = data
    }
}

/// What an event says; each type fills in the members that concern it. Never a token, a key or a secret.
public struct WebhookEventData: Sendable, Codable, Hashable {
    /// The set, for events of a set.
    public var set: String?
    /// The version written (`version.created`, `change.applied`).
    public var version: Int?
    /// The token name of whoever acted.
    public var actor: String?
    /// The action as the audit log names it, e.g. `flag.kill`.
    public var action: String?
    /// The reason the actor gave.
    public var reason: String?
    /// What the action was about, as the audit log names it: a flag key, `change 7`, a token's name.
    public var subject: String?
    /// The keys of the flags the version changed.
    public var flags: [String]?
    /// The names of the cohorts the version changed.
    public var cohorts: [String]?
    /// The role of a token created (`viewer`, `editor`, `admin`; `sdk` for an SDK key).
    public var role: String?
    /// The hook a test event was sent to.
    public var webhook: String?

    /// What happened.
    public init(
        set: String? = nil, version: Int? = nil, actor: String? = nil, action: String? = nil, reason: String? = nil,
        subject: String? = nil, flags: [String]? = nil, cohorts: [String]? = nil, role: String? = nil,
        webhook: String? = nil
    ) {
        self.set = set
        self.version = version
        self.actor = actor
        self.action = action
        self.reason = reason
        self.subject = subject
        self.flags = flags
        self.cohorts = cohorts
        self.role = role
        self.webhook = webhook
    }
}

/// `POST /v1/admin/webhooks`: a new hook. Without `sets` it covers every set, without `events` every event.
public struct CreateWebhookRequest: APIRequest, Hashable {
    /// A name unique on the server, `^[a-z0-9][a-z0-9._-]{0,127}$`.
    public var name: String
    /// Where deliveries are posted: `http` or `https`.
    public var url: String
    /// Only events of these sets.
    public var sets: [String]?
    /// Only these event types.
    public var events: [String]?
    /// `json` (Standard Webhooks, the default) or `slack` (an incoming-webhook message).
    public var format: String?
    /// What the hook is for.
    public var description: String?
    /// Why, for the audit log.
    public var reason: String?

    /// A hook to create.
    public init(
        name: String, url: String, sets: [String]? = nil, events: [String]? = nil, format: String? = nil,
        description: String? = nil, reason: String? = nil
    ) {
        self.name = name
        self.url = url
        self.sets = sets
        self.events = events
        self.format = format
        self.description = description
        self.reason = reason
    }

    /// The description, which may hold line breaks and tabs, and the reason; the name is a key, checked on creation.
    public var writtenText: [WrittenText] {
        [WrittenText("description", description, multiline: true), WrittenText("reason", reason)]
    }
}

/// A hook as stored, without its secret.
public struct WebhookInfo: Sendable, Codable, Hashable {
    /// Its name.
    public var name: String
    /// Where it posts.
    public var url: String
    /// The sets it covers; absent: every set.
    public var sets: [String]?
    /// The events it covers; absent: every event.
    public var events: [String]?
    /// `json` or `slack`.
    public var format: String
    /// What it is for.
    public var description: String?
    /// Who made it.
    public var createdBy: String
    /// When.
    public var createdAt: Date
    /// Until when the secret before the last rotation still signs too.
    public var previousSecretUntil: Date?
    /// When it was disabled (its receiver answered 410); nothing is sent to it since.
    public var disabledAt: Date?
    /// Why it was disabled.
    public var disabledReason: String?
    /// Deliveries not made yet.
    public var pending: Int

    /// A hook's record.
    public init(
        name: String, url: String, sets: [String]?, events: [String]?, format: String, description: String?,
        createdBy: String, createdAt: Date, previousSecretUntil: Date?, disabledAt: Date?, disabledReason: String?,
        pending: Int
    ) {
        self.name = name
        self.url = url
        self.sets = sets
        self.events = events
        self.format = format
        self.description = description
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.previousSecretUntil = previousSecretUntil
        self.disabledAt = disabledAt
        self.disabledReason = disabledReason
        self.pending = pending
    }
}

/// `GET /v1/admin/webhooks`.
public struct WebhookList: APIAnswer, Codable, Hashable {
    /// The hooks the caller may manage, by name.
    public var webhooks: [WebhookInfo]

    /// A list.
    public init(webhooks: [WebhookInfo]) {
        self.webhooks = webhooks
    }
}

/// One event's delivery to one hook.
public struct WebhookDeliveryInfo: Sendable, Codable, Hashable {
    /// The event's id: the `webhook-id` header, the same on every attempt.
    public var id: String
    /// The event's type.
    public var type: String
    /// Its set, for events of a set.
    public var set: String?
    /// When the event was recorded.
    public var createdAt: Date
    /// `pending`, `delivered` or `failed`.
    public var state: String
    /// Attempts made.
    public var attempts: Int
    /// When the next attempt is due, while pending.
    public var nextAttemptAt: Date?
    /// The receiver's last HTTP status.
    public var lastStatus: Int?
    /// What went wrong last.
    public var lastError: String?
    /// When it was delivered or given up.
    public var finishedAt: Date?

    /// A delivery's record.
    public init(
        id: String, type: String, set: String?, createdAt: Date, state: String, attempts: Int, nextAttemptAt: Date?,
        lastStatus: Int?, lastError: String?, finishedAt: Date?
    ) {
        self.id = id
        self.type = type
        self.set = set
        self.createdAt = createdAt
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.finishedAt = finishedAt
    }
}

/// `GET /v1/admin/webhooks/{name}`: the hook and its recent deliveries, newest first.
public struct WebhookAnswer: APIAnswer, Codable, Hashable {
    /// The hook.
    public var webhook: WebhookInfo
    /// Its last deliveries.
    public var deliveries: [WebhookDeliveryInfo]

    /// A hook with its deliveries.
    public init(webhook: WebhookInfo, deliveries: [WebhookDeliveryInfo]) {
        self.webhook = webhook
        self.deliveries = deliveries
    }
}

/// `POST /v1/admin/webhooks` and `…/rotate-secret`: the hook and its signing secret, in this answer only.
public struct WebhookSecretAnswer: APIAnswer, Codable, Hashable {
    /// The hook.
    public var webhook: WebhookInfo
    /// The secret, `whsec_…`: what the receiver verifies with.
    public var secret: String

    /// A hook with its secret.
    public init(webhook: WebhookInfo, secret: String) {
        self.webhook = webhook
        self.secret = secret
    }
}

/// `DELETE /v1/admin/webhooks/{name}`: removed, with its pending deliveries.
public struct DeletedWebhook: APIAnswer, Codable, Hashable {
    /// Its name.
    public var name: String
    /// Always `true`.
    public var deleted: Bool

    /// The answer for `name`.
    public init(name: String, deleted: Bool = true) {
        self.name = name
        self.deleted = deleted
    }
}

/// `POST /v1/admin/webhooks/{name}/test`: a test event queued for the hook.
public struct WebhookTestAnswer: APIAnswer, Codable, Hashable {
    /// The hook.
    public var name: String
    /// The test event's id, as its `webhook-id` header will say.
    public var id: String

    /// The answer for `name`.
    public init(name: String, id: String) {
        self.name = name
        self.id = id
    }
}
