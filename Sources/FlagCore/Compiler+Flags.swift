import Foundation

extension Compiler {
    /// Checks one flag and builds its plan; any problem of its own, or a broken cohort it uses, breaks only it.
    mutating func compile(_ flag: Flag) -> CompiledFlag {
        let path = "flags.\(flag.key)"
        let start = problems.count
        flagBreakage = nil
        if !isValidKey(flag.key) { report(path, "'\(flag.key)' is not a valid flag key: \(Self.keyRule)") }
        if case .unknown(let name) = flag.type {
            report(
                "\(path).type",
                "unknown type '\(name)' (one of \(FlagType.known.map(\.name).joined(separator: ", ")))")
        }
        if case .unknown(let name) = flag.kind {
            report(
                "\(path).kind",
                "unknown kind '\(name)' (one of \(FlagKind.known.map(\.name).joined(separator: ", ")))")
        }
        checkValues(of: flag, path: "\(path).values")
        check(flag.defaultValue, of: flag, at: "\(path).default")
        if let killValue = flag.killValue { check(killValue, of: flag, at: "\(path).killValue") }
        if let expiredValue = flag.expiredValue { check(expiredValue, of: flag, at: "\(path).expiredValue") }
        if let salt = flag.salt, salt.isEmpty {
            report("\(path).salt", "must not be empty; leave it out to use the key")
        }

        var unitOverrides: [String: FlagPlan.Forced] = [:]
        var cohortOverrides: [FlagPlan.CohortForced] = []
        for (index, override) in flag.overrides.enumerated() {
            func overridePath() -> String { "\(path).overrides[\(index)]" }
            check(override.value, of: flag, at: "\(overridePath()).value")
            let until = override.until?.timeIntervalSince1970
            switch override.target {
            case .unit(let unit):
                if unit.isEmpty { report("\(overridePath()).unit", "must not be empty") }
                if unitOverrides[unit] == nil {
                    unitOverrides[unit] = FlagPlan.Forced(value: override.value, until: until)
                }
            case .cohort(let name):
                if let cohort = cohort(name, path: "\(overridePath()).cohort") {
                    cohortOverrides.append(
                        FlagPlan.CohortForced(cohort: cohort, name: name, value: override.value, until: until))
                }
            }
        }

        var rules: [FlagPlan.Rule] = []
        var ruleNames: Set<String> = []
        for (index, rule) in flag.rules.enumerated() {
            func rulePath() -> String { "\(path).rules[\(index)]" }
            if rule.name.isEmpty {
                report("\(rulePath()).name", "missing; every rule needs a name, reported as the variant")
            } else if !ruleNames.insert(rule.name).inserted {
                report("\(rulePath()).name", "another rule of this flag is already named '\(rule.name)'")
            }
            if let compiled = compile(rule, of: flag, path: rulePath()) { rules.append(compiled) }
        }

        var rollout: CompiledRollout?
        if let flagRollout = flag.rollout {
            rollout = compile(flagRollout, of: flag, path: "\(path).rollout")
        }
        checkPrerequisites(of: flag, path: "\(path).prerequisites")

        if problems.count > start { return .broken(problems[start].description) }
        if let flagBreakage { return .broken(flagBreakage) }
        if flag.archived { return .archived }
        let plan = FlagPlan(
            type: flag.type,
            killed: flag.killed,
            killValue: flag.killValue ?? flag.defaultValue,
            expiresAt: flag.expiresAt?.timeIntervalSince1970,
            expiredValue: flag.keptValue,
            unitOverrides: unitOverrides.isEmpty ? nil : unitOverrides,
            cohortOverrides: cohortOverrides,
            rules: rules,
            rollout: rollout,
            prerequisites: flag.prerequisites,
            defaultValue: flag.defaultValue,
            defaultReason: flag.hasTargeting ? .default : .static)
        return .ready(plan)
    }

    /// What a flag's prerequisites must be on their own; what they must be in the set (a flag it has, values of
    /// its type, no cycle, no chain deeper than `Prerequisite.maxDepth`) is `PrerequisiteGraph`'s to check.
    private mutating func checkPrerequisites(of flag: Flag, path: @autoclosure () -> String) {
        if flag.prerequisites.count > Prerequisite.maxCount {
            report(
                path(),
                "\(flag.prerequisites.count) prerequisites; a flag may list at most \(Prerequisite.maxCount)")
        }
        var seen: Set<String> = []
        for (index, prerequisite) in flag.prerequisites.enumerated() {
            func itemPath() -> String { "\(path())[\(index)]" }
            if prerequisite.flag == flag.key {
                report("\(itemPath()).flag", "a flag cannot require itself (\(flag.key) → \(flag.key))")
            } else if !isValidKey(prerequisite.flag) {
                report("\(itemPath()).flag", "'\(prerequisite.flag)' is not a valid flag key: \(Self.keyRule)")
            } else if !seen.insert(prerequisite.flag).inserted {
                report("\(itemPath()).flag", "'\(prerequisite.flag)' is listed twice; list its values once")
            }
            if prerequisite.values.isEmpty {
                report("\(itemPath()).values", "list at least one value that '\(prerequisite.flag)' must serve")
            }
        }
    }

    private mutating func compile(_ rule: Rule, of flag: Flag, path: @autoclosure () -> String) -> FlagPlan.Rule? {
        let target: FlagPlan.Rule.Target
        switch rule.target {
        case .cohort(let name):
            guard let index = cohort(name, path: "\(path()).cohort") else { return nil }
            target = .cohort(index)
        case .conditions(let conditions):
            var matchers: [Matcher] = []
            for (index, condition) in conditions.enumerated() {
                if let matcher = compile(condition, path: "\(path()).conditions[\(index)]") {
                    for cohort in matcher.cohorts {
                        if let why = brokenCohorts[cohort], flagBreakage == nil {
                            flagBreakage = "cohort '\(cohortNames[cohort])': \(why)"
                        }
                    }
                    matchers.append(matcher)
                }
            }
            target = .conditions(matchers)
        }
        switch rule.serve {
        case .value(let value):
            check(value, of: flag, at: "\(path()).value")
            return FlagPlan.Rule(name: rule.name, target: target, serve: .value(value))
        case .rollout(let rollout):
            guard let compiled = compile(rollout, of: flag, path: "\(path()).rollout") else { return nil }
            return FlagPlan.Rule(name: rule.name, target: target, serve: .rollout(compiled))
        case .split(let variants):
            guard let split = compile(variants, of: flag, path: "\(path()).split") else { return nil }
            return FlagPlan.Rule(name: rule.name, target: target, serve: .split(split))
        case .unknown(let fields):
            report(path(), "serves something this build does not know (\(fields.joined(separator: ", ")))")
            return nil
        }
    }

    private mutating func compile(_ rollout: Rollout, of flag: Flag, path: @autoclosure () -> String)
        -> CompiledRollout?
    {
        let start = problems.count
        check(rollout.value, of: flag, at: "\(path()).value")
        if let salt = rollout.salt, salt.isEmpty { report("\(path()).salt", "must not be empty; leave it out") }
        var fixed: Int?
        var steps: [(at: Double, threshold: Int)] = []
        switch rollout.stage {
        case .percent(let percent):
            checkPercent(percent, at: "\(path()).percent")
            if rollout.pausedAt != nil { report("\(path()).pausedAt", "only a schedule can be paused") }
            fixed = RolloutMath.threshold(percent: percent)
        case .schedule(let schedule):
            if schedule.isEmpty { report("\(path()).schedule", "a schedule needs at least one step") }
            for (index, step) in schedule.enumerated() {
                checkPercent(step.percent, at: "\(path()).schedule[\(index)].percent")
                if index > 0 && step.at <= schedule[index - 1].at {
                    report(
                        "\(path()).schedule[\(index)].at",
                        "steps must be sorted by time: \(ISO8601.format(step.at)) is not after "
                            + ISO8601.format(schedule[index - 1].at))
                }
                steps.append((step.at.timeIntervalSince1970, RolloutMath.threshold(percent: step.percent)))
            }
        }
        guard problems.count == start else { return nil }
        return CompiledRollout(
            bucketer: Bucketer(salt: rollout.salt ?? flag.effectiveSalt), value: rollout.value, fixed: fixed,
            steps: steps, pausedAt: rollout.pausedAt?.timeIntervalSince1970)
    }

    private mutating func compile(_ variants: [Variant], of flag: Flag, path: @autoclosure () -> String)
        -> CompiledSplit?
    {
        let start = problems.count
        if variants.isEmpty { report(path(), "a split needs at least one variant") }
        var names: Set<String> = []
        var bounds: [Int] = []
        var arms: [(name: String, value: JSONValue)] = []
        var total = 0.0
        for (index, variant) in variants.enumerated() {
            func variantPath() -> String { "\(path())[\(index)]" }
            check(variant.value, of: flag, at: "\(variantPath()).value")
            if !(0...100).contains(variant.weight) {
                report("\(variantPath()).weight", "\(variant.weight) is outside 0–100")
            }
            let name = VariantName.arm(variant, at: index)
            if !names.insert(name).inserted {
                report("\(variantPath()).name", "another variant of this split is already named '\(name)'")
            }
            total += variant.weight
            bounds.append(RolloutMath.threshold(percent: total))
            arms.append((name, variant.value))
        }
        if !variants.isEmpty && abs(total - 100) > 1e-9 {
            report(path(), "split weights sum to \(JSONWriter.text(total)), not 100")
        }
        guard problems.count == start else { return nil }
        return CompiledSplit(bucketer: Bucketer(salt: flag.effectiveSalt), bounds: bounds, arms: arms)
    }

    private mutating func checkPercent(_ percent: Double, at path: @autoclosure () -> String) {
        if !(0...100).contains(percent) { report(path(), "\(JSONWriter.text(percent)) is outside 0–100") }
    }

    /// Reports a value `flag` could serve that is not of its type, or not one of its `values`.
    private mutating func check(_ value: JSONValue, of flag: Flag, at path: @autoclosure () -> String) {
        if case .unknown = flag.type { return }
        if !value.conforms(to: flag.type) {
            report(
                path(),
                "expected a value of type \(flag.type.name), found "
                    + String(decoding: value.canonicalBytes, as: UTF8.self))
        } else if let values = flag.values, case .string(let text) = value, !values.contains(text) {
            report(path(), "\"\(text)\" is not one of the flag's values (\(values.joined(separator: ", ")))")
        }
    }

    /// What a flag's `values` must be: only on a `string` flag, 1 to `Flag.maxValues` distinct strings of 1 to
    /// `Flag.maxValueLength` characters.
    private mutating func checkValues(of flag: Flag, path: @autoclosure () -> String) {
        guard let values = flag.values else { return }
        if flag.type != .string {
            report(path(), "only a string flag lists its values; this is a \(flag.type.name) flag")
            return
        }
        if values.isEmpty || values.count > Flag.maxValues {
            report(path(), "list 1 to \(Flag.maxValues) values, not \(values.count)")
        }
        var seen: Set<String> = []
        for (index, value) in values.enumerated() {
            if value.isEmpty || value.count > Flag.maxValueLength {
                report("\(path())[\(index)]", "a value has 1 to \(Flag.maxValueLength) characters, not \(value.count)")
            }
            if !seen.insert(value).inserted { report("\(path())[\(index)]", "\"\(value)\" is listed twice") }
        }
    }
}

extension JSONWriter {
    /// A number as people read it: `50`, `33.5`.
    static func text(_ number: Double) -> String {
        var writer = JSONWriter()
        writer.number(number)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
