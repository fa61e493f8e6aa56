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
    /// `override:COHORT` for each cohort override, the name of each rule serving a value or a rollout, and each split
    /// arm's name (a split reports its arm, not its rule). `nil` (reported in telemetry as `""`) is not among them: it
    /// stands for no variant (a local override, an error).
    public var reportableVariants: Set<String> {
        var names = Set(Program.FixedName.allCases.map(\.text))
        for override in overrides {
            if case .cohort(let cohort) = override.target { names.insert(VariantName.cohortOverride(cohort)) }
        }
        for rule in rules {
            if case .split(let arms) = rule.serve {
                for (index, arm) in arms.enumerated() { names.insert(VariantName.arm(arm, at: index)) }
            } else {
                names.insert(rule.name)
            }
        }
        return names
    }
}
