import Foundation

/// A flag set prepared for evaluation: cohorts resolved to indexes, operands parsed, regular expressions and
/// bucketing salts compiled once. Immutable and safe to share between threads.
///
/// ```swift
/// let compiled = CompiledFlagSet(try FlagSet.decode(bytes))
/// let detail = compiled.evaluate("new-checkout", default: false,
///                                context: EvaluationContext(unitID: "u-42"), at: Date())
/// ```
public final class CompiledFlagSet: Sendable {
    /// The set this was compiled from.
    public let flagSet: FlagSet
    /// Every problem found in the set: what `lint` prints and what makes a write be rejected.
    /// A flag with a problem of its own (or in a cohort it uses) evaluates to the caller's default with
    /// `PARSE_ERROR`; every other flag evaluates normally.
    public let problems: [Problem]
    let flags: [String: CompiledFlag]
    let cohorts: [CompiledCohort]

    /// Compiles a set; never fails: problems are collected in `problems` and confined to the flags they touch.
    public init(_ set: FlagSet) {
        var compiler = Compiler(set: set)
        let (flags, cohorts) = compiler.run()
        self.flagSet = set
        self.flags = flags
        self.cohorts = cohorts
        self.problems = compiler.problems
    }

    /// The set's version.
    public var version: Int { flagSet.version }

    /// Evaluates a flag for a caller expecting `Value`; never throws (SPEC §2).
    @inlinable
    public func evaluate<Value: FlagValue>(
        _ key: String, default fallback: Value, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<Value> {
        let detail = evaluate(key, type: Value.flagType, default: fallback.flagValue, context: context, at: now)
        guard let value = Value(flagValue: detail.value) else {
            return EvaluationDetail(
                value: fallback, reason: .error, errorCode: .typeMismatch,
                errorMessage: "flag '\(key)' served a value that is not a \(Value.flagType.name)", version: version)
        }
        return detail.map { _ in value }
    }

    /// Evaluates a flag for a caller expecting `type`, with `fallback` as the compiled-in default.
    public func evaluate(
        _ key: String, type: FlagType, default fallback: JSONValue, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<JSONValue> {
        resolve(key, type: type, default: fallback, context: context, at: now, trace: nil)
    }

    /// Evaluates like `evaluate` and also returns each step considered, for `flagctl eval --explain`.
    public func explain(
        _ key: String, type: FlagType? = nil, default fallback: JSONValue? = nil, context: EvaluationContext,
        at now: Date
    ) -> (detail: EvaluationDetail<JSONValue>, steps: [String]) {
        var steps: [String] = []
        let flagType: FlagType
        if let type {
            flagType = type
        } else if case .ready(let plan) = flags[key] {
            flagType = plan.type
        } else {
            flagType = .json
        }
        let detail = resolve(
            key, type: flagType, default: fallback ?? .null, context: context, at: now,
            trace: { steps.append($0) })
        return (detail, steps)
    }
}

// MARK: - Evaluation order (SPEC §2)

extension CompiledFlagSet {
    func resolve(
        _ key: String, type: FlagType, default fallback: JSONValue, context: EvaluationContext, at now: Date,
        trace: ((String) -> Void)?
    ) -> EvaluationDetail<JSONValue> {
        let version = flagSet.version
        func fail(_ reason: Reason, _ code: ErrorCode, _ message: String) -> EvaluationDetail<JSONValue> {
            trace?(message)
            return EvaluationDetail(value: fallback, reason: reason, errorCode: code, errorMessage: message, version: version)
        }
        func serve(_ value: JSONValue, _ reason: Reason, _ variant: String, _ why: @autoclosure () -> String)
            -> EvaluationDetail<JSONValue>
        {
            trace?(why())
            return EvaluationDetail(value: value, reason: reason, variant: variant, version: version)
        }

        guard let compiled = flags[key] else {
            return fail(.default, .flagNotFound, "flag '\(key)' is not in set '\(flagSet.name)' v\(version)")
        }
        let plan: FlagPlan
        switch compiled {
        case .archived: return fail(.default, .flagNotFound, "flag '\(key)' is archived")
        case .broken(let message): return fail(.error, .parseError, "flag '\(key)' cannot be evaluated: \(message)")
        case .ready(let ready): plan = ready
        }
        guard plan.type == type else {
            return fail(.error, .typeMismatch, "flag '\(key)' is a \(plan.type.name) flag, not \(type.name)")
        }
        if plan.killed { return serve(plan.killValue, .disabled, "kill", "killed: serving the kill value") }
        let seconds = now.timeIntervalSince1970
        if let expiresAt = plan.expiresAt, seconds >= expiresAt {
            return serve(plan.expiredValue, .static, "expired", "expired: serving the kept value")
        }
        if let overrides = plan.unitOverrides, let override = overrides[context.unitID] {
            if override.isActive(at: seconds) {
                return serve(override.value, .targetingMatch, "override", "override for unit '\(context.unitID)'")
            }
            trace?("override for unit '\(context.unitID)' ended")
        }
        for override in plan.cohortOverrides where override.isActive(at: seconds) {
            if matches(cohort: override.cohort, context) {
                return serve(
                    override.value, .targetingMatch, "override:\(override.name)",
                    "override for cohort '\(override.name)'")
            }
            trace?("not in cohort '\(override.name)' (override)")
        }
        for rule in plan.rules {
            let targeted: Bool
            switch rule.target {
            case .cohort(let index): targeted = matches(cohort: index, context)
            case .conditions(let conditions): targeted = matchesAll(conditions, context)
            }
            guard targeted else {
                trace?("rule '\(rule.name)': no match")
                continue
            }
            switch rule.serve {
            case .value(let value):
                return serve(value, .targetingMatch, rule.name, "rule '\(rule.name)': match")
            case .rollout(let rollout):
                let bucket = rollout.bucketer.bucket(context.unitID)
                let threshold = rollout.threshold(at: seconds)
                if bucket < threshold {
                    return serve(
                        rollout.value, .split, rule.name,
                        "rule '\(rule.name)': match, bucket \(bucket) < \(threshold) (inside the rollout)")
                }
                trace?("rule '\(rule.name)': match, but bucket \(bucket) >= \(threshold) (outside the rollout)")
            case .split(let split):
                let bucket = split.bucketer.bucket(context.unitID)
                let arm = split.arm(for: bucket)
                return serve(
                    arm.value, .split, arm.name, "rule '\(rule.name)': match, bucket \(bucket) → variant '\(arm.name)'")
            }
        }
        if let rollout = plan.rollout {
            let bucket = rollout.bucketer.bucket(context.unitID)
            let threshold = rollout.threshold(at: seconds)
            if bucket < threshold {
                return serve(rollout.value, .split, "rollout", "rollout: bucket \(bucket) < \(threshold) (inside)")
            }
            trace?("rollout: bucket \(bucket) >= \(threshold) (outside)")
        }
        return serve(plan.defaultValue, plan.defaultReason, "default", "serving the flag's default")
    }

    @inline(__always)
    func matchesAll(_ matchers: [Matcher], _ context: EvaluationContext) -> Bool {
        for matcher in matchers where !matcher.matches(context, in: self) { return false }
        return true
    }

    /// Whether the unit is in a cohort: listed in `include`, or not in `exclude` and matching any group.
    func matches(cohort index: Int, _ context: EvaluationContext) -> Bool {
        let cohort = cohorts[index]
        if !cohort.include.isEmpty && cohort.include.contains(context.unitID) { return true }
        if !cohort.exclude.isEmpty && cohort.exclude.contains(context.unitID) { return false }
        for group in cohort.groups where matchesAll(group, context) { return true }
        return false
    }
}
