import Foundation

/// What one evaluation learns about its unit, computed at most once: the unit id's bytes, their hash (for
/// override and cohort tables) and the last bucket (rules and the flag rollout usually share the flag's salt).
struct UnitScratch {
    let unit: UnsafeRawBufferPointer
    private var hash: UInt64 = 0
    private var hashed = false
    private var bucketSalt: Int32 = -1
    private var bucket = 0
    /// The last attribute read as a plain version: a flag often tests `appVersion` in several rules.
    private var versionKey: AttributeKey?
    private var version: PlainVersion?

    init(_ unit: UnsafeRawBufferPointer) {
        self.unit = unit
    }

    @inline(__always)
    mutating func unitHash() -> UInt64 {
        if !hashed {
            hash = ByteHash.hash(unit)
            hashed = true
        }
        return hash
    }

    /// `value`, the attribute named by `key`, as a plain version, parsed once per evaluation and attribute.
    @inline(__always)
    mutating func plainVersion(_ key: AttributeKey, _ value: String) -> PlainVersion? {
        // A key of a name longer than 16 bytes may be shared by another name: no caching for those.
        guard key.isComplete else { return PlainVersion(value) }
        if versionKey == key { return version }
        version = PlainVersion(value)
        versionKey = key
        return version
    }

    /// The unit's bucket for the salt numbered `salt`, whose primed hash state is `primed` (SPEC §2.1).
    @inline(__always)
    mutating func bucket(salt: Int32, primed: Murmur3Hasher) -> Int {
        if salt != bucketSalt {
            bucket = Bucketer.bucket(primed, unit)
            bucketSalt = salt
        }
        return bucket
    }
}

// MARK: - Evaluation order (SPEC §2)

extension Program {
    /// Evaluates this program's flag for a caller expecting `type` (SPEC §2); its cohort tests run in `cohorts`,
    /// the set's cohort program. The outcome names the flag as `position`, its place in the set. `trace`, when
    /// given, receives each step considered (`flagctl eval --explain`); a failure's message is not among them, as
    /// it needs the key and the set (`message(_:key:type:version:setName:)`).
    /// A flag's prerequisites are evaluated in `set`, `depth` links down a chain of flags requiring flags, unless
    /// `frozen` has the value a session already froze for one.
    /// The time, in seconds since 1970, is `seconds` once known; the first step that compares with it (an expiry, an
    /// override with an end, a scheduled rollout, here or in a flag required) reads it from `clock` and keeps it in
    /// `seconds` for the steps after, so that an evaluation none of whose steps needs the time never reads the clock.
    func resolve(
        type: FlagType, context: EvaluationContext, at seconds: inout Double?, clock: () -> Double, cohorts: Program,
        position index: Int32, set: CompiledFlagSet, depth: Int = 0,
        frozen: PrerequisiteLookup = { _, _ in .notFrozen }, trace: ((String) -> Void)?
    ) -> Outcome {
        func fail(_ reason: ReasonCode, _ failure: Outcome.Failure) -> Outcome {
            Outcome(value: -1, variant: -1, reason: reason, failure: failure, flag: index)
        }
        let flag = flags[0]
        switch flag.state {
        case .archived: return fail(.default, .archived)
        case .broken: return fail(.error, .broken)
        case .ready: break
        }
        guard flag.typeCode == FlagTypeCode.of(type) else { return fail(.error, .typeMismatch) }
        if flag.killed {
            return serve(
                flag.killValue, .disabled, FixedName.kill.rawValue, index, trace, "killed: serving the kill value")
        }
        if flag.expiresAt != .infinity, time(&seconds, clock) >= flag.expiresAt {
            return serve(
                flag.expiredValue, .static, FixedName.expired.rawValue, index, trace, "expired: serving the kept value")
        }
        var item = flag.prerequisites.start
        while item < flag.prerequisites.end {
            let prerequisite = prerequisites[item]
            item &+= 1
            let key = names[prerequisite.name]
            let served = set.prerequisiteValue(
                key, slot: Int(prerequisite.slot), hash: prerequisite.hash, context: context,
                at: &seconds, clock: clock, depth: depth + 1, frozen: frozen)
            guard let served, contains(prerequisite.values, served) else {
                return serve(
                    flag.defaultValue, .prerequisiteFailed, prerequisite.name, index, trace,
                    "prerequisite '\(key)' "
                        + (served.map { "serves \(String(decoding: $0.canonicalBytes, as: UTF8.self))" }
                            ?? "serves no value of its own")
                        + ", not one of the values listed: serving the flag's default")
            }
            trace?("prerequisite '\(key)': serves one of the values listed")
        }
        return withBytes(of: context.unitID) { unit in
            var scratch = UnitScratch(UnsafeRawBufferPointer(unit))
            return target(
                index, flag, context, &scratch, seconds: &seconds, clock: clock, cohorts: cohorts, trace: trace)
        }
    }

    /// `resolve` at a time known beforehand, `seconds` since 1970.
    func resolve(
        type: FlagType, context: EvaluationContext, at seconds: Double, cohorts: Program, position: Int32,
        set: CompiledFlagSet, trace: ((String) -> Void)?
    ) -> Outcome {
        var known: Double? = seconds
        return resolve(
            type: type, context: context, at: &known, clock: { seconds }, cohorts: cohorts, position: position,
            set: set, trace: trace)
    }

    /// The evaluation's time: `seconds` once read, else read from `clock` now and kept in `seconds`.
    @inline(__always)
    private func time(_ seconds: inout Double?, _ clock: () -> Double) -> Double {
        if let seconds { return seconds }
        let now = clock()
        seconds = now
        return now
    }

    /// The message of a failed `outcome` of this program's flag `key` asked for as `type`; `nil` when it did not
    /// fail (a missing flag has no program: `CompiledFlagSet.message` words that one).
    func message(_ outcome: Outcome, key: String, type: FlagType) -> String? {
        switch outcome.failure {
        case .none, .missing: nil
        case .archived: "flag '\(key)' is archived"
        case .broken: "flag '\(key)' cannot be evaluated: \(names[flags[0].message])"
        case .typeMismatch: "flag '\(key)' is a \(types[flags[0].type].name) flag, not \(type.name)"
        }
    }

    /// Steps 5 to 9 of SPEC §2: overrides, rules, the flag rollout, the default.
    private func target(
        _ flagIndex: Int32, _ flag: FlagRecord, _ context: EvaluationContext, _ scratch: inout UnitScratch,
        seconds: inout Double?, clock: () -> Double, cohorts: Program, trace: ((String) -> Void)?
    ) -> Outcome {
        if flag.unitOverrides >= 0 {
            let found = lookup(flag.unitOverrides, &scratch)
            if found >= 0 {
                let override = forced[found]
                if isActive(until: override.until, &seconds, clock) {
                    return serve(
                        override.value, .targetingMatch, FixedName.override.rawValue, flagIndex, trace,
                        "override for unit '\(context.unitID)'")
                }
                trace?("override for unit '\(context.unitID)' ended")
            }
        }
        var index = flag.cohortOverrides.start
        while index < flag.cohortOverrides.end {
            let override = cohortForced[index]
            index &+= 1
            guard isActive(until: override.until, &seconds, clock) else { continue }
            if cohorts.matches(cohort: override.cohort, context, &scratch) {
                return serve(
                    override.value, .targetingMatch, override.variant, flagIndex, trace,
                    "override for cohort '\(names[override.name])'")
            }
            trace?("not in cohort '\(names[override.name])' (override)")
        }
        index = flag.rules.start
        while index < flag.rules.end {
            let rule = rules[index]
            index &+= 1
            let targeted =
                rule.cohort >= 0
                ? cohorts.matches(cohort: rule.cohort, context, &scratch)
                : matchesAll(rule.conditions, context, &scratch, cohorts: cohorts)
            guard targeted else {
                trace?("rule '\(names[rule.name])': no match")
                continue
            }
            switch rule.serve {
            case .value:
                return serve(
                    rule.target, .targetingMatch, rule.name, flagIndex, trace, "rule '\(names[rule.name])': match")
            case .rollout:
                let rollout = rollouts[rule.target]
                let bucket = scratch.bucket(salt: rollout.salt, primed: rollout.primed)
                let threshold = self.threshold(rollout, &seconds, clock)
                if bucket < threshold {
                    return serve(
                        rollout.value, .split, rule.name, flagIndex, trace,
                        "rule '\(names[rule.name])': match, bucket \(bucket) < \(threshold) (inside the rollout)")
                }
                trace?(
                    "rule '\(names[rule.name])': match, but bucket \(bucket) >= \(threshold) (outside the rollout)")
            case .split:
                let split = splits[rule.target]
                let bucket = scratch.bucket(salt: split.salt, primed: split.primed)
                let arm = self.arm(split, bucket)
                return serve(
                    arm.value, .split, arm.name, flagIndex, trace,
                    "rule '\(names[rule.name])': match, bucket \(bucket) → variant '\(names[arm.name])'")
            }
        }
        if flag.rollout >= 0 {
            let rollout = rollouts[flag.rollout]
            let bucket = scratch.bucket(salt: rollout.salt, primed: rollout.primed)
            let threshold = self.threshold(rollout, &seconds, clock)
            if bucket < threshold {
                return serve(
                    rollout.value, .split, FixedName.rollout.rawValue, flagIndex, trace,
                    "rollout: bucket \(bucket) < \(threshold) (inside)")
            }
            trace?("rollout: bucket \(bucket) >= \(threshold) (outside)")
        }
        return serve(
            flag.defaultValue, flag.defaultIsStatic ? .static : .default, FixedName.default.rawValue, flagIndex,
            trace, "serving the flag's default")
    }

    @inline(__always)
    private func serve(
        _ value: Int32, _ reason: ReasonCode, _ variant: Int32, _ flag: Int32, _ trace: ((String) -> Void)?,
        _ why: @autoclosure () -> String
    ) -> Outcome {
        trace?(why())
        return Outcome(value: value, variant: variant, reason: reason, failure: .none, flag: flag)
    }

    /// Whether `values` (a range of `values`) holds `served`; numbers compare by value (`1` is `1.0`).
    private func contains(_ span: Span, _ served: JSONValue) -> Bool {
        var index = span.start
        while index < span.end {
            if values[index].isSameValue(as: served) { return true }
            index &+= 1
        }
        return false
    }

    @inline(__always)
    private func isActive(until: Double, _ seconds: inout Double?, _ clock: () -> Double) -> Bool {
        until == .infinity || time(&seconds, clock) < until
    }

    /// Units whose bucket is below this number are inside (SPEC §2.1, §2.2).
    @inline(__always)
    private func threshold(_ rollout: RolloutRecord, _ seconds: inout Double?, _ clock: () -> Double) -> Int {
        if rollout.fixed >= 0 { return Int(rollout.fixed) }
        let now = self.time(&seconds, clock)
        let time = rollout.pausedAt == .infinity ? now : min(rollout.pausedAt, now)
        var current: Int32 = 0
        var index = rollout.steps.start
        while index < rollout.steps.end {
            let step = steps[index]
            if step.at > time { break }
            current = step.threshold
            index &+= 1
        }
        return Int(current)
    }

    /// The arm whose cumulative bucket range holds `bucket`; the last arm past every bound.
    private func arm(_ split: SplitRecord, _ bucket: Int) -> ArmRecord {
        var index = split.arms.start
        while index < split.arms.end {
            if bucket < Int(arms[index].bound) { return arms[index] }
            index &+= 1
        }
        return arms[split.arms.end &- 1]
    }

    // MARK: - Unit tables and cohorts

    /// What unit-id set `set` maps the unit to (0 for a plain set), or -1 when the unit is not in it.
    @inline(__always)
    private func lookup(_ set: Int32, _ scratch: inout UnitScratch) -> Int32 {
        let record = unitSets[set]
        return probe(unitSlots, start: record.start, mask: record.mask, scratch.unitHash(), scratch.unit)
    }

    @inline(__always)
    private func probe(
        _ slots: Table<KeySlot>, start: Int32, mask: Int32, _ hash: UInt64, _ key: UnsafeRawBufferPointer
    ) -> Int32 {
        var index = Int32(truncatingIfNeeded: hash) & mask
        while true {
            let slot = slots[start &+ index]
            if slot.target < 0 { return -1 }
            if slot.hash == hash && equals(slot.key, key) { return slot.target }
            index = (index &+ 1) & mask
        }
    }

    /// Whether the bytes at `span` are `other`.
    @inline(__always)
    func equals(_ span: ByteSpan, _ other: UnsafeRawBufferPointer) -> Bool {
        guard Int(span.count) == other.count else { return false }
        guard let base = other.baseAddress, span.count > 0 else { return true }
        return memcmp(bytes.base + Int(span.start), base, Int(span.count)) == 0
    }

    /// Whether the unit is in a cohort of this (cohort) program: listed in `include`, or not in `exclude` and
    /// matching any group.
    func matches(cohort index: Int32, _ context: EvaluationContext, _ scratch: inout UnitScratch) -> Bool {
        let cohort = cohorts[index]
        if cohort.include >= 0 && lookup(cohort.include, &scratch) >= 0 { return true }
        if cohort.exclude >= 0 && lookup(cohort.exclude, &scratch) >= 0 { return false }
        var group = cohort.groups.start
        while group < cohort.groups.end {
            if matchesAll(groups[group], context, &scratch, cohorts: self) { return true }
            group &+= 1
        }
        return false
    }

    /// Whether every condition of `span` holds; `in_cohort` tests run in `cohorts`.
    @inline(__always)
    func matchesAll(
        _ span: Span, _ context: EvaluationContext, _ scratch: inout UnitScratch, cohorts: Program
    ) -> Bool {
        var index = span.start
        while index < span.end {
            if !matches(conditions[index], context, &scratch, cohorts: cohorts) { return false }
            index &+= 1
        }
        return true
    }
}
