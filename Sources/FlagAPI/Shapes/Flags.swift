import Foundation

/// `GET …/flags?kind=&expired=`.
public struct FlagListQuery: APIRequest, Hashable {
    /// Only flags of this kind.
    public var kind: String?
    /// Only flags past their expiry.
    public var expired: Bool?

    /// A query.
    public init(kind: String? = nil, expired: Bool? = nil) {
        self.kind = kind
        self.expired = expired
    }
}

/// The flags of a set as stored, with the set's version (`ETag`).
public struct FlagList: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// Its version.
    public var version: Int
    /// Each flag's JSON, by key.
    public var flags: [String: RawJSON]

    /// A list.
    public init(set: String, version: Int, flags: [String: RawJSON]) {
        self.set = set
        self.version = version
        self.flags = flags
    }
}

/// `GET …/flags/{key}`: one flag as stored.
public struct FlagAnswer: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// Its version.
    public var version: Int
    /// The flag's key.
    public var key: String
    /// The flag's JSON.
    public var flag: RawJSON

    /// A flag.
    public init(set: String, version: Int, key: String, flag: RawJSON) {
        self.set = set
        self.version = version
        self.key = key
        self.flag = flag
    }
}

/// `PUT …/flags/{key}`: the flag, created or replaced (`If-None-Match: *` only creates).
public struct PutFlagRequest: MutationRequest, Hashable {
    /// The flag, as in a flag-set document.
    public var flag: RawJSON
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A flag to write.
    public init(flag: RawJSON, reason: String? = nil, allowIncompatible: Bool? = nil) {
        self.flag = flag
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// `POST …/default`: the new default, as JSON (`value`) or as text the server reads as the flag's type
/// (`valueText`).
public struct DefaultRequest: MutationRequest, Hashable {
    /// The value, as JSON.
    public var value: RawJSON?
    /// The value as typed, e.g. `3` or `true`.
    public var valueText: String?
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A new default.
    public init(
        value: RawJSON? = nil, valueText: String? = nil, reason: String? = nil, allowIncompatible: Bool? = nil
    ) {
        self.value = value
        self.valueText = valueText
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// `POST …/expire`: when the flag expires (default: now) and the value it then serves.
public struct ExpireRequest: MutationRequest, Hashable {
    /// The value kept once expired, as JSON.
    public var keep: RawJSON?
    /// The value kept, as typed.
    public var keepText: String?
    /// When it expires.
    public var at: Date?
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// An expiry.
    public init(
        keep: RawJSON? = nil, keepText: String? = nil, at: Date? = nil, reason: String? = nil,
        allowIncompatible: Bool? = nil
    ) {
        self.keep = keep
        self.keepText = keepText
        self.at = at
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// `POST …/overrides`: a value forced for one unit or one cohort, replacing an override of the same target.
public struct OverrideRequest: MutationRequest, Hashable {
    /// The unit (or give `cohort`).
    public var unit: String?
    /// The cohort (or give `unit`).
    public var cohort: String?
    /// The value, as JSON.
    public var value: RawJSON?
    /// The value as typed.
    public var valueText: String?
    /// Until when.
    public var until: Date?
    /// For how long, e.g. `2h` (instead of `until`).
    public var `for`: String?
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// An override.
    public init(
        unit: String? = nil, cohort: String? = nil, value: RawJSON? = nil, valueText: String? = nil,
        until: Date? = nil, for duration: String? = nil, reason: String? = nil, allowIncompatible: Bool? = nil
    ) {
        self.unit = unit
        self.cohort = cohort
        self.value = value
        self.valueText = valueText
        self.until = until
        self.for = duration
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// `DELETE …/overrides?unit=|cohort=`.
public struct RemoveOverrideRequest: MutationRequest, Hashable {
    /// The unit (or give `cohort`).
    public var unit: String?
    /// The cohort (or give `unit`).
    public var cohort: String?
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A removal.
    public init(unit: String? = nil, cohort: String? = nil, reason: String? = nil, allowIncompatible: Bool? = nil) {
        self.unit = unit
        self.cohort = cohort
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// `PUT …/rollout`: the value rolled out and one of `percent`, `schedule`, `steps` (from `start`) or `preset`.
public struct RolloutRequest: MutationRequest, Hashable {
    /// The value, as JSON.
    public var value: RawJSON?
    /// The value as typed.
    public var valueText: String?
    /// The bucketing salt (default: the key).
    public var salt: String?
    /// When `steps` or `preset` start (default: now).
    public var start: Date?
    /// A preset schedule: `apple`.
    public var preset: String?
    /// A fixed percent.
    public var percent: Double?
    /// Explicit steps.
    public var schedule: [RolloutStep]?
    /// Steps after `start`, e.g. `0h:1,24h:5,72h:100`.
    public var steps: String?
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A rollout.
    public init(
        value: RawJSON? = nil, valueText: String? = nil, salt: String? = nil, start: Date? = nil,
        preset: String? = nil, percent: Double? = nil, schedule: [RolloutStep]? = nil, steps: String? = nil,
        reason: String? = nil, allowIncompatible: Bool? = nil
    ) {
        self.value = value
        self.valueText = valueText
        self.salt = salt
        self.start = start
        self.preset = preset
        self.percent = percent
        self.schedule = schedule
        self.steps = steps
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// One step of a schedule.
public struct RolloutStep: Sendable, Codable, Hashable {
    /// From when.
    public var at: Date
    /// The percent.
    public var percent: Double

    /// A step.
    public init(at: Date, percent: Double) {
        self.at = at
        self.percent = percent
    }
}

/// `POST …/rules`: a rule appended after the flag's rules.
public struct RuleRequest: MutationRequest, Hashable {
    /// The rule, as in a document; its `value` (and its rollout's) may be `valueText`, and without a `name` it is
    /// named after its cohort or `rule-N`.
    public var rule: RawJSON
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A rule to add.
    public init(rule: RawJSON, reason: String? = nil, allowIncompatible: Bool? = nil) {
        self.rule = rule
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// `PUT …/flags/{key}/prerequisites/{name}`: the flag requires flag `name` to serve one of the values, given as
/// JSON (`values`) or as text read as that flag's type (`valuesText`). Replaces what it listed for `name` before.
public struct PrerequisiteRequest: MutationRequest, Hashable {
    /// The values, as a JSON array.
    public var values: RawJSON?
    /// The values as typed, e.g. `["true"]` or `["blue", "green"]`.
    public var valuesText: [String]?
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A prerequisite to set.
    public init(
        values: RawJSON? = nil, valuesText: [String]? = nil, reason: String? = nil, allowIncompatible: Bool? = nil
    ) {
        self.values = values
        self.valuesText = valuesText
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// `PUT …/flags/{key}/values`: the only values the string flag serves from now on (docs/core.md, "Enum flags").
public struct ValuesRequest: MutationRequest, Hashable {
    /// The values, in the order apps list them.
    public var values: [String]
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A list of values.
    public init(values: [String], reason: String? = nil, allowIncompatible: Bool? = nil) {
        self.values = values
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }

    /// The reason and the values, which apps report back and flagctl lists.
    public var writtenText: [WrittenText] {
        [WrittenText("reason", reason)] + values.enumerated().map { WrittenText("values[\($0.offset)]", $0.element) }
    }
}

/// `POST …/flags/{key}/promote`: the flag's configuration in set `from` becomes its configuration here.
public struct PromoteRequest: MutationRequest, Hashable {
    /// The set to copy from.
    public var from: String
    /// Also copy the cohorts it uses that this set lacks.
    public var withCohorts: Bool?
    /// Also copy the flags it requires that this set lacks (and those they require).
    public var withPrerequisites: Bool?
    /// Why, for the audit log (default: `from SET`).
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A promotion from `from`.
    public init(
        from: String, withCohorts: Bool? = nil, withPrerequisites: Bool? = nil, reason: String? = nil,
        allowIncompatible: Bool? = nil
    ) {
        self.from = from
        self.withCohorts = withCohorts
        self.withPrerequisites = withPrerequisites
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}
