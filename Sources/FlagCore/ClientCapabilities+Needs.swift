/// What a client must be able to evaluate for each flag of a set: the compatibility gate's question.
extension FlagSet {
    /// What a client needs to evaluate `flag` of this set: the document's schema, and every operator in the flag's
    /// rules and in the cohorts it uses, and the cohorts those use, in turn. A client that lacks one serves the
    /// flag's compiled-in default.
    public func needs(of flag: Flag) -> ClientCapabilities {
        ClientCapabilities.needs(of: flag, schema: schema) { cohorts[$0] }
    }
}

extension ClientCapabilities {
    /// What a client needs to evaluate `flag` in a document of `schema` whose cohorts `cohort` looks up: the
    /// operators of its rules and of the cohorts it uses, transitively (a cycle is followed once), and
    /// `prerequisite` when it has prerequisites.
    public static func needs(of flag: Flag, schema: Int, cohort: (String) -> Cohort?) -> ClientCapabilities {
        // Prerequisites travel as a rule of `prerequisite` conditions (Flag+Prerequisites.swift).
        var operators: Set<String> = flag.prerequisites.isEmpty ? [] : [Operator.prerequisite.name]
        for rule in flag.rules {
            if case .conditions(let conditions) = rule.target {
                for condition in conditions { operators.insert(condition.op.name) }
            }
        }
        var seen: Set<String> = []
        var pending = Array(flag.cohortNames)
        while let name = pending.popLast() {
            guard seen.insert(name).inserted, let found = cohort(name) else { continue }
            operators.formUnion(Self.operators(of: found))
            pending.append(contentsOf: found.cohortNames)
        }
        return ClientCapabilities(schema: schema, operators: operators)
    }

    /// The operators of a cohort's own conditions (not of the cohorts it names).
    public static func operators(of cohort: Cohort) -> Set<String> {
        var operators: Set<String> = []
        for group in cohort.groups {
            for condition in group { operators.insert(condition.op.name) }
        }
        return operators
    }
}

/// The compatibility gate's rules (docs/telemetry.md), in one place for the server's gate and for
/// `flagctl lint --against`: what a write introduces, who lacks it, and when that refuses the write.
public enum CompatibilityGate {
    /// Something a client must be able to evaluate.
    public enum Construct: Sendable, Hashable {
        /// A condition operator, by its wire name.
        case `operator`(String)
        /// A document schema.
        case schema(Int)

        /// `operator "semver_gte"`, `schema 2`.
        public var description: String {
            switch self {
            case .operator(let name): "operator \"\(name)\""
            case .schema(let schema): "schema \(schema)"
            }
        }

        /// Whether a client with `capabilities` cannot evaluate it.
        public func isLacking(in capabilities: ClientCapabilities) -> Bool {
            switch self {
            case .operator(let name): !capabilities.operators.contains(name)
            case .schema(let schema): capabilities.schema < schema
            }
        }
    }

    /// Whether `lacking` of `active` instances refuse a write: more than 0.1 % of them.
    public static func refuses(lacking: Int, active: Int) -> Bool {
        lacking * 1000 > active
    }

    /// What a flag whose version needs `now` introduces over its version before, which needed `before` (`nil`: the
    /// flag is new): the schema if it grew, and each operator it did not need.
    public static func introduced(needing now: ClientCapabilities, before: ClientCapabilities?) -> [Construct] {
        var constructs: [Construct] = []
        if now.schema > (before?.schema ?? 0) { constructs.append(.schema(now.schema)) }
        for name in now.operators.subtracting(before?.operators ?? []).sorted(by: utf8Less) {
            constructs.append(.operator(name))
        }
        return constructs
    }

    /// The operators a cohort's version `now` uses in its own conditions that its version `before` did not.
    public static func introduced(by now: Cohort, before: Cohort?) -> [Construct] {
        let old = before.map(ClientCapabilities.operators(of:)) ?? []
        return ClientCapabilities.operators(of: now).subtracting(old).sorted(by: utf8Less).map { .operator($0) }
    }
}
