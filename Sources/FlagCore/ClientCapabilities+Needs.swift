/// What a client must be able to evaluate for each flag of a set: the compatibility gate's question.
extension FlagSet {
    /// What a client needs to evaluate `flag` of this set: the document's schema, and every operator in the flag's
    /// rules and in the cohorts it uses, and the cohorts those use, in turn. A client that lacks one serves the
    /// flag's compiled-in default.
    public func needs(of flag: Flag) -> ClientCapabilities {
        var operators: Set<String> = []
        for rule in flag.rules {
            if case .conditions(let conditions) = rule.target {
                for condition in conditions { operators.insert(condition.op.name) }
            }
        }
        var seen: Set<String> = []
        var pending = Array(flag.cohortNames)
        while let name = pending.popLast() {
            guard seen.insert(name).inserted, let cohort = cohorts[name] else { continue }
            for group in cohort.groups {
                for condition in group { operators.insert(condition.op.name) }
            }
            pending.append(contentsOf: cohort.cohortNames)
        }
        return ClientCapabilities(schema: schema, operators: operators)
    }
}
