import Foundation

/// `GET …/history?key=&limit=`.
public struct HistoryQuery: APIRequest, Hashable {
    /// Only versions that changed this flag or cohort.
    public var key: String?
    /// At most this many versions (the server caps it).
    public var limit: Int?

    /// A history query.
    public init(key: String? = nil, limit: Int? = nil) {
        self.key = key
        self.limit = limit
    }
}

/// The versions of a set, newest first.
public struct History: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// Its versions.
    public var versions: [HistoryEntry]

    /// A history.
    public init(set: String, versions: [HistoryEntry]) {
        self.set = set
        self.versions = versions
    }
}

/// One version: who made it, why, and what it changed.
public struct HistoryEntry: Sendable, Codable, Hashable {
    /// The version.
    public var version: Int
    /// When it was made.
    public var createdAt: Date
    /// Who: the token's name.
    public var actor: String
    /// What, e.g. `flag.kill`.
    public var action: String
    /// On what.
    public var subject: String?
    /// Why, as given.
    public var reason: String?
    /// The items it changed.
    public var changed: [ChangedItem]

    /// A version's entry.
    public init(
        version: Int, createdAt: Date, actor: String, action: String, subject: String?, reason: String?,
        changed: [ChangedItem]
    ) {
        self.version = version
        self.createdAt = createdAt
        self.actor = actor
        self.action = action
        self.subject = subject
        self.reason = reason
        self.changed = changed
    }
}

/// A flag or cohort a version changed.
public struct ChangedItem: Sendable, Codable, Hashable {
    /// `flag` or `cohort`.
    public var kind: String
    /// Its key or name.
    public var key: String

    /// A changed item.
    public init(kind: String, key: String) {
        self.kind = kind
        self.key = key
    }
}

/// `GET …/diff?from=&to=` (two versions of the set) or `?with=OTHER` (this set against another).
public struct DiffQuery: APIRequest, Hashable {
    /// The older version.
    public var from: Int?
    /// The newer version.
    public var to: Int?
    /// Another set, compared at its current version with this one's.
    public var with: String?

    /// A diff query.
    public init(from: Int? = nil, to: Int? = nil, with: String? = nil) {
        self.from = from
        self.to = to
        self.with = with
    }
}

/// What differs: each changed flag and cohort before and after.
public struct DiffAnswer: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// The older version, for a diff of versions.
    public var from: Int?
    /// The newer version, for a diff of versions.
    public var to: Int?
    /// The other set (`after`), for a diff of sets.
    public var with: String?
    /// Changed flags, by key.
    public var flags: [ItemDiff]
    /// Changed cohorts, by name.
    public var cohorts: [ItemDiff]

    /// A diff.
    public init(
        set: String, from: Int? = nil, to: Int? = nil, with: String? = nil, flags: [ItemDiff], cohorts: [ItemDiff]
    ) {
        self.set = set
        self.from = from
        self.to = to
        self.with = with
        self.flags = flags
        self.cohorts = cohorts
    }
}

/// One item in a diff; `null` where it does not exist.
public struct ItemDiff: Sendable, Codable, Hashable {
    /// The flag's key or the cohort's name.
    public var key: String
    /// The item before.
    @ExplicitNull public var before: RawJSON?
    /// The item after.
    @ExplicitNull public var after: RawJSON?

    /// An item's diff.
    public init(key: String, before: RawJSON?, after: RawJSON?) {
        self.key = key
        self.before = before
        self.after = after
    }
}

/// `POST …/rollback`: a new version with the content of `version`.
public struct RollbackRequest: MutationRequest, Hashable {
    /// The version to go back to.
    public var version: Int
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A rollback to `version`.
    public init(version: Int, reason: String? = nil, allowIncompatible: Bool? = nil) {
        self.version = version
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// `GET /v1/admin/audit` and `…/sets/{set}/audit`: filters of the audit log.
public struct AuditQuery: APIRequest, Hashable {
    /// One set (the server-wide route only).
    public var set: String?
    /// Records of this actor.
    public var actor: String?
    /// Records about this subject.
    public var subject: String?
    /// Records from this time on.
    public var since: Date?
    /// Records before this time.
    public var until: Date?
    /// At most this many records (the server caps it).
    public var limit: Int?

    /// An audit query.
    public init(
        set: String? = nil, actor: String? = nil, subject: String? = nil, since: Date? = nil, until: Date? = nil,
        limit: Int? = nil
    ) {
        self.set = set
        self.actor = actor
        self.subject = subject
        self.since = since
        self.until = until
        self.limit = limit
    }
}

/// Audit records, newest first.
public struct AuditList: APIAnswer, Codable, Hashable {
    /// The records.
    public var records: [AuditEntry]

    /// A list of `records`.
    public init(records: [AuditEntry]) {
        self.records = records
    }
}

/// One audit record: who did what, when, why, and the version it produced if any. The server's store keeps and
/// reads back these records as they are.
public struct AuditEntry: Sendable, Codable, Hashable {
    /// When.
    public var time: Date
    /// Who: the token's name.
    public var actor: String
    /// What, e.g. `token.create`.
    public var action: String
    /// On what.
    public var subject: String?
    /// Why, as given.
    public var reason: String?
    /// The version it made, for a change of a set.
    public var version: Int?

    /// A record of one action.
    public init(
        time: Date, actor: String, action: String, subject: String? = nil, reason: String? = nil, version: Int? = nil
    ) {
        self.time = time
        self.actor = actor
        self.action = action
        self.subject = subject
        self.reason = reason
        self.version = version
    }
}

/// `POST …/evaluate`: one flag for a context, at a time.
public struct EvaluateRequest: APIRequest, Hashable {
    /// The flag's key.
    public var key: String
    /// The unit evaluated.
    public var unitID: String?
    /// `unitID`'s older name.
    public var unit: String?
    /// The context's attributes.
    public var attributes: [String: String]?
    /// When (default: now).
    public var at: Date?

    /// An evaluation of `key` for `unitID`.
    public init(
        key: String, unitID: String? = nil, unit: String? = nil, attributes: [String: String]? = nil, at: Date? = nil
    ) {
        self.key = key
        self.unitID = unitID
        self.unit = unit
        self.attributes = attributes
        self.at = at
    }
}

/// An evaluation with every step of it.
public struct EvaluationAnswer: APIAnswer, Codable, Hashable {
    /// The flag's key.
    public var key: String
    /// The unit.
    public var unit: String
    /// The value served.
    public var value: RawJSON
    /// Why, e.g. `TARGETING_MATCH`.
    public var reason: String
    /// The rule or variant that matched.
    public var variant: String?
    /// For reason `ERROR`, e.g. `FLAG_NOT_FOUND`.
    public var errorCode: String?
    /// What the error means.
    public var errorMessage: String?
    /// The set's version evaluated.
    public var version: Int
    /// The time evaluated at.
    public var at: Date
    /// Each step of the evaluation, in order.
    public var steps: [String]

    /// An evaluation.
    public init(
        key: String, unit: String, value: RawJSON, reason: String, variant: String?, errorCode: String?,
        errorMessage: String?, version: Int, at: Date, steps: [String]
    ) {
        self.key = key
        self.unit = unit
        self.value = value
        self.reason = reason
        self.variant = variant
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.version = version
        self.at = at
        self.steps = steps
    }
}
