import Foundation
import Testing

@testable import FlagCore

@Suite("Evaluation order (SPEC §2)")
struct EvaluationTests {
    static let now = Fixtures.date("2026-11-29T12:00:00Z")

    /// A flag that exercises every step: kill, expiry, unit and cohort overrides, two rules, a rollout.
    static func precedenceSet(killed: Bool = false, expiresAt: String = "2027-01-01T00:00:00Z") throws
        -> CompiledFlagSet
    {
        try Fixtures.compile(
            Fixtures.set(
                flag: """
                    {"type":"string","default":"default","killValue":"killed","killed":\(killed),
                     "expiresAt":"\(expiresAt)","expiredValue":"expired",
                     "overrides":[{"unit":"u-over","value":"unit-override"},
                                  {"unit":"u-past","value":"old","until":"2026-11-01T00:00:00Z"},
                                  {"cohort":"vip","value":"cohort-override"}],
                     "rules":[{"name":"de","conditions":[{"attribute":"country","op":"eq","values":["DE"]}],"value":"rule-de"},
                              {"name":"half","cohort":"everyone-fr","rollout":{"value":"rule-rollout","percent":50}}],
                     "rollout":{"value":"flag-rollout","percent":30}}
                    """,
                cohorts: #"""
                    {"vip":{"include":["u-over","u-vip"]},
                     "everyone-fr":{"groups":[[{"attribute":"country","op":"eq","values":["FR"]}]]}}
                    """#))
    }

    private func detail(_ set: CompiledFlagSet, _ unit: String, _ attributes: [String: String] = [:], at: Date = now)
        -> EvaluationDetail<String>
    {
        set.evaluate("f", default: "caller", context: EvaluationContext(unitID: unit, attributes: attributes), at: at)
    }

    /// `value` is `evaluate(…).value` without the detail, whatever step decides (and for every failure).
    @Test(
        arguments: [
            ("u-over", [:]), ("u-past", [:]), ("u-vip", [:]), ("u-1", ["country": "DE"]), ("u-2", ["country": "FR"]),
            ("u-3", ["country": "FR"]), ("u-4", ["country": "US"]), ("u-5", [:]),
        ] as [(String, [String: String])])
    func valueIsTheDetailsValue(unit: String, attributes: [String: String]) throws {
        for set in [
            try Self.precedenceSet(), try Self.precedenceSet(killed: true),
            try Self.precedenceSet(expiresAt: "2026-11-01T00:00:00Z"),
        ] {
            let context = EvaluationContext(unitID: unit, attributes: attributes)
            for key in ["f", "nope"] {
                let handle = FlagHandle(key)
                #expect(
                    set.value(key, default: "caller", context: context, at: Self.now)
                        == set.evaluate(key, default: "caller", context: context, at: Self.now).value)
                #expect(
                    set.value(handle, default: "caller", context: context, at: Self.now)
                        == set.evaluate(handle, default: "caller", context: context, at: Self.now).value)
                // A caller expecting another type gets its default, as with the detail.
                #expect(set.value(key, default: 42, context: context, at: Self.now) == 42)
                #expect(set.value(key, default: true, context: context, at: Self.now) == true)
            }
        }
    }

    /// A flag the set does not have, and a `string` flag read as a `bool`.
    @Test(arguments: [("nope", "u", Reason.default, ErrorCode.flagNotFound), ("f", "u-over", .error, .typeMismatch)])
    func aFailureServesTheCallersDefault(key: String, unit: String, reason: Reason, errorCode: ErrorCode) throws {
        for fallback in [true, false] {
            let result = try Self.precedenceSet().evaluate(
                key, default: fallback, context: EvaluationContext(unitID: unit), at: Self.now)
            #expect(result.value == fallback)
            #expect(result.reason == reason)
            #expect(result.errorCode == errorCode)
            #expect(result.version == 7)
        }
    }

    /// A reason or an error code of this build as its byte and back; one this build does not produce has no byte.
    @Test func reasonsAndErrorCodesReadBackFromTheirBytes() {
        for code in ReasonCode.allCases { #expect(ReasonCode(code.reason) == code) }
        for code in ErrorCodeValue.allCases { #expect(ErrorCodeValue(code.errorCode) == code) }
        #expect(ReasonCode(.targetingMatch) == .targetingMatch)
        #expect(ReasonCode(Reason(rawValue: "CACHED")) == nil)
        #expect(ErrorCodeValue(.typeMismatch) == .typeMismatch)
        #expect(ErrorCodeValue(.targetingKeyMissing) == nil)
    }

    @Test func archivedFlagIsGoneForClients() throws {
        let set = try Fixtures.compile(Fixtures.set(flag: #"{"type":"bool","default":true,"archived":true}"#))
        let result = set.evaluate("f", default: false, context: EvaluationContext(unitID: "u"), at: Self.now)
        #expect(result.value == false)
        #expect(result.errorCode == .flagNotFound)
    }

    /// One step of the evaluation order deciding for one unit of `precedenceSet`.
    struct Precedence: CustomTestStringConvertible, Sendable {
        let name: String
        var killed = false
        var expiresAt = "2027-01-01T00:00:00Z"
        var at = EvaluationTests.now
        let unit: String
        let served: (value: String, reason: Reason, variant: String?)
        var testDescription: String { name }
    }

    static let precedence: [Precedence] = [
        Precedence(
            name: "a kill beats everything below it", killed: true, unit: "u-over",
            served: ("killed", .disabled, "kill")),
        Precedence(
            name: "expiry beats overrides and rules", expiresAt: "2026-11-29T12:00:00Z", unit: "u-over",
            served: ("expired", .static, "expired")),
        Precedence(
            name: "before its expiry the flag is targeted", expiresAt: "2026-11-29T12:00:00Z",
            at: Fixtures.date("2026-11-29T11:59:59Z"), unit: "u-over",
            served: ("unit-override", .targetingMatch, "override")),
        Precedence(
            name: "a unit override beats a cohort override", unit: "u-over",
            served: ("unit-override", .targetingMatch, "override")),
        Precedence(name: "an ended override is skipped", unit: "u-past", served: ("rule-de", .targetingMatch, "de")),
        Precedence(
            name: "a cohort override beats rules", unit: "u-vip",
            served: ("cohort-override", .targetingMatch, "override:vip")),
        Precedence(name: "the first matching rule wins", unit: "u-1", served: ("rule-de", .targetingMatch, "de")),
    ]

    @Test(arguments: precedence)
    func theFirstStepThatDecidesServes(_ step: Precedence) throws {
        let set = try Self.precedenceSet(killed: step.killed, expiresAt: step.expiresAt)
        let result = detail(set, step.unit, ["country": "DE"], at: step.at)
        #expect((result.value, result.reason, result.variant) == step.served)
    }

    /// The first of 200 units whose bucket of salt `f` is under `threshold`, and the first whose bucket is not.
    private func units(around threshold: Int) throws -> (inside: String, outside: String) {
        let bucketer = Bucketer(salt: "f")
        let units = (0..<200).map { "unit-\($0)" }
        let inside = try #require(units.first { bucketer.bucket($0) < threshold })
        let outside = try #require(units.first { bucketer.bucket($0) >= threshold })
        return (inside, outside)
    }

    @Test func ruleRolloutServesInsideAndFallsThroughOutside() throws {
        let set = try Self.precedenceSet()
        let (inside, outside) = try units(around: 5_000)
        let insideResult = detail(set, inside, ["country": "FR"])
        #expect((insideResult.value, insideResult.reason, insideResult.variant) == ("rule-rollout", .split, "half"))
        let outsideResult = detail(set, outside, ["country": "FR"])
        #expect(outsideResult.value != "rule-rollout")
        #expect(["flag-rollout", "default"].contains(outsideResult.value))
    }

    @Test func flagRolloutThenDefault() throws {
        let set = try Self.precedenceSet()
        let (inside, outside) = try units(around: 3_000)
        let insideResult = detail(set, inside)
        #expect((insideResult.value, insideResult.reason, insideResult.variant) == ("flag-rollout", .split, "rollout"))
        let outsideResult = detail(set, outside)
        #expect((outsideResult.value, outsideResult.reason, outsideResult.variant) == ("default", .default, "default"))
    }

    @Test func flagWithoutTargetingIsStatic() throws {
        let set = try Fixtures.compile(Fixtures.set(flag: #"{"type":"int","default":5}"#))
        let result = set.evaluate("f", default: 0, context: EvaluationContext(unitID: "u"), at: Self.now)
        #expect((result.value, result.reason, result.variant) == (5, .static, "default"))
    }

    @Test func splitAssignsCumulativeRangesInListOrder() throws {
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: #"""
                    {"type":"string","default":"none","rules":[{"name":"exp","conditions":[],"split":[
                      {"name":"a","value":"A","weight":34},{"name":"b","value":"B","weight":33},{"value":"C","weight":33}]}]}
                    """#))
        let bucketer = Bucketer(salt: "f")
        var counts: [String: Int] = [:]
        for index in 0..<3_000 {
            let unit = "user-\(index)"
            let result = detail(set, unit)
            let bucket = bucketer.bucket(unit)
            let expected = bucket < 3_400 ? ("A", "a") : bucket < 6_700 ? ("B", "b") : ("C", "variant-2")
            #expect(result.value == expected.0 && result.variant == expected.1 && result.reason == .split)
            counts[result.value, default: 0] += 1
        }
        #expect(counts.count == 3)
    }

    @Test func saltSharesOnePopulationAcrossFlags() throws {
        let json = #"""
            {"schema":1,"set":"s","version":1,"flags":{
              "a":{"type":"bool","default":false,"salt":"shared","rollout":{"value":true,"percent":20}},
              "b":{"type":"bool","default":false,"rollout":{"value":true,"percent":20,"salt":"shared"}}}}
            """#
        let set = try Fixtures.compile(json)
        for index in 0..<500 {
            let context = EvaluationContext(unitID: "u\(index)")
            #expect(
                set.evaluate("a", default: false, context: context, at: Self.now).value
                    == set.evaluate("b", default: false, context: context, at: Self.now).value)
        }
    }

    @Test func phasedScheduleFollowsTheClockAndPause() throws {
        let flag = #"""
            {"type":"bool","default":false,"rollout":{"value":true,"schedule":[
              {"at":"2026-11-29T00:00:00Z","percent":0},{"at":"2026-11-30T00:00:00Z","percent":100}]PAUSED}}
            """#
        let running = try Fixtures.compile(Fixtures.set(flag: flag.replacingOccurrences(of: "PAUSED", with: "")))
        let paused = try Fixtures.compile(
            Fixtures.set(flag: flag.replacingOccurrences(of: "PAUSED", with: #","pausedAt":"2026-11-29T12:00:00Z""#)))
        let context = EvaluationContext(unitID: "u-1")
        let later = Fixtures.date("2026-12-01T00:00:00Z")
        #expect(running.evaluate("f", default: false, context: context, at: Self.now).value == false)
        #expect(running.evaluate("f", default: false, context: context, at: later).value == true)
        #expect(paused.evaluate("f", default: false, context: context, at: later).value == false)
    }

    @Test func explainListsTheRulePath() throws {
        let set = try Self.precedenceSet()
        let (result, steps) = set.explain(
            "f", context: EvaluationContext(unitID: "u-1", attributes: ["country": "DE"]), at: Self.now)
        #expect(result.value == .string("rule-de"))
        #expect(steps == ["not in cohort 'vip' (override)", "rule 'de': match"])
    }

    @Test func schemaTwoDocumentWithUnknownOperatorKeepsOtherFlagsWorking() throws {
        let json = #"""
            {"schema":2,"set":"future","version":3,"newTopLevel":{"a":1},
             "cohorts":{"geo":{"groups":[[{"attribute":"loc","op":"within_km","values":["52.5,13.4","10"]}]]},
                        "plain":{"include":["u-1"]}},
             "flags":{
               "uses-new-op":{"type":"bool","default":false,"rules":[
                  {"name":"near","conditions":[{"attribute":"loc","op":"within_km","values":["1"]}],"value":true}]},
               "uses-new-cohort":{"type":"bool","default":false,"rules":[{"name":"geo","cohort":"geo","value":true}]},
               "uses-new-serve":{"type":"bool","default":false,"rules":[{"name":"b","conditions":[],"bandit":{"arms":2}}]},
               "plain":{"type":"bool","default":false,"rules":[{"name":"p","cohort":"plain","value":true}],
                        "someNewField":true}}}
            """#
        let set = try Fixtures.compile(json)
        let context = EvaluationContext(unitID: "u-1", attributes: ["loc": "52.5,13.4"])
        for key in ["uses-new-op", "uses-new-cohort", "uses-new-serve"] {
            let result = set.evaluate(key, default: true, context: context, at: Self.now)
            #expect(result.value == true, "\(key) serves the caller's default")
            #expect(result.reason == .error)
            #expect(result.errorCode == .parseError)
        }
        let plain = set.evaluate("plain", default: false, context: context, at: Self.now)
        #expect((plain.value, plain.reason, plain.variant) == (true, .targetingMatch, "p"))
    }

    @Test func demoSetEvaluatesAsDocumented() throws {
        let set = CompiledFlagSet(try FlagSet.decode(try Fixtures.demoBytes))
        func value<V: FlagValue>(_ key: String, _ fallback: V, _ unit: String, _ attributes: [String: String] = [:])
            -> EvaluationDetail<V>
        {
            set.evaluate(
                key, default: fallback, context: EvaluationContext(unitID: unit, attributes: attributes), at: Self.now)
        }
        #expect(value("new-checkout", false, "u-1").variant == "beta-first")
        #expect(value("new-checkout", false, "qa-1").variant == "override:qa")
        #expect(value("new-checkout", false, "x", ["appVersion": "5.3.0", "country": "AT"]).value == true)
        #expect(value("new-checkout", false, "u-13", ["appVersion": "5.3.0", "country": "AT"]).variant != "beta-first")
        #expect(value("ios-widgets", false, "u-2", ["platform": "ios"]).value == true)
        #expect(value("ios-widgets", false, "u-2", ["platform": "android"]).value == false)
        #expect(value("dark-mode", false, "anyone").reason == .static)
        #expect(value("dark-mode", false, "anyone").value == true)
        #expect(value("api-rate-limit", 0, "acct-load-test").value == 100_000)
        #expect(value("home-layout", JSONValue.null, "x", ["screenWidth": "1280"]).variant == "large-screens")
        #expect(value("checkout-button", "", "x", ["email": "ann@flagstaff.dev"]).value == "orange")
        #expect(value("payments-enabled", false, "x").value == true)
    }
}
