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
    /// operators of its rules and of the cohorts it uses, transitively (a cycle is followed once).
    public static func needs(of flag: Flag, schema: Int, cohort: (String) -> Cohort?) -> ClientCapabilities {
        var operators: Set<String> = []
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
