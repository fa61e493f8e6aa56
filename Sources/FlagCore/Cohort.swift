/// A named group of units: explicit ids and/or attribute conditions.
public struct Cohort: Sendable, Equatable {
    /// What the cohort is, for people.
    public var description: String?
    /// Units always in the cohort.
    public var include: [String]
    /// Units never in the cohort through its conditions (`include` still wins).
    public var exclude: [String]
    /// Condition groups: the cohort matches if all conditions of any group match.
    public var groups: [[Condition]]

    /// Creates a cohort.
    public init(description: String? = nil, include: [String] = [], exclude: [String] = [], groups: [[Condition]] = [])
    {
        self.description = description
        self.include = include
        self.exclude = exclude
        self.groups = groups
    }

    /// The names of the cohorts this cohort uses through `in_cohort`.
    public var cohortNames: Set<String> {
        groups.reduce(into: []) { names, group in names.formUnion(group.cohortNames) }
    }
}

/// A test on one attribute of the evaluation context (SPEC §2.3).
public struct Condition: Sendable, Equatable {
    /// The attribute's name; `unitID` addresses the unit id.
    public var attribute: String
    /// The operator.
    public var op: Operator
    /// The operands, as strings.
    public var values: [String]

    /// Creates a condition.
    public init(attribute: String, op: Operator, values: [String]) {
        self.attribute = attribute
        self.op = op
        self.values = values
    }
}

/// A condition's operator (SPEC §2.3). Unknown names from a newer writer are kept, not rejected.
public enum Operator: Sendable, Hashable {
    case eq, neq, `in`, notIn, contains, startsWith, endsWith, matches
    case lt, lte, gt, gte
    case semverEq, semverLt, semverLte, semverGt, semverGte
    case before, after, exists, notExists, inCohort
    /// Only in the wire form of a flag's prerequisites (docs/core.md, "Prerequisites"), which a client that does
    /// not know them must not evaluate: an unknown operator makes it serve the flag's compiled-in default.
    case prerequisite
    case unknown(String)

    /// Every operator this build knows.
    public static let known: [Operator] = [
        .eq, .neq, .in, .notIn, .contains, .startsWith, .endsWith, .matches, .lt, .lte, .gt, .gte,
        .semverEq, .semverLt, .semverLte, .semverGt, .semverGte, .before, .after, .exists, .notExists, .inCohort,
        .prerequisite,
    ]

    /// The operators a rule's or a cohort's condition may use: every known one but `prerequisite`.
    public static let conditions: [Operator] = known.filter { $0 != .prerequisite }

    private static let byName: [String: Operator] = Dictionary(uniqueKeysWithValues: known.map { ($0.name, $0) })

    /// Reads an operator name.
    public init(name: String) {
        self = Self.byName[name] ?? .unknown(name)
    }

    /// The name on the wire.
    public var name: String {
        switch self {
        case .eq: "eq"
        case .neq: "neq"
        case .in: "in"
        case .notIn: "not_in"
        case .contains: "contains"
        case .startsWith: "starts_with"
        case .endsWith: "ends_with"
        case .matches: "matches"
        case .lt: "lt"
        case .lte: "lte"
        case .gt: "gt"
        case .gte: "gte"
        case .semverEq: "semver_eq"
        case .semverLt: "semver_lt"
        case .semverLte: "semver_lte"
        case .semverGt: "semver_gt"
        case .semverGte: "semver_gte"
        case .before: "before"
        case .after: "after"
        case .exists: "exists"
        case .notExists: "not_exists"
        case .inCohort: "in_cohort"
        case .prerequisite: "prerequisite"
        case .unknown(let name): name
        }
    }
}

extension Sequence<Condition> {
    /// The cohorts these conditions name through `in_cohort`.
    var cohortNames: Set<String> {
        reduce(into: []) { names, condition in
            if condition.op == .inCohort { names.formUnion(condition.values) }
        }
    }
}
