import Foundation

/// `GET …/changes?state=&limit=`: the set's change requests, newest first.
public struct ChangeListQuery: APIRequest, Hashable {
    /// Only those in these states, comma-separated: `open,approved` (default: every state).
    public var state: String?
    /// At most this many (the server caps it).
    public var limit: Int?

    /// A query.
    public init(state: String? = nil, limit: Int? = nil) {
        self.state = state
        self.limit = limit
    }
}

/// The change requests of a set.
public struct ChangeList: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// Newest first.
    public var changes: [ChangeInfo]

    /// A list.
    public init(set: String, changes: [ChangeInfo]) {
        self.set = set
        self.changes = changes
    }
}

/// A change request (docs/reviews.md): a write held back until it is approved and applied.
public struct ChangeInfo: APIAnswer, Codable, Hashable {
    /// Its number.
    public var id: Int
    /// The set it changes.
    public var set: String
    /// What it does, in a line.
    public var title: String
    /// `open`, `approved`, `scheduled`, `applied`, `rejected`, `withdrawn` or `failed`.
    public var state: String
    /// Who proposed it.
    public var author: String
    /// Why, as the author gave it.
    public var reason: String?
    /// The version it was made against.
    public var baseVersion: Int
    /// When it was proposed.
    public var createdAt: Date
    /// When the server applies it, for a scheduled change (`state` is `scheduled` once it needs nothing more).
    public var applyAt: Date?
    /// Who approved it, oldest first.
    public var approvals: [ChangeApproval]
    /// Who rejected, withdrew or applied it.
    public var decidedBy: String?
    /// When.
    public var decidedAt: Date?
    /// The reason given with that decision.
    public var decisionReason: String?
    /// The version applying it made.
    public var appliedVersion: Int?
    /// Why applying it failed.
    public var failure: String?
    /// The flags it changes: each at the base version (`before`) and as it writes it (`after`).
    public var flags: [ItemDiff]
    /// The cohorts it changes, the same way.
    public var cohorts: [ItemDiff]

    /// A change request.
    public init(
        id: Int, set: String, title: String, state: String, author: String, reason: String? = nil, baseVersion: Int,
        createdAt: Date, applyAt: Date? = nil, approvals: [ChangeApproval] = [], decidedBy: String? = nil,
        decidedAt: Date? = nil,
        decisionReason: String? = nil, appliedVersion: Int? = nil, failure: String? = nil, flags: [ItemDiff],
        cohorts: [ItemDiff]
    ) {
        self.id = id
        self.set = set
        self.title = title
        self.state = state
        self.author = author
        self.reason = reason
        self.baseVersion = baseVersion
        self.createdAt = createdAt
        self.applyAt = applyAt
        self.approvals = approvals
        self.decidedBy = decidedBy
        self.decidedAt = decidedAt
        self.decisionReason = decisionReason
        self.appliedVersion = appliedVersion
        self.failure = failure
        self.flags = flags
        self.cohorts = cohorts
    }
}

/// An approval of a change request.
public struct ChangeApproval: Sendable, Codable, Hashable {
    /// Who approved.
    public var actor: String
    /// When.
    public var time: Date
    /// Why, as given.
    public var reason: String?

    /// An approval.
    public init(actor: String, time: Date, reason: String? = nil) {
        self.actor = actor
        self.time = time
        self.reason = reason
    }
}

/// `GET …/changes/{id}`: a change request, and what it would change now.
public struct ChangeAnswer: APIAnswer, Codable, Hashable {
    /// The request.
    public var change: ChangeInfo
    /// The set's current version.
    public var currentVersion: Int
    /// The items it touches that changed since its base version: applying it answers 409 `change_conflict` while
    /// there are any.
    public var conflicts: [ChangedItem]
    /// The flags it changes, each as it is now (`before`) and as the request writes it (`after`).
    public var flags: [ItemDiff]
    /// The cohorts it changes, the same way.
    public var cohorts: [ItemDiff]

    /// A change request and its diff against the current version.
    public init(
        change: ChangeInfo, currentVersion: Int, conflicts: [ChangedItem], flags: [ItemDiff], cohorts: [ItemDiff]
    ) {
        self.change = change
        self.currentVersion = currentVersion
        self.conflicts = conflicts
        self.flags = flags
        self.cohorts = cohorts
    }
}

/// `POST …/changes/{n}/schedule`: when the server is to apply a change request.
public struct ScheduleRequest: APIRequest, Hashable {
    /// The time, in the future.
    public var at: Date
    /// Why, for the audit log.
    public var reason: String?

    /// A new time.
    public init(at: Date, reason: String? = nil) {
        self.at = at
        self.reason = reason
    }

    /// The reason.
    public var writtenText: [WrittenText] { [WrittenText("reason", reason)] }
}
