import Foundation
import Testing

@testable import FlagCore

/// The flat evaluation program: its own tables (flag keys, unit ids, attribute names) and per-evaluation caches
/// must give exactly the answers SPEC §2 defines, at the edges where a hash table or a cache could go wrong.
@Suite("Flat evaluation program")
struct ProgramTests {
    static let now = Fixtures.date("2026-11-29T12:00:00Z")

    private func value(
        _ set: CompiledFlagSet, _ unit: String, _ attributes: [String: String] = [:], key: String = "f"
    ) -> EvaluationDetail<String> {
        set.evaluate(
            key, default: "caller", context: EvaluationContext(unitID: unit, attributes: attributes), at: Self.now)
    }

    @Test(arguments: ["u-over", "u-vip", "u-1", "u-2", "u-3", "", "ü-ñ-😀"])
    func handleAndKeyGiveTheSameDetail(unit: String) throws {
        let set = try EvaluationTests.precedenceSet()
        for attributes in [[:], ["country": "DE"], ["country": "FR"]] {
            let context = EvaluationContext(unitID: unit, attributes: attributes)
            let byKey: EvaluationDetail<String> = set.evaluate("f", default: "caller", context: context, at: Self.now)
            let byHandle: EvaluationDetail<String> = set.evaluate(
                FlagHandle("f"), default: "caller", context: context, at: Self.now)
            #expect(byKey == byHandle)
        }
        let missing: EvaluationDetail<Bool> = set.evaluate(
            FlagHandle("nope"), default: true, context: EvaluationContext(unitID: unit), at: Self.now)
        #expect(
            (missing.value, missing.reason, missing.errorCode, missing.version) == (true, .default, .flagNotFound, 7))
    }

    /// Flags and whether their value can depend on the time; a timed flag serves "then" on 2026-11-29 and
    /// "default" from 2026-11-30.
    static let clockCases: [(flag: String, timed: Bool)] = [
        (#"{"type":"string","default":"default"}"#, false),
        (
            #"{"type":"string","default":"default","rules":[{"name":"de","conditions":[{"attribute":"country","op":"eq","values":["DE"]}],"value":"then"}],"rollout":{"value":"then","percent":25}}"#,
            false
        ),
        (#"{"type":"string","default":"default","overrides":[{"unit":"u-1","value":"then"}]}"#, false),
        (#"{"type":"string","default":"then","expiresAt":"2026-11-30T00:00:00Z","expiredValue":"default"}"#, true),
        (
            #"{"type":"string","default":"default","overrides":[{"unit":"u-1","value":"then","until":"2026-11-30T00:00:00Z"}]}"#,
            true
        ),
        (
            #"{"type":"string","default":"default","overrides":[{"cohort":"all","value":"then","until":"2026-11-30T00:00:00Z"}]}"#,
            true
        ),
        (
            #"{"type":"string","default":"default","rollout":{"value":"then","schedule":[{"at":"2026-11-29T00:00:00Z","percent":100},{"at":"2026-11-30T00:00:00Z","percent":0}]}}"#,
            true
        ),
        (
            #"{"type":"string","default":"default","rules":[{"name":"r","cohort":"all","rollout":{"value":"then","schedule":[{"at":"2026-11-29T00:00:00Z","percent":100},{"at":"2026-11-30T00:00:00Z","percent":0}]}}]}"#,
            true
        ),
    ]

    @Test(arguments: clockCases)
    func theClockIsReadOnlyForFlagsThatDependOnTheTime(flag: String, timed: Bool) throws {
        let set = try Fixtures.compile(
            Fixtures.set(flag: flag, cohorts: #"{"all":{"groups":[[{"attribute":"country","op":"exists"}]]}}"#))
        let context = EvaluationContext(unitID: "u-1", attributes: ["country": "DE"])
        for at in [Self.now, Fixtures.date("2026-12-01T00:00:00Z")] {
            var reads = 0
            let detail = set.evaluate(FlagHandle("f"), type: .string, default: .string("caller"), context: context) {
                reads += 1
                return at
            }
            // Whether the clock is read or not, the detail is the one evaluating at that time gives.
            let expected = set.evaluate("f", type: .string, default: .string("caller"), context: context, at: at)
            #expect(detail.value == expected.value && detail.reason == expected.reason)
            #expect(detail.variant == expected.variant)
            #expect(reads == (timed ? 1 : 0))
        }
        if timed {
            // Each timed case serves "then" today and "default" after 2026-11-30.
            let today = set.evaluate(FlagHandle("f"), type: .string, default: .null, context: context) { Self.now }
            let later = set.evaluate(FlagHandle("f"), type: .string, default: .null, context: context) {
                Fixtures.date("2026-12-01T00:00:00Z")
            }
            #expect((today.value, later.value) == (.string("then"), .string("default")))
        }
        // A missing flag reads the clock (nothing is known of it) and still reports FLAG_NOT_FOUND.
        let missing = set.evaluate(FlagHandle("nope"), type: .string, default: .null, context: context) { Self.now }
        #expect(missing.errorCode == .flagNotFound)
    }

    @Test func everyFlagOfALargeSetIsFoundByItsKey() throws {
        var flags: [String] = []
        for index in 0..<500 { flags.append(#""flag-\#(index)":{"type":"int","default":\#(index)}"#) }
        let set = try Fixtures.compile(
            #"{"schema":1,"set":"big","version":1,"flags":{\#(flags.joined(separator: ","))}}"#)
        let context = EvaluationContext(unitID: "u")
        for index in 0..<500 {
            #expect(
                set.evaluate(FlagHandle("flag-\(index)"), default: -1, context: context, at: Self.now).value == index)
        }
        for key in ["flag-500", "flag-", "flag-0 ", "Flag-1", ""] {
            #expect(set.evaluate(key, default: -1, context: context, at: Self.now).errorCode == .flagNotFound)
        }
    }

    @Test func longAttributeNamesSharingSixteenBytesAreToldApart() throws {
        // Both names start with the same 16 bytes, so only the full comparison can tell them apart.
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: #"""
                    {"type":"string","default":"none","rules":[
                      {"name":"tier","conditions":[{"attribute":"customer.subscription.tier","op":"eq","values":["gold"]}],
                       "value":"tier"},
                      {"name":"term","conditions":[{"attribute":"customer.subscription.term","op":"eq","values":["gold"]}],
                       "value":"term"}]}
                    """#))
        #expect(value(set, "u", ["customer.subscription.term": "gold"]).value == "term")
        #expect(value(set, "u", ["customer.subscription.tier": "gold"]).value == "tier")
        #expect(
            value(set, "u", ["customer.subscription.tier": "silver", "customer.subscription.term": "gold"]).value
                == "term")
        #expect(value(set, "u", ["customer.subscription.te": "gold"]).value == "none")
    }

    @Test func namesOfEqualLengthAndSixteenByteNamesMatchExactly() throws {
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: #"""
                    {"type":"string","default":"none","rules":[
                      {"name":"a","conditions":[{"attribute":"abcdefghijklmnop","op":"exists","values":[]}],"value":"16"},
                      {"name":"b","conditions":[{"attribute":"country","op":"eq","values":["DE"]}],"value":"de"}]}
                    """#))
        #expect(value(set, "u", ["abcdefghijklmnop": ""]).value == "16")
        #expect(value(set, "u", ["abcdefghijklmnoq": "x", "countrx": "DE"]).value == "none")
        #expect(value(set, "u", ["country": "DE"]).value == "de")
        #expect(EvaluationContext(unitID: "u", attributes: ["country": "DE"])[attribute: "country"] == "DE")
        #expect(EvaluationContext(unitID: "u", attributes: ["country": "DE"])[attribute: "unitID"] == "u")
        #expect(EvaluationContext(unitID: "u", attributes: ["country": "DE"])[attribute: "countr"] == nil)
    }

    @Test func contextsAboveSixteenAttributesStillFindTheirAttributes() throws {
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: #"""
                    {"type":"string","default":"none","rules":[
                      {"name":"r","conditions":[{"attribute":"attr-17","op":"eq","values":["yes"]}],"value":"found"}]}
                    """#))
        var attributes: [String: String] = [:]
        for index in 0..<20 { attributes["attr-\(index)"] = "no" }
        attributes["attr-17"] = "yes"
        #expect(value(set, "u", attributes).value == "found")
        var context = EvaluationContext(unitID: "u", attributes: ["attr-17": "no"])
        #expect(set.evaluate("f", default: "caller", context: context, at: Self.now).value == "none")
        context.attributes = attributes
        #expect(set.evaluate("f", default: "caller", context: context, at: Self.now).value == "found")
    }

    @Test func rolloutsWithDifferentSaltsBucketSeparately() throws {
        // The rule's rollout uses its own salt, the flag's the key: the per-evaluation bucket cache must not
        // hand the rule's bucket to the flag rollout.
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: #"""
                    {"type":"string","default":"out","rules":[
                      {"name":"r","conditions":[],"rollout":{"percent":30,"value":"rule","salt":"other"}}],
                     "rollout":{"percent":60,"value":"flag"}}
                    """#))
        let own = Bucketer(salt: "f")
        let other = Bucketer(salt: "other")
        var seen: Set<String> = []
        for index in 0..<2_000 {
            let unit = "unit-\(index)"
            let expected =
                other.bucket(unit) < 3_000 ? "rule" : own.bucket(unit) < 6_000 ? "flag" : "out"
            let result = value(set, unit)
            #expect(result.value == expected, "\(unit)")
            seen.insert(result.value)
        }
        #expect(seen == ["rule", "flag", "out"])
    }

    @Test func splitArmsFollowTheCumulativeBucketRanges() throws {
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: #"""
                    {"type":"string","default":"none","rules":[{"name":"exp","conditions":[],"split":[
                      {"name":"a","value":"A","weight":33.33},{"name":"b","value":"B","weight":33.33},
                      {"name":"c","value":"C","weight":33.34}]}]}
                    """#))
        let bucketer = Bucketer(salt: "f")
        for index in 0..<1_000 {
            let unit = "u-\(index)"
            let arm = RolloutMath.variantIndex(bucket: bucketer.bucket(unit), weights: [33.33, 33.33, 33.34])
            let result = value(set, unit)
            #expect(result.value == ["A", "B", "C"][arm ?? 2])
            #expect(result.variant == ["a", "b", "c"][arm ?? 2])
            #expect(result.reason == .split)
        }
    }

    @Test func cohortUnitListsMatchWholeIdsOnly() throws {
        let included = (0..<1_000).map { "member-\($0)" }
        let list = included.map { "\"\($0)\"" }.joined(separator: ",")
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: #"{"type":"string","default":"none","rules":[{"name":"in","cohort":"c","value":"in"}]}"#,
                cohorts: #"""
                    {"c":{"include":[\#(list)],"exclude":["member-5","blocked"],
                          "groups":[[{"attribute":"plan","op":"eq","values":["pro"]}]]}}
                    """#))
        for unit in included { #expect(value(set, unit).value == "in", "\(unit)") }
        // `include` wins over `exclude`; `exclude` wins over the groups.
        #expect(value(set, "member-5").value == "in")
        #expect(value(set, "blocked", ["plan": "pro"]).value == "none")
        #expect(value(set, "someone", ["plan": "pro"]).value == "in")
        #expect(value(set, "").value == "none")
        for unit in ["member-", "member-1000", "member-10000", "ember-1", "member-1 ", "MEMBER-1"] {
            #expect(value(set, unit).value == "none", "\(unit)")
        }
    }

    @Test func unitOverridesOfManyUnitsEndAtTheirTime() throws {
        var overrides = (0..<300).map { #"{"unit":"u-\#($0)","value":"v-\#($0)"}"# }
        overrides.append(#"{"unit":"u-ending","value":"ended","until":"2026-11-29T12:00:00Z"}"#)
        overrides.append(#"{"unit":"u-ending","value":"second","until":"2026-11-29T12:00:01Z"}"#)
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: #"{"type":"string","default":"none","overrides":[\#(overrides.joined(separator: ","))]}"#))
        for index in 0..<300 {
            let result = value(set, "u-\(index)")
            #expect((result.value, result.reason, result.variant) == ("v-\(index)", .targetingMatch, "override"))
        }
        #expect(value(set, "u-300").value == "none")
        // The first override of a unit decides; once it has ended, the unit falls through (not to the second).
        #expect(value(set, "u-ending").value == "none")
        let earlier = set.evaluate(
            "f", default: "caller", context: EvaluationContext(unitID: "u-ending"),
            at: Fixtures.date("2026-11-29T11:59:59Z"))
        #expect(earlier.value == "ended")
    }

    @Test func aCompiledSetIsSharedSafelyBetweenThreads() async throws {
        let set = try EvaluationTests.precedenceSet()
        let expected = (0..<200).map { value(set, "unit-\($0)", ["country": $0 % 2 == 0 ? "FR" : "IT"]) }
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    (0..<200).allSatisfy { index in
                        let attributes = ["country": index % 2 == 0 ? "FR" : "IT"]
                        let context = EvaluationContext(unitID: "unit-\(index)", attributes: attributes)
                        return set.evaluate(FlagHandle("f"), default: "caller", context: context, at: Self.now)
                            == expected[index]
                    }
                }
            }
            for await agreed in group { #expect(agreed) }
        }
    }
}
