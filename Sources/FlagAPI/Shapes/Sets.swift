import Foundation

/// `GET /v1/admin/sets`: the sets the caller may access.
public struct SetList: APIAnswer, Codable, Hashable {
    /// The sets, by name.
    public var sets: [SetSummary]

    /// A list of `sets`.
    public init(sets: [SetSummary]) {
        self.sets = sets
    }
}

/// One set as `GET /v1/admin/sets` lists it: its size, its stale flags and its last change.
public struct SetSummary: Sendable, Codable, Hashable {
    /// The set's name.
    public var name: String
    /// Its current version.
    public var version: Int
    /// When that version was made.
    public var updatedAt: Date
    /// How many flags it has.
    public var flags: Int
    /// How many cohorts it has.
    public var cohorts: Int
    /// Its flags past their expiry and not archived.
    public var stale: Int
    /// Who made the last version, and why; absent for a set without history.
    public var lastChange: LastChange?

    /// A set's summary.
    public init(
        name: String, version: Int, updatedAt: Date, flags: Int, cohorts: Int, stale: Int, lastChange: LastChange?
    ) {
        self.name = name
        self.version = version
        self.updatedAt = updatedAt
        self.flags = flags
        self.cohorts = cohorts
        self.stale = stale
        self.lastChange = lastChange
    }
}

/// The last change of a set: its audit record and the version it made.
public struct LastChange: Sendable, Codable, Hashable {
    /// When.
    public var time: Date
    /// Who: the token's name.
    public var actor: String
    /// What, e.g. `flag.kill`.
    public var action: String
    /// On what, e.g. the flag's key.
    public var subject: String?
    /// Why, as given.
    public var reason: String?
    /// The version it made.
    public var version: Int

    /// A last change.
    public init(time: Date, actor: String, action: String, subject: String?, reason: String?, version: Int) {
        self.time = time
        self.actor = actor
        self.action = action
        self.subject = subject
        self.reason = reason
        self.version = version
    }
}

/// `POST /v1/admin/sets`: a new set, empty or holding `document`'s flags and cohorts.
public struct CreateSetRequest: MutationRequest, Hashable {
    /// The new set's name.
    public var name: String
    /// A flag-set document whose flags and cohorts the set starts with.
    public var document: RawJSON?
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A request to create `name`.
    public init(name: String, document: RawJSON? = nil, reason: String? = nil, allowIncompatible: Bool? = nil) {
        self.name = name
        self.document = document
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// `PUT /v1/admin/sets/{set}`: replace every flag and cohort with `document`'s, or with `dryRun` only say what would
/// change.
public struct ImportRequest: MutationRequest, Hashable {
    /// The flag-set document.
    public var document: RawJSON
    /// Only validate and list the changes; write nothing (a viewer may).
    public var dryRun: Bool?
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// An import of `document`.
    public init(document: RawJSON, dryRun: Bool? = nil, reason: String? = nil, allowIncompatible: Bool? = nil) {
        self.document = document
        self.dryRun = dryRun
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// What an import answers: the mutation response's members (without an item), or for a dry run the set's version
/// and each item's fate, and in both cases every changed item before and after.
public struct ImportAnswer: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// Its version after the import (for a dry run: now).
    public var version: Int
    /// Whether the import made `version`; absent for a dry run.
    public var changed: Bool?
    /// What the server warns of although it wrote; absent when empty.
    public var warnings: [String]?
    /// `true` for a dry run; absent otherwise.
    public var dryRun: Bool?
    /// For a dry run: `added`, `removed` or `changed`, by flag key.
    public var flags: [String: String]?
    /// For a dry run: `added`, `removed` or `changed`, by cohort name.
    public var cohorts: [String: String]?
    /// Every changed item, as it was and as it is (for a change request: as it would be).
    public var changes: ItemChanges
    /// The change request the import became instead of a version (`?propose=`).
    public var changeRequest: Int?

    /// An import's answer.
    public init(
        set: String, version: Int, changed: Bool? = nil, warnings: [String]? = nil, dryRun: Bool? = nil,
        flags: [String: String]? = nil, cohorts: [String: String]? = nil, changes: ItemChanges,
        changeRequest: Int? = nil
    ) {
        self.changeRequest = changeRequest
        self.set = set
        self.version = version
        self.changed = changed
        self.warnings = warnings
        self.dryRun = dryRun
        self.flags = flags
        self.cohorts = cohorts
        self.changes = changes
    }
}

/// `{"flags": {key: change}, "cohorts": {name: change}}`.
public struct ItemChanges: Sendable, Codable, Hashable {
    /// Changed flags by key.
    public var flags: [String: ItemChange]
    /// Changed cohorts by name.
    public var cohorts: [String: ItemChange]

    /// The changes.
    public init(flags: [String: ItemChange], cohorts: [String: ItemChange]) {
        self.flags = flags
        self.cohorts = cohorts
    }
}

/// One item before and after a change; `null` where it does not exist.
public struct ItemChange: Sendable, Codable, Hashable {
    /// The item before, `null` for an added one.
    @ExplicitNull public var before: RawJSON?
    /// The item after, `null` for a removed one.
    @ExplicitNull public var after: RawJSON?

    /// A change.
    public init(before: RawJSON?, after: RawJSON?) {
        self.before = before
        self.after = after
    }
}

/// `GET` and `PUT /v1/admin/sets/{set}/settings`: the set's settings.
public struct SettingsAnswer: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// What a write that active clients cannot evaluate meets: `enforce`, `warn` or `off`.
    public var compatibility: String
    /// Whether a write needs an approved change request: `off` or `required` (docs/reviews.md); absent from a
    /// server older than change requests.
    public var reviews: String?

    /// Settings of `set`.
    public init(set: String, compatibility: String, reviews: String? = nil) {
        self.set = set
        self.compatibility = compatibility
        self.reviews = reviews
    }
}

/// `PUT /v1/admin/sets/{set}/settings`: members not given keep their value.
public struct SettingsRequest: APIRequest, Hashable {
    /// `enforce`, `warn` or `off`.
    public var compatibility: String?
    /// `off` or `required`.
    public var reviews: String?
    /// Why, for the audit log.
    public var reason: String?

    /// A change of settings.
    public init(compatibility: String? = nil, reviews: String? = nil, reason: String? = nil) {
        self.compatibility = compatibility
        self.reviews = reviews
        self.reason = reason
    }

    /// The reason.
    public var writtenText: [WrittenText] { [WrittenText("reason", reason)] }
}
