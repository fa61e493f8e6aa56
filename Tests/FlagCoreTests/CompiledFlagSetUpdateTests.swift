import Foundation
import Testing

@testable import FlagCore

/// `CompiledFlagSet.updating` compiles only what a change touches; what it keeps must be exactly what a compile of
/// the whole changed set gives: the same model, the same problems in the same order, the same answer for every flag
/// and context.
@Suite("Incremental compile: updating a compiled set equals compiling it from scratch")
struct CompiledFlagSetUpdateTests {
    static let now = Fixtures.date("2026-12-02T12:00:00Z")

    static let flagKeys = (0..<24).map { "f\($0)" }
    /// Seven names for a set that holds a few of them at a time; `gone` is never created.
    static let cohortNames = (0..<6).map { "c\($0)" } + ["gone"]
    static let contexts = [
        EvaluationContext(unitID: "u-1"),
        EvaluationContext(unitID: "u-2", attributes: ["country": "DE", "appVersion": "5.3.0"]),
        EvaluationContext(unitID: "u-3", attributes: ["country": "NL", "appVersion": "4.0.0"]),
        EvaluationContext(unitID: "vip", attributes: ["country": "DE", "plan": "pro"]),
        EvaluationContext(unitID: "u-42", attributes: ["plan": "free", "appVersion": "5.2.0-beta.1"]),
    ]

    /// A cohort name to refer to: one the set has, mostly; any name of the pool (`gone` included) now and then.
    static func cohortName(_ random: inout SplitMix64, _ existing: [String]) -> String {
        existing.isEmpty || random.chance(8) ? random.pick(cohortNames) : random.pick(existing)
    }

    static func condition(_ random: inout SplitMix64, _ existing: [String]) -> Condition {
        switch random.below(7) {
        case 0: Condition(attribute: "country", op: .eq, values: [random.pick(["DE", "NL", "FR"])])
        case 1:
            Condition(
                attribute: "appVersion", op: .semverGte,
                values: [random.chance(5) ? "nope" : random.pick(["5.0.0", "5.2.0"])])
        case 2: Condition(attribute: "plan", op: .in, values: ["pro", "team"])
        case 3: Condition(attribute: "unitID", op: .startsWith, values: ["u-"])
        case 4: Condition(attribute: "", op: .inCohort, values: [cohortName(&random, existing)])
        case 5: Condition(attribute: "plan", op: .exists, values: [])
        default: Condition(attribute: "age", op: .gt, values: [random.chance(5) ? "x" : "18"])
        }
    }

    static func cohort(_ random: inout SplitMix64, _ existing: [String]) -> Cohort {
        var cohort = Cohort(include: random.chance(50) ? ["vip"] : [], exclude: random.chance(30) ? ["u-2"] : [])
        for _ in 0..<random.below(3) {
            cohort.groups.append((0..<(1 + random.below(2))).map { _ in condition(&random, existing) })
        }
        return cohort
    }

    static func flag(_ key: String, _ random: inout SplitMix64, _ existing: [String]) -> Flag {
        let isBool = random.chance(50)
        func value() -> JSONValue {
            // One value in twenty has the wrong type: a problem of this flag only.
            if random.chance(5) { return isBool ? .string("oops") : .bool(true) }
            return isBool ? .bool(random.chance(50)) : .string(random.pick(["a", "b", "c"]))
        }
        var flag = Flag(key: key, type: isBool ? .bool : .string, defaultValue: value())
        // An enum of the string values, which a value drawn later may not be one of.
        if !isBool && random.chance(30) { flag.values = random.chance(50) ? ["a", "b", "c"] : ["a", "b"] }
        flag.killed = random.chance(10)
        flag.archived = random.chance(5)
        if random.chance(30) {
            flag.overrides.append(
                Override(
                    target: random.chance(50) ? .unit("u-1") : .cohort(cohortName(&random, existing)), value: value()))
        }
        for index in 0..<random.below(3) {
            let target: Rule.Target =
                random.chance(50)
                ? .cohort(cohortName(&random, existing)) : .conditions([condition(&random, existing)])
            let serve: Rule.Serve =
                switch random.below(3) {
                case 0: .value(value())
                case 1: .rollout(Rollout(value: value(), stage: .percent(Double(random.below(101)))))
                default: .split([Variant(name: "x", value: value(), weight: 40), Variant(value: value(), weight: 60)])
                }
            flag.rules.append(Rule(name: "r\(index)", target: target, serve: serve))
        }
        if random.chance(40) { flag.rollout = Rollout(value: value(), stage: .percent(Double(random.below(101)))) }
        // Prerequisites on other flags of the pool: sometimes missing, of the other type, or closing a cycle, which
        // a write elsewhere in the chain can make or mend.
        if random.chance(35) {
            for required in Set((0..<(1 + random.below(2))).map { _ in random.pick(flagKeys) }).sorted()
            where required != key {
                let values: [JSONValue] = random.chance(50) ? [.bool(true)] : [.string("a"), .string("b")]
                flag.prerequisites.append(Prerequisite(flag: required, values: values))
            }
        }
        return flag
    }

    /// One write: a few flags and cohorts replaced or removed.
    static func change(
        _ random: inout SplitMix64, _ set: FlagSet
    ) -> (flags: [String: Flag?], cohorts: [String: Cohort?]) {
        var flags: [String: Flag?] = [:]
        var cohorts: [String: Cohort?] = [:]
        let existing = set.cohorts.keys.sorted()
        for _ in 0..<(1 + random.below(random.chance(80) ? 1 : 3)) {
            switch random.below(10) {
            case 0...4:
                let key = random.pick(flagKeys)
                flags[key] = .some(flag(key, &random, existing))
            case 5:
                flags[random.pick(flagKeys)] = .some(nil)
            case 6:
                if var killed = set.flags[random.pick(flagKeys)] {
                    killed.killed.toggle()
                    flags[killed.key] = .some(killed)
                }
            case 7, 8:
                cohorts[random.pick(Array(cohortNames.dropLast()))] = .some(cohort(&random, existing))
            default:
                cohorts[random.pick(Array(cohortNames.dropLast()))] = .some(nil)
            }
        }
        return (flags, cohorts)
    }

    /// Every observable difference between two compiled sets, described.
    static func differences(_ kept: CompiledFlagSet, _ scratch: CompiledFlagSet) -> [String] {
        var found: [String] = []
        if kept.flagSet != scratch.flagSet { found.append("the models differ") }
        if kept.problems != scratch.problems {
            found.append("problems: \(kept.problems) against \(scratch.problems)")
        }
        for key in flagKeys {
            for context in contexts {
                for type in [FlagType.bool, .string] {
                    let a = kept.evaluate(key, type: type, default: .null, context: context, at: now)
                    let b = scratch.evaluate(key, type: type, default: .null, context: context, at: now)
                    if a != b { found.append("\(key) for \(context.unitID) as \(type.name): \(a) against \(b)") }
                }
            }
            let a = kept.explain(key, context: contexts[1], at: now)
            let b = scratch.explain(key, context: contexts[1], at: now)
            if a.detail != b.detail || a.steps != b.steps { found.append("\(key) explained differently") }
        }
        return found
    }

    @Test func aThousandRandomWritesKeepTheSetEqualToOneCompiledFromScratch() {
        var random = SplitMix64(seed: 20_261_202)
        var model = FlagSet(name: "prop", version: 1)
        var kept = CompiledFlagSet(model)
        var lastValid = model
        var (withProblems, valid, validWithPrerequisites) = (0, 0, 0)
        /// Applies a change to both, and compares the kept set with a compile of the model from scratch.
        func write(_ flags: [String: Flag?], _ cohorts: [String: Cohort?], _ step: Int) -> CompiledFlagSet? {
            for (key, flag) in flags { model.flags[key] = flag }
            for (name, cohort) in cohorts { model.cohorts[name] = cohort }
            model.version += 1
            kept = kept.updating(flags: flags, cohorts: cohorts, version: model.version, updatedAt: model.updatedAt)
            let scratch = CompiledFlagSet(model)
            let differences = Self.differences(kept, scratch)
            #expect(differences.isEmpty, "after write \(step): \(differences.prefix(3))")
            return differences.isEmpty ? scratch : nil
        }
        for step in 1...1_000 {
            let (before, beforeModel) = (kept, model)
            let (flags, cohorts) = Self.change(&random, model)
            guard let scratch = write(flags, cohorts, step) else { return }
            if scratch.problems.isEmpty {
                valid += 1
                if model.flags.values.contains(where: { !$0.prerequisites.isEmpty }) { validWithPrerequisites += 1 }
                lastValid = model
                continue
            }
            withProblems += 1
            // The server refuses a write that leaves problems, so the walk goes on from the set before it, except in
            // the first tenth of every hundred writes, when it builds on sets with problems too (as a set stored by
            // an older, more lenient build would be); then a rollback to the last valid set ends that.
            if step % 100 >= 10 {
                (kept, model) = (before, beforeModel)
            } else if step % 100 == 9 {
                var back: [String: Flag?] = [:]
                for key in Set(model.flags.keys).union(lastValid.flags.keys)
                where model.flags[key] != lastValid.flags[key] {
                    back[key] = .some(lastValid.flags[key])
                }
                var cohortsBack: [String: Cohort?] = [:]
                for name in Set(model.cohorts.keys).union(lastValid.cohorts.keys)
                where model.cohorts[name] != lastValid.cohorts[name] {
                    cohortsBack[name] = .some(lastValid.cohorts[name])
                }
                guard let restored = write(back, cohortsBack, step) else { return }
                #expect(restored.problems.isEmpty)
            }
        }
        // The walk must have met both valid sets and sets with problems, or it proved less than it claims.
        #expect(valid > 300 && withProblems > 100, "\(valid) valid and \(withProblems) invalid versions")
        #expect(validWithPrerequisites > 100, "\(validWithPrerequisites) valid versions with prerequisites")
    }

    static func sample() throws -> CompiledFlagSet {
        try Fixtures.compile(
            #"""
            {"schema":1,"set":"s","version":1,
             "cohorts":{"beta":{"include":["u-1"]},"de":{"groups":[[{"attribute":"country","op":"eq","values":["DE"]}]]},
                        "vip":{"groups":[[{"attribute":"","op":"in_cohort","values":["beta"]}]]}},
             "flags":{"plain":{"type":"bool","default":false},
                      "uses-beta":{"type":"bool","default":false,"rules":[{"name":"b","cohort":"beta","value":true}]},
                      "uses-vip":{"type":"bool","default":false,"rules":[{"name":"v","conditions":[{"attribute":"","op":"in_cohort","values":["vip"]}],"value":true}]},
                      "uses-de":{"type":"bool","default":false,"overrides":[{"cohort":"de","value":true}]}}}
            """#)
    }

    @Test func aFlagsChangeCompilesThatFlagOnly() throws {
        let before = try Self.sample()
        var killed = try #require(before.flag("plain"))
        killed.killed = true
        let after = before.updating(flags: ["plain": killed], cohorts: [:], version: 2, updatedAt: nil)
        #expect(after.flags["plain"] !== before.flags["plain"])
        for key in ["uses-beta", "uses-vip", "uses-de"] { #expect(after.flags[key] === before.flags[key]) }
        #expect(after.cohorts === before.cohorts)
    }

    @Test func aCohortsChangeCompilesTheFlagsThatUseItThroughInCohortToo() throws {
        let before = try Self.sample()
        let after = before.updating(
            flags: [:], cohorts: ["beta": Cohort(include: ["u-2"])], version: 2, updatedAt: nil)
        // `uses-vip` names `vip`, which uses `beta`: it evaluates through the new cohort without being compiled
        // again, since `vip`'s index and health did not change.
        #expect(after.flags["uses-beta"] !== before.flags["uses-beta"])
        for key in ["plain", "uses-vip", "uses-de"] { #expect(after.flags[key] === before.flags[key]) }
        let context = EvaluationContext(unitID: "u-2")
        #expect(after.value("uses-vip", default: false, context: context, at: Self.now))
        #expect(after.value("uses-beta", default: false, context: context, at: Self.now))
        // Breaking `beta` breaks `vip` too: every flag that names either is compiled again.
        let broken = after.updating(
            flags: [:],
            cohorts: ["beta": Cohort(groups: [[Condition(attribute: "v", op: .semverGt, values: ["x"])]])],
            version: 3, updatedAt: nil)
        #expect(broken.flags["uses-vip"] !== after.flags["uses-vip"])
        #expect(broken.flags["uses-de"] === after.flags["uses-de"])
        #expect(broken.evaluate("uses-vip", default: false, context: context, at: Self.now).errorCode == .parseError)
    }

    @Test func addingAndRemovingCohortsKeepsTheOtherFlagsCompiled() throws {
        let before = try Self.sample()
        let added = before.updating(flags: [:], cohorts: ["aaa": Cohort(include: ["x"])], version: 2, updatedAt: nil)
        for key in ["plain", "uses-beta", "uses-vip", "uses-de"] { #expect(added.flags[key] === before.flags[key]) }
        #expect(
            added.value(
                "uses-de", default: false, context: .init(unitID: "u", attributes: ["country": "DE"]), at: Self.now))
        // Removing a cohort a flag uses is a problem at that flag, as a compile from scratch reports it.
        let removed = added.updating(flags: [:], cohorts: ["de": nil], version: 3, updatedAt: nil)
        #expect(removed.problems.map(\.path) == ["flags.uses-de.overrides[0].cohort"])
        #expect(removed.problems == CompiledFlagSet(removed.flagSet).problems)
    }

    @Test func theIndexesOfRemovedCohortsAreReusedOnceTheyPileUp() throws {
        var set = try Self.sample()
        for round in 0..<40 {
            let name = "temp-\(round)"
            set = set.updating(
                flags: [:], cohorts: [name: Cohort(include: ["x"])], version: 2 * round + 2, updatedAt: nil)
            set = set.updating(flags: [:], cohorts: [name: nil], version: 2 * round + 3, updatedAt: nil)
        }
        #expect(set.cohorts.names.count <= 2 * set.cohorts.slots.count + 16)
        #expect(Self.differences(set, CompiledFlagSet(set.flagSet)).isEmpty)
    }
}
