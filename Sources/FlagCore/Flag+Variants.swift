/// The names an evaluation reports as its variant (`EvaluationDetail.variant`), made here for the evaluator and for
/// the server, which keeps client telemetry only for variants a flag can report.
enum VariantName {
    /// An override of the cohort `cohort`.
    static func cohortOverride(_ cohort: String) -> String { "override:\(cohort)" }

    /// The arm at `index` of a split: its own name, or `variant-<index>`.
    static func arm(_ variant: Variant, at index: Int) -> String { variant.name ?? "variant-\(index)" }
}

extension Flag {
    /// Every variant an evaluation of this flag can report: `kill`, `expired`, `override`, `rollout` and `default`,
    /// `override:COHORT` for each cohort override, each rule's name, and each split arm's name. `nil` (reported in
    /// telemetry as `""`) is not among them: it stands for no variant (a local override, an error).
    public var reportableVariants: Set<String> {
        var names = Set(Program.FixedName.allCases.map(\.text))
        for override in overrides {
            if case .cohort(let cohort) = override.target { names.insert(VariantName.cohortOverride(cohort)) }
        }
        for rule in rules {
            names.insert(rule.name)
            if case .split(let arms) = rule.serve {
                for (index, arm) in arms.enumerated() { names.insert(VariantName.arm(arm, at: index)) }
            }
        }
        return names
    }
}
