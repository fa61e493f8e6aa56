import Foundation

/// How a flag evaluates, prepared once per set.
enum CompiledFlag: Sendable {
    case ready(FlagPlan)
    case archived
    /// The flag (or a cohort it uses) has a problem; it serves the caller's default with `PARSE_ERROR`.
    case broken(String)
}

/// A validated flag as the compiler builds it; `ProgramBuilder` lowers it into the flat records evaluation reads.
final class FlagPlan: Sendable {
    struct Forced: Sendable {
        let value: JSONValue
        let until: Double?
    }

    struct CohortForced: Sendable {
        let cohort: Int
        let name: String
        let value: JSONValue
        let until: Double?
    }

    final class Rule: Sendable {
        enum Target: Sendable {
            case cohort(Int)
            case conditions([Matcher])
        }
        enum Serve: Sendable {
            case value(JSONValue)
            case rollout(CompiledRollout)
            case split(CompiledSplit)
        }
        let name: String
        let target: Target
        let serve: Serve

        init(name: String, target: Target, serve: Serve) {
            self.name = name
            self.target = target
            self.serve = serve
        }
    }

    let type: FlagType
    let killed: Bool
    let killValue: JSONValue
    let expiresAt: Double?
    let expiredValue: JSONValue
    /// Unit id → its first override; `nil` when the flag has none (no hashing on the hot path).
    let unitOverrides: [String: Forced]?
    let cohortOverrides: [CohortForced]
    let rules: [Rule]
    let rollout: CompiledRollout?
    /// Checked after a kill and an expiry, before everything else; the set evaluates the flags they name.
    let prerequisites: [Prerequisite]
    let defaultValue: JSONValue
    let defaultReason: Reason

    init(
        type: FlagType, killed: Bool, killValue: JSONValue, expiresAt: Double?, expiredValue: JSONValue,
        unitOverrides: [String: Forced]?, cohortOverrides: [CohortForced], rules: [Rule], rollout: CompiledRollout?,
        prerequisites: [Prerequisite], defaultValue: JSONValue, defaultReason: Reason
    ) {
        self.prerequisites = prerequisites
        self.type = type
        self.killed = killed
        self.killValue = killValue
        self.expiresAt = expiresAt
        self.expiredValue = expiredValue
        self.unitOverrides = unitOverrides
        self.cohortOverrides = cohortOverrides
        self.rules = rules
        self.rollout = rollout
        self.defaultValue = defaultValue
        self.defaultReason = defaultReason
    }
}

final class CompiledRollout: Sendable {
    let bucketer: Bucketer
    let value: JSONValue
    /// A fixed threshold, or the schedule's steps as (seconds, threshold).
    let fixed: Int?
    let steps: [(at: Double, threshold: Int)]
    let pausedAt: Double?

    init(bucketer: Bucketer, value: JSONValue, fixed: Int?, steps: [(at: Double, threshold: Int)], pausedAt: Double?) {
        self.bucketer = bucketer
        self.value = value
        self.fixed = fixed
        self.steps = steps
        self.pausedAt = pausedAt
    }
}

final class CompiledSplit: Sendable {
    let bucketer: Bucketer
    /// Cumulative upper bounds of each arm's bucket range.
    let bounds: [Int]
    let arms: [(name: String, value: JSONValue)]

    init(bucketer: Bucketer, bounds: [Int], arms: [(name: String, value: JSONValue)]) {
        self.bucketer = bucketer
        self.bounds = bounds
        self.arms = arms
    }
}

final class CompiledCohort: Sendable {
    let include: Set<String>
    let exclude: Set<String>
    let groups: [[Matcher]]

    init(include: Set<String>, exclude: Set<String>, groups: [[Matcher]]) {
        self.include = include
        self.exclude = exclude
        self.groups = groups
    }
}
