import Foundation

/// Lowers what `Compiler` validated into the flat tables of a `Program`: one flag (its plan, rules and matchers),
/// or the cohorts of a set. Cohort indexes stay the compiler's, which `CompiledCohorts` keeps for the set.
struct ProgramBuilder {
    var flags: [FlagRecord] = []
    var rules: [RuleRecord] = []
    var conditions: [ConditionRecord] = []
    var groups: [Span] = []
    var cohorts: [CohortRecord] = []
    var unitSets: [SetRecord] = []
    var unitSlots: [KeySlot] = []
    var forced: [ForcedRecord] = []
    var cohortForced: [CohortForcedRecord] = []
    var rollouts: [RolloutRecord] = []
    var steps: [StepRecord] = []
    var splits: [SplitRecord] = []
    var arms: [ArmRecord] = []
    var prerequisites: [PrerequisiteRecord] = []
    var bytes: [UInt8] = []
    var stringOperands: [ByteSpan] = []
    var numberOperands: [Double] = []
    var versionOperands: [VersionRecord] = []
    var cohortOperands: [Int32] = []
    var values: [JSONValue] = []
    /// Begins with the variant names of `Program.FixedName`, in that order.
    var names: [String] = Program.FixedName.allCases.map(\.text)
    var fullVersions: [SemanticVersion] = []
    var patterns: [Pattern] = []
    var types: [FlagType] = []
    private var salts: [String: Int32] = [:]
    /// Numbers the flags a flag requires (`PrerequisiteRecord.slot`).
    private let sessionSlots: SessionSlots?

    /// The program of one flag, its record at index 0; `sessionSlots` number the flags it requires.
    init(flag compiled: CompiledFlag, key: String, sessionSlots: SessionSlots? = nil) {
        self.sessionSlots = sessionSlots
        flags = [lower(compiled, key: key)]
    }

    /// The program of a set's cohorts, by their compiler's indexes.
    init(cohorts compiledCohorts: [CompiledCohort]) {
        sessionSlots = nil
        for cohort in compiledCohorts { cohorts.append(lower(cohort)) }
    }

    // MARK: - Shared pieces

    private mutating func append(bytes text: String) -> ByteSpan {
        let start = Int32(bytes.count)
        bytes.append(contentsOf: text.utf8)
        return ByteSpan(start: start, count: Int32(bytes.count) - start)
    }

    private mutating func value(_ value: JSONValue) -> Int32 {
        values.append(value)
        return Int32(values.count - 1)
    }

    private mutating func name(_ name: String) -> Int32 {
        names.append(name)
        return Int32(names.count - 1)
    }

    private mutating func salt(_ salt: String) -> Int32 {
        if let known = salts[salt] { return known }
        let id = Int32(salts.count)
        salts[salt] = id
        return id
    }

    /// An open-addressing table of `keys` (already in `bytes`) with a power-of-two count of slots, at least twice
    /// as many as keys so that probes stay short.
    private func table(_ keys: [(ByteSpan, Int32)]) -> [KeySlot] {
        var capacity = 2
        while capacity < keys.count * 2 { capacity *= 2 }
        var run = [KeySlot](repeating: KeySlot(), count: capacity)
        let mask = capacity - 1
        for (key, target) in keys {
            let hash = bytes.withUnsafeBytes {
                ByteHash.hash(UnsafeRawBufferPointer(rebasing: $0[Int(key.start)..<Int(key.start + key.count)]))
            }
            var index = Int(truncatingIfNeeded: hash) & mask
            while run[index].target >= 0 { index = (index + 1) & mask }
            run[index] = KeySlot(hash: hash, key: key, target: target)
        }
        return run
    }

    /// A unit-id set or map: `SetRecord` index, or -1 when there are no entries.
    private mutating func unitSet(_ entries: [(String, Int32)]) -> Int32 {
        guard !entries.isEmpty else { return -1 }
        let keys = entries.map { (append(bytes: $0.0), $0.1) }
        let run = table(keys)
        unitSets.append(SetRecord(start: Int32(unitSlots.count), mask: Int32(run.count - 1)))
        unitSlots += run
        return Int32(unitSets.count - 1)
    }

    // MARK: - Cohorts and conditions

    private mutating func lower(_ cohort: CompiledCohort) -> CohortRecord {
        let include = unitSet(cohort.include.map { ($0, 0) })
        let exclude = unitSet(cohort.exclude.map { ($0, 0) })
        let first = Int32(groups.count)
        for group in cohort.groups { groups.append(lower(group)) }
        return CohortRecord(
            include: include, exclude: exclude, groups: Span(start: first, count: Int32(groups.count) - first))
    }

    private mutating func lower(_ matchers: [Matcher]) -> Span {
        let start = Int32(conditions.count)
        for matcher in matchers { conditions.append(lower(matcher)) }
        return Span(start: start, count: Int32(conditions.count) - start)
    }

    private mutating func lower(_ matcher: Matcher) -> ConditionRecord {
        let kind: ConditionRecord.Kind
        let operands: Span
        func span(_ start: Int, _ end: Int) -> Span { Span(start: Int32(start), count: Int32(end - start)) }
        switch matcher.kind {
        case .equals, .equalsNone, .contains, .startsWith, .endsWith:
            kind =
                switch matcher.kind {
                case .equals: .equals
                case .equalsNone: .equalsNone
                case .contains: .contains
                case .startsWith: .startsWith
                default: .endsWith
                }
            let start = stringOperands.count
            for operand in matcher.strings { stringOperands.append(append(bytes: operand)) }
            operands = span(start, stringOperands.count)
        case .matches:
            kind = .matches
            let start = patterns.count
            patterns += matcher.patterns
            operands = span(start, patterns.count)
        case .number, .instant:
            kind = matcher.kind == .number ? .number : .instant
            let start = numberOperands.count
            numberOperands += matcher.numbers
            operands = span(start, numberOperands.count)
        case .semver:
            kind = .semver
            let start = versionOperands.count
            for operand in matcher.versions {
                fullVersions.append(operand.version)
                versionOperands.append(VersionRecord(plain: operand.plain, full: Int32(fullVersions.count - 1)))
            }
            operands = span(start, versionOperands.count)
        case .exists, .notExists:
            kind = matcher.kind == .exists ? .exists : .notExists
            operands = .empty
        case .inCohort:
            kind = .inCohort
            let start = cohortOperands.count
            cohortOperands += matcher.cohorts.map { Int32($0) }
            operands = span(start, cohortOperands.count)
        }
        return ConditionRecord(
            kind: kind, comparison: matcher.comparison, isUnitID: matcher.isUnitID,
            attributeKey: AttributeKey(matcher.attribute), attribute: name(matcher.attribute), operands: operands)
    }

    // MARK: - Flags

    private mutating func lower(_ compiled: CompiledFlag, key: String) -> FlagRecord {
        let keyBytes = append(bytes: key)
        switch compiled {
        case .archived:
            return FlagRecord(key: keyBytes, state: .archived, type: -1)
        case .broken(let message):
            return FlagRecord(key: keyBytes, state: .broken, type: -1, message: name(message))
        case .ready(let plan):
            types.append(plan.type)
            var record = FlagRecord(key: keyBytes, state: .ready, type: Int32(types.count - 1))
            record.typeCode = FlagTypeCode.of(plan.type)
            record.killed = plan.killed
            record.defaultIsStatic = plan.defaultReason == .static
            record.expiresAt = plan.expiresAt ?? .infinity
            record.killValue = value(plan.killValue)
            record.expiredValue = value(plan.expiredValue)
            record.defaultValue = value(plan.defaultValue)
            if let overrides = plan.unitOverrides {
                let entries = overrides.map { unit, forced in
                    (unit, append(forced: ForcedRecord(value: value(forced.value), until: forced.until ?? .infinity)))
                }
                record.unitOverrides = unitSet(entries)
            }
            let firstForced = Int32(cohortForced.count)
            for override in plan.cohortOverrides {
                cohortForced.append(
                    CohortForcedRecord(
                        cohort: Int32(override.cohort), name: name(override.name),
                        variant: name(VariantName.cohortOverride(override.name)), value: value(override.value),
                        until: override.until ?? .infinity))
            }
            record.cohortOverrides = Span(start: firstForced, count: Int32(cohortForced.count) - firstForced)
            // A rule's conditions are lowered before its record, so the rules of a flag stay contiguous.
            var lowered: [RuleRecord] = []
            for rule in plan.rules { lowered.append(lower(rule)) }
            record.rules = Span(start: Int32(rules.count), count: Int32(lowered.count))
            rules += lowered
            record.rollout = plan.rollout.map { lower($0) } ?? -1
            let firstPrerequisite = Int32(prerequisites.count)
            for prerequisite in plan.prerequisites {
                let firstValue = Int32(values.count)
                for served in prerequisite.values { _ = value(served) }
                prerequisites.append(
                    PrerequisiteRecord(
                        name: name(prerequisite.flag), hash: ByteHash.hash(prerequisite.flag),
                        slot: Int32(sessionSlots?(prerequisite.flag) ?? -1),
                        values: Span(start: firstValue, count: Int32(values.count) - firstValue)))
            }
            record.prerequisites = Span(
                start: firstPrerequisite, count: Int32(prerequisites.count) - firstPrerequisite)
            return record
        }
    }

    private mutating func append(forced record: ForcedRecord) -> Int32 {
        forced.append(record)
        return Int32(forced.count - 1)
    }

    private mutating func lower(_ rule: FlagPlan.Rule) -> RuleRecord {
        var cohort: Int32 = -1
        var targetConditions = Span.empty
        switch rule.target {
        case .cohort(let index): cohort = Int32(index)
        case .conditions(let matchers): targetConditions = lower(matchers)
        }
        let serve: RuleRecord.Serve
        let target: Int32
        switch rule.serve {
        case .value(let served): (serve, target) = (.value, value(served))
        case .rollout(let rollout): (serve, target) = (.rollout, lower(rollout))
        case .split(let split): (serve, target) = (.split, lower(split))
        }
        return RuleRecord(
            name: name(rule.name), cohort: cohort, conditions: targetConditions, serve: serve, target: target)
    }

    private mutating func lower(_ rollout: CompiledRollout) -> Int32 {
        let first = Int32(steps.count)
        for step in rollout.steps { steps.append(StepRecord(at: step.at, threshold: Int32(step.threshold))) }
        rollouts.append(
            RolloutRecord(
                primed: rollout.bucketer.primed, salt: salt(rollout.bucketer.salt), value: value(rollout.value),
                fixed: rollout.fixed.map { Int32($0) } ?? -1,
                steps: Span(start: first, count: Int32(steps.count) - first),
                pausedAt: rollout.pausedAt ?? .infinity))
        return Int32(rollouts.count - 1)
    }

    private mutating func lower(_ split: CompiledSplit) -> Int32 {
        let first = Int32(arms.count)
        for (bound, arm) in zip(split.bounds, split.arms) {
            arms.append(ArmRecord(bound: Int32(bound), name: name(arm.name), value: value(arm.value)))
        }
        splits.append(
            SplitRecord(
                primed: split.bucketer.primed, salt: salt(split.bucketer.salt),
                arms: Span(start: first, count: Int32(arms.count) - first)))
        return Int32(splits.count - 1)
    }
}
