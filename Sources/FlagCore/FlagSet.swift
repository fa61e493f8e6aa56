import Foundation

/// A named, versioned collection of flags and cohorts: the document of SPEC §3 (`schema: 1`).
public struct FlagSet: Sendable, Equatable {
    /// The schema this build writes. A reader meeting a higher one keeps working with what it understands.
    public static let currentSchema = 1

    /// The document's schema number.
    public var schema: Int
    /// The set's name, e.g. `ios-prod`.
    public var name: String
    /// The version; every change creates version n+1, starting at 1. 0 means "not stored yet".
    public var version: Int
    /// When this version was made.
    public var updatedAt: Date?
    /// Cohorts by name.
    public var cohorts: [String: Cohort]
    /// Flags by key.
    public var flags: [String: Flag]
    /// Flags this reader could not read (wrong shape), with why. They evaluate to the caller's default with
    /// `PARSE_ERROR`; every other flag keeps working. Never encoded.
    public var unreadableFlags: [String: [Problem]]
    /// Cohorts this reader could not read, with why. Flags that use them evaluate with `PARSE_ERROR`.
    public var unreadableCohorts: [String: [Problem]]
    /// Everything met while reading the document that was not as this build writes it. Never encoded.
    public var readProblems: [Problem]

    /// Creates a set.
    public init(
        name: String, version: Int = 0, updatedAt: Date? = nil, schema: Int = FlagSet.currentSchema,
        cohorts: [String: Cohort] = [:], flags: [String: Flag] = [:]
    ) {
        self.schema = schema
        self.name = name
        self.version = version
        self.updatedAt = updatedAt
        self.cohorts = cohorts
        self.flags = flags
        self.unreadableFlags = [:]
        self.unreadableCohorts = [:]
        self.readProblems = []
    }
}

/// A flag another flag requires: it must serve one of `values` (evaluated for the same unit and attributes).
public struct Prerequisite: Sendable, Equatable {
    /// The key of the required flag.
    public var flag: String
    /// The values of it that let the dependent flag evaluate its targeting.
    public var values: [JSONValue]

    /// Creates a prerequisite.
    public init(flag: String, values: [JSONValue]) {
        self.flag = flag
        self.values = values
    }

    /// The most prerequisites one flag may list, and the deepest chain of flags requiring flags.
    public static let maxCount = 16
    public static let maxDepth = 8
}

/// A flag: a key, a type, a kind, a default value, and targeting.
public struct Flag: Sendable, Equatable {
    /// The flag's key, `^[a-z0-9][a-z0-9._-]{0,127}$`.
    public var key: String
    /// The type of every value the flag serves.
    public var type: FlagType
    /// What the flag is for; sets its default lifetime.
    public var kind: FlagKind
    /// The only values a `string` flag may serve (an enum that apps read); `nil` for any string.
    public var values: [String]?
    /// What the flag does, for people.
    public var description: String?
    /// Who owns the flag (a team or a person).
    public var owner: String?
    /// The value served when nothing else applies.
    public var defaultValue: JSONValue
    /// The value served to everyone while killed; `nil` serves `defaultValue`.
    public var killValue: JSONValue?
    /// Whether the flag is killed (an emergency stop).
    public var killed: Bool
    /// The end of the flag's life.
    public var expiresAt: Date?
    /// The value served to everyone from `expiresAt` on; `nil` serves `defaultValue`.
    public var expiredValue: JSONValue?
    /// An archived flag is gone for clients (they get their compiled-in default) but kept in history.
    public var archived: Bool
    /// The salt for bucketing; `nil` uses the key. Flags sharing a salt share one population.
    public var salt: String?
    /// Values forced for one unit or one cohort.
    public var overrides: [Override]
    /// Targeting rules, first match wins.
    public var rules: [Rule]
    /// The flag-level rollout, after the rules.
    public var rollout: Rollout?
    /// Flags that must serve one of their listed values for this flag to evaluate its targeting; otherwise it
    /// serves its default with reason `PREREQUISITE_FAILED` (docs/core.md, "Prerequisites").
    public var prerequisites: [Prerequisite]

    /// Creates a flag with no targeting.
    public init(
        key: String, type: FlagType, kind: FlagKind = .release, defaultValue: JSONValue,
        description: String? = nil, owner: String? = nil, killValue: JSONValue? = nil, killed: Bool = false,
        expiresAt: Date? = nil, expiredValue: JSONValue? = nil, archived: Bool = false, salt: String? = nil,
        overrides: [Override] = [], rules: [Rule] = [], rollout: Rollout? = nil, prerequisites: [Prerequisite] = [],
        values: [String]? = nil
    ) {
        self.values = values
        self.key = key
        self.type = type
        self.kind = kind
        self.description = description
        self.owner = owner
        self.defaultValue = defaultValue
        self.killValue = killValue
        self.killed = killed
        self.expiresAt = expiresAt
        self.expiredValue = expiredValue
        self.archived = archived
        self.salt = salt
        self.overrides = overrides
        self.rules = rules
        self.rollout = rollout
        self.prerequisites = prerequisites
    }

    /// Whether the flag has any targeting; without it the default is served with reason `STATIC`.
    public var hasTargeting: Bool { !overrides.isEmpty || !rules.isEmpty || rollout != nil || !prerequisites.isEmpty }

    /// The most values an enum flag lists, and the longest a value may be: what apps report they know of each is
    /// bounded by these.
    public static let maxValues = 64
    public static let maxValueLength = 64

    /// The salt bucketing uses for this flag.
    public var effectiveSalt: String { salt ?? key }

    /// The names of the cohorts the flag uses: in cohort overrides, rule targets and `in_cohort` conditions.
    public var cohortNames: Set<String> {
        var names: Set<String> = []
        for override in overrides { if case .cohort(let name) = override.target { names.insert(name) } }
        for rule in rules {
            switch rule.target {
            case .cohort(let name): names.insert(name)
            case .conditions(let conditions): names.formUnion(conditions.cohortNames)
            }
        }
        return names
    }

    /// Whether the flag is debt at `time`: expired and not archived. `flagctl stale`, the dashboard and the list of
    /// sets count the same flags.
    public func isStale(at time: Date) -> Bool {
        !archived && isExpired(at: time)
    }

    /// Whether the flag's life has ended at `time` (SPEC §2 step 4: `time >= expiresAt`).
    public func isExpired(at time: Date) -> Bool {
        expiresAt.map { $0 <= time } ?? false
    }

    /// The value an expired flag serves to everyone: `expiredValue`, else the default. The evaluator compiles this
    /// rule, and generated code compiles it in for expired and archived flags.
    public var keptValue: JSONValue { expiredValue ?? defaultValue }

    /// What the flag serves at `time` to a unit no override, rule or rollout reaches, leaving a kill aside: the kept
    /// value once expired or archived (an archived flag served it until it was archived, and the code that still
    /// reads it should keep getting it), else the default.
    ///
    /// A kill is left aside because it is an emergency that ends with a restore; a default taken from it would keep
    /// serving the emergency value in every binary built meanwhile.
    public func baselineValue(at time: Date) -> JSONValue {
        archived || isExpired(at: time) ? keptValue : defaultValue
    }
}

/// The type of a flag's values. Unknown names from a newer writer are kept, not rejected.
public enum FlagType: Sendable, Hashable {
    case bool, int, double, string, json
    case unknown(String)

    /// Every type this build knows.
    public static let known: [FlagType] = [.bool, .int, .double, .string, .json]

    /// Reads a type name.
    public init(name: String) {
        self = Self.known.first { $0.name == name } ?? .unknown(name)
    }

    /// The name on the wire.
    public var name: String {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .double: "double"
        case .string: "string"
        case .json: "json"
        case .unknown(let name): name
        }
    }
}

/// What a flag is for. The kind sets the default lifetime (SPEC §1).
public enum FlagKind: Sendable, Hashable {
    case release, experiment, ops, killSwitch, permission
    case unknown(String)

    /// Every kind this build knows.
    public static let known: [FlagKind] = [.release, .experiment, .ops, .killSwitch, .permission]

    /// Reads a kind name.
    public init(name: String) {
        self = Self.known.first { $0.name == name } ?? .unknown(name)
    }

    /// The name on the wire.
    public var name: String {
        switch self {
        case .release: "release"
        case .experiment: "experiment"
        case .ops: "ops"
        case .killSwitch: "kill-switch"
        case .permission: "permission"
        case .unknown(let name): name
        }
    }

    /// The default lifetime in days: release 42, experiment 90, the others none.
    public var lifetimeDays: Int? {
        switch self {
        case .release: 42
        case .experiment: 90
        default: nil
        }
    }
}

/// A value forced for one unit or one cohort, optionally until a time.
public struct Override: Sendable, Equatable {
    /// Who the override is for.
    public enum Target: Sendable, Hashable {
        case unit(String)
        case cohort(String)
    }

    /// Who the override is for.
    public var target: Target
    /// The forced value.
    public var value: JSONValue
    /// When the override ends by itself; `nil` keeps it until removed.
    public var until: Date?

    /// Creates an override.
    public init(target: Target, value: JSONValue, until: Date? = nil) {
        self.target = target
        self.value = value
        self.until = until
    }
}

/// A targeting rule: who it matches and what it serves.
public struct Rule: Sendable, Equatable {
    /// Who a rule matches.
    public enum Target: Sendable, Equatable {
        case cohort(String)
        /// Inline conditions, all of which must match; an empty list matches everyone.
        case conditions([Condition])
    }

    /// What a rule serves.
    public enum Serve: Sendable, Equatable {
        case value(JSONValue)
        case rollout(Rollout)
        case split([Variant])
        /// A serve kind from a newer writer (its field names); the flag falls back with `PARSE_ERROR`.
        case unknown([String])
    }

    /// The rule's name, unique within the flag; reported as the result's variant.
    public var name: String
    /// Who the rule matches.
    public var target: Target
    /// What it serves.
    public var serve: Serve

    /// Creates a rule.
    public init(name: String, target: Target, serve: Serve) {
        self.name = name
        self.target = target
        self.serve = serve
    }
}

/// A rollout: a value served to a percentage of units, fixed or on a phased schedule.
public struct Rollout: Sendable, Equatable {
    /// How much of the population is in.
    public enum Stage: Sendable, Equatable {
        case percent(Double)
        case schedule([Step])
    }

    /// One step of a phased schedule.
    public struct Step: Sendable, Equatable {
        /// When the step starts.
        public var at: Date
        /// The percent from then on, 0–100.
        public var percent: Double

        /// Creates a step.
        public init(at: Date, percent: Double) {
            self.at = at
            self.percent = percent
        }
    }

    /// The value served to units inside the rollout.
    public var value: JSONValue
    /// The salt; `nil` uses the flag's.
    public var salt: String?
    /// The percent or the schedule.
    public var stage: Stage
    /// A paused schedule stays at the percent it had at this time.
    public var pausedAt: Date?

    /// Creates a rollout.
    public init(value: JSONValue, stage: Stage, salt: String? = nil, pausedAt: Date? = nil) {
        self.value = value
        self.stage = stage
        self.salt = salt
        self.pausedAt = pausedAt
    }
}

/// One arm of a multi-variant split.
public struct Variant: Sendable, Equatable {
    /// The variant's name, reported as the result's variant; `nil` reports `variant-<index>`.
    public var name: String?
    /// The value served to this arm.
    public var value: JSONValue
    /// The share in percent; a split's weights sum to 100.
    public var weight: Double

    /// Creates a variant.
    public init(name: String? = nil, value: JSONValue, weight: Double) {
        self.name = name
        self.value = value
        self.weight = weight
    }
}

/// One thing wrong with a document, at a JSON path such as `flags.new-checkout.rules[1].cohort`.
public struct Problem: Sendable, Hashable, CustomStringConvertible {
    /// Where: a JSON path from the document's root.
    public var path: String
    /// What is wrong, and what would be right.
    public var message: String

    /// Creates a problem.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `flags.x.rules[0].cohort: unknown cohort 'beta'`
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}
