import Foundation
import Testing

@testable import FlagCore

/// Flags that require flags (docs/core.md, "Prerequisites"): where the check sits in the evaluation order, what a
/// failure serves, the wire form an older client falls back on, and what validation refuses.
@Suite("Prerequisites")
struct PrerequisiteTests {
    static let now = Fixtures.date("2026-12-06T12:00:00Z")

    /// `express` requires `checkout` to serve true; `checkout` is on for `u-1` by override and for 50 % by rollout.
    static let document = #"""
        {"schema":1,"set":"s","version":1,"flags":{
         "checkout":{"type":"bool","default":false,"overrides":[{"unit":"u-1","value":true}],
                     "rollout":{"value":true,"percent":50}},
         "theme":{"type":"string","default":"light","killValue":"dark",
                  "rules":[{"name":"pros","conditions":[{"attribute":"plan","op":"eq","values":["pro"]}],"value":"dark"}]},
         "express":{"type":"bool","default":false,
                    "prerequisites":[{"flag":"checkout","values":[true]}],
                    "overrides":[{"unit":"u-2","value":true}],
                    "rules":[{"name":"everyone","conditions":[],"value":true}]},
         "dark-banner":{"type":"string","default":"none","prerequisites":[{"flag":"theme","values":["dark"]}],
                        "rules":[{"name":"ab","conditions":[],"split":[{"name":"a","value":"a","weight":50},{"name":"b","value":"b","weight":50}]}]}}}
        """#

    static func evaluate(_ set: CompiledFlagSet, _ key: String, _ unit: String, _ attributes: [String: String] = [:])
        -> EvaluationDetail<JSONValue>
    {
        set.evaluate(
            key, type: set.flag(key)?.type ?? .bool, default: .null,
            context: EvaluationContext(unitID: unit, attributes: attributes), at: now)
    }

    @Test func aMetPrerequisiteLetsTheFlagEvaluateAndAFailedOneServesItsDefault() throws {
        let set = try Fixtures.compile(Self.document)
        #expect(set.problems.isEmpty, "\(set.problems)")
        // u-1 has checkout by override: express evaluates its rules.
        let met = Self.evaluate(set, "express", "u-1")
        #expect(met.value == .bool(true) && met.reason == .targetingMatch && met.variant == "everyone")
        // A unit outside checkout's rollout: express serves its own default, naming the prerequisite that failed.
        let outside = try #require(
            (0..<200).map { "u-\($0 + 10)" }.first {
                Self.evaluate(set, "checkout", $0).value == .bool(false)
            })
        let failed = Self.evaluate(set, "express", outside)
        #expect(failed.value == .bool(false))
        #expect(failed.reason == .prerequisiteFailed && failed.reason.rawValue == "PREREQUISITE_FAILED")
        #expect(failed.variant == "checkout" && failed.errorCode == nil)
        // Prerequisites come before overrides: u-2's override does not bypass a failed prerequisite.
        if Self.evaluate(set, "checkout", "u-2").value == .bool(false) {
            #expect(Self.evaluate(set, "express", "u-2").reason == .prerequisiteFailed)
        }
        // A split after a string prerequisite: only a pro's theme is dark.
        #expect(Self.evaluate(set, "dark-banner", "u-5").reason == .prerequisiteFailed)
        let pro = Self.evaluate(set, "dark-banner", "u-5", ["plan": "pro"])
        #expect(pro.reason == .split && ["a", "b"].contains(pro.variant))
    }

    @Test func killsAndExpiryComeFirstAndAKilledPrerequisiteServesItsKillValue() throws {
        var model = try Fixtures.decode(Self.document)
        model.flags["theme"]?.killed = true
        var set = CompiledFlagSet(model)
        // Killed, theme serves "dark" to everyone: dark-banner's prerequisite holds for a free plan too.
        #expect(Self.evaluate(set, "dark-banner", "u-5").reason == .split)
        model.flags["dark-banner"]?.killed = true
        set = CompiledFlagSet(model)
        #expect(Self.evaluate(set, "dark-banner", "u-5").variant == "kill")
        model.flags["dark-banner"]?.killed = false
        model.flags["dark-banner"]?.expiresAt = Self.now.addingTimeInterval(-60)
        set = CompiledFlagSet(model)
        #expect(Self.evaluate(set, "dark-banner", "u-5").variant == "expired")
    }

    @Test func theWireFormIsAFirstRuleOfPrerequisiteConditionsAndReadsBackAsPrerequisites() throws {
        let model = try Fixtures.decode(Self.document)
        let express = try #require(model.flags["express"])
        #expect(express.prerequisites == [Prerequisite(flag: "checkout", values: [.bool(true)])])
        let bytes = String(decoding: express.encoded(), as: UTF8.self)
        #expect(
            bytes.contains(
                #""rules":[{"name":"prerequisites","conditions":[{"attribute":"checkout","op":"prerequisite","values":["true"]}],"value":false},{"name":"everyone""#
            ), "\(bytes)")
        #expect(!bytes.contains(#""prerequisites":["#))
        // Read back, the rule is lifted into prerequisites again; a string value travels as its JSON text.
        let again = try FlagSet.decode(model.encoded())
        #expect(again == model)
        #expect(
            String(decoding: model.flags["dark-banner"]!.encoded(), as: UTF8.self).contains(#""values":["\"dark\""]"#))
        // Both forms at once is a problem of that flag alone.
        let twice = try Fixtures.decode(
            Fixtures.set(
                flag: #"{"type":"bool","default":false,"prerequisites":[{"flag":"a","values":[true]}],"#
                    + #""rules":[{"name":"prerequisites","conditions":[{"attribute":"a","op":"prerequisite","values":["true"]}],"value":false}]}"#
            ))
        #expect(twice.unreadableFlags["f"]?.first?.message.contains("given twice") == true)
    }

    /// What a client built before prerequisites does with the wire form: it reads `prerequisite` as an operator it
    /// does not know (`Operator(name:)` gave `.unknown` for every name it did not list), and serves the caller's
    /// compiled-in default for that flag alone, never the flag's targeting without its prerequisites.
    @Test func aReaderThatDoesNotKnowTheOperatorServesTheCompiledDefault() throws {
        var old = try FlagSet.decode(try Fixtures.decode(Self.document).encoded())
        for (key, flag) in old.flags where !flag.prerequisites.isEmpty {
            var seen = flag
            let rule = try #require(seen.prerequisiteRule)
            guard case .conditions(let conditions) = rule.target else { return }
            seen.rules.insert(
                Rule(
                    name: rule.name,
                    target: .conditions(
                        conditions.map {
                            Condition(attribute: $0.attribute, op: .unknown("prerequisite"), values: $0.values)
                        }),
                    serve: rule.serve), at: 0)
            seen.prerequisites = []
            old.flags[key] = seen
        }
        let set = CompiledFlagSet(old)
        let detail = set.evaluate("express", default: true, context: EvaluationContext(unitID: "u-1"), at: Self.now)
        #expect(detail.value == true && detail.reason == .error && detail.errorCode == .parseError)
        #expect(Self.evaluate(set, "checkout", "u-1").value == .bool(true), "other flags keep working")
        #expect(old.needs(of: old.flags["express"]!).operators.contains("prerequisite"))
    }

    static func problems(_ flags: String) throws -> [String] {
        try Fixtures.compile(#"{"schema":1,"set":"s","version":1,"flags":{"# + flags + "}}").problems.map(\.description)
    }

    static func bool(_ key: String, requires: [String], values: String = "[true]") -> String {
        let list = requires.map { #"{"flag":"\#($0)","values":\#(values)}"# }.joined(separator: ",")
        return #""\#(key)":{"type":"bool","default":false,"prerequisites":[\#(list)]}"#
    }

    @Test func validationNamesEachProblemAtItsPath() throws {
        #expect(
            try Self.problems(Self.bool("a", requires: ["gone"]))
                == ["flags.a.prerequisites[0].flag: the set has no flag 'gone'"])
        #expect(
            try Self.problems(Self.bool("a", requires: ["a"]))
                == ["flags.a.prerequisites[0].flag: a flag cannot require itself (a → a)"])
        #expect(
            try Self.problems(
                Self.bool("a", requires: ["b"], values: #"["yes"]"#) + #","b":{"type":"bool","default":true}"#)
                == [#"flags.a.prerequisites[0].values[0]: 'b' is a bool flag; "yes" is not a bool"#])
        #expect(
            try Self.problems(Self.bool("a", requires: ["b"], values: "[]") + #","b":{"type":"bool","default":true}"#)
                == ["flags.a.prerequisites[0].values: list at least one value that 'b' must serve"])
        let two = try Self.problems(Self.bool("a", requires: ["b"]) + "," + Self.bool("b", requires: ["a"]))
        #expect(
            two == [
                "flags.a.prerequisites: prerequisite cycle: a → b → a",
                "flags.b.prerequisites: prerequisite cycle: b → a → b",
            ])
        let keys = (0..<5).map { "c\($0)" }
        let long = try Self.problems(
            keys.indices.map { Self.bool(keys[$0], requires: [keys[($0 + 1) % keys.count]]) }.joined(separator: ","))
        #expect(long.count == 5 && long[0] == "flags.c0.prerequisites: prerequisite cycle: c0 → c1 → c2 → c3 → c4 → c0")
        // Nine links: the first flag's chain is too deep, the second's (eight) is not.
        let chain = (0...9).map { "d\($0)" }
        let deep = try Self.problems(
            chain.indices.map {
                $0 == 9 ? #""d9":{"type":"bool","default":true}"# : Self.bool(chain[$0], requires: [chain[$0 + 1]])
            }.joined(separator: ","))
        #expect(
            deep == [
                "flags.d0.prerequisites: a chain of prerequisites deeper than 8: "
                    + "d0 → d1 → d2 → d3 → d4 → d5 → d6 → d7 → d8 → d9"
            ])
        // A flag with a problem of its prerequisites is broken alone.
        let set = try Fixtures.compile(
            #"{"schema":1,"set":"s","version":1,"flags":{"# + Self.bool("a", requires: ["gone"])
                + #","b":{"type":"bool","default":true}}}"#)
        #expect(Self.evaluate(set, "a", "u").errorCode == .parseError)
        #expect(Self.evaluate(set, "b", "u").value == .bool(true))
    }

    @Test func aChangeToARequiredFlagRecompilesOnlyWhatItBreaksOrMends() throws {
        let set = try Fixtures.compile(Self.document)
        #expect(set.flags(requiring: "checkout") == ["express"])
        // Turning checkout into a string flag breaks express (its listed value is a bool), and only express.
        var checkout = try #require(set.flag("checkout"))
        checkout.type = .string
        checkout.defaultValue = .string("off")
        checkout.overrides = []
        checkout.rollout = nil
        let broken = set.updating(flags: ["checkout": checkout], cohorts: [:], version: 2, updatedAt: nil)
        #expect(broken.problems.map(\.path) == ["flags.express.prerequisites[0].values[0]"])
        #expect(broken.flags["theme"] === set.flags["theme"])
        // Removing checkout: express names a missing flag; restoring it mends express.
        let removal: [String: Flag?] = ["checkout": Flag?.none]
        let removed = set.updating(flags: removal, cohorts: [:], version: 2, updatedAt: nil)
        #expect(
            removed.problems.map(\.description) == [
                "flags.express.prerequisites[0].flag: the set has no flag 'checkout'"
            ])
        let restoring: [String: Flag?] = ["checkout": set.flag("checkout")]
        let restored = removed.updating(flags: restoring, cohorts: [:], version: 3, updatedAt: nil)
        #expect(restored.problems.isEmpty)
        // A kill of checkout recompiles checkout alone: express reads it when it evaluates.
        var killed = try #require(set.flag("checkout"))
        killed.killed = true
        let after = set.updating(flags: ["checkout": killed], cohorts: [:], version: 2, updatedAt: nil)
        #expect(after.flags["express"] === set.flags["express"])
        #expect(Self.evaluate(after, "express", "u-1").reason == .prerequisiteFailed)
    }

    /// A flag reads the clock when a step compares with the time, its prerequisites' steps included: requiring a flag
    /// that expires reads it once, requiring one that never looks at the time does not read it at all.
    @Test func theClockIsReadOnlyWhenARequiredFlagComparesWithTheTime() throws {
        let set = try Fixtures.compile(
            #"""
            {"schema":1,"set":"s","version":1,"flags":{
             "plain":{"type":"bool","default":true},
             "checkout":{"type":"bool","default":true,"expiresAt":"2026-11-30T00:00:00Z","expiredValue":false},
             "express":{"type":"bool","default":false,"prerequisites":[{"flag":"checkout","values":[true]}],
                        "rules":[{"name":"everyone","conditions":[],"value":true}]},
             "banner":{"type":"bool","default":false,"prerequisites":[{"flag":"plain","values":[true]}],
                       "rules":[{"name":"everyone","conditions":[],"value":true}]}}}
            """#)
        #expect(set.problems.isEmpty, "\(set.problems)")
        let context = EvaluationContext(unitID: "u-1")
        for (at, met) in [
            (Fixtures.date("2026-11-29T00:00:00Z"), true), (Fixtures.date("2026-12-01T00:00:00Z"), false),
        ] {
            var reads = 0
            let express = set.evaluate(FlagHandle("express"), type: .bool, default: .null, context: context) {
                reads += 1
                return at
            }
            #expect(express.value == .bool(met) && express.reason == (met ? .targetingMatch : .prerequisiteFailed))
            #expect(reads == 1)
            reads = 0
            let banner = set.evaluate(FlagHandle("banner"), type: .bool, default: .null, context: context) {
                reads += 1
                return at
            }
            #expect(banner.value == .bool(true) && reads == 0)
        }
    }

    @Test func explainShowsThePrerequisiteStep() throws {
        let set = try Fixtures.compile(Self.document)
        let steps = set.explain("express", context: EvaluationContext(unitID: "u-1"), at: Self.now).steps
        #expect(steps.first == "prerequisite 'checkout': serves one of the values listed")
        let failed = set.explain("dark-banner", context: EvaluationContext(unitID: "u-1"), at: Self.now).steps
        #expect(
            failed == [
                #"prerequisite 'theme' serves "light", not one of the values listed: serving the flag's default"#
            ])
    }

    /// The old-client fixture: `Vectors/prerequisites-wire.json` is what a server of this build serves for a set
    /// with prerequisites, and `Vectors/prerequisites-old-client.json` what flagctl built from the commit before
    /// prerequisites (9c5ff05, the evaluator every installed app has) evaluated on it (`flagctl eval --file`, captured
    /// once). Every flag with prerequisites fell back with `PARSE_ERROR`; every other flag evaluated as it does today.
    @Test func aBuildFromBeforePrerequisitesFellBackOnEveryFlagThatHasThem() throws {
        func vector(_ name: String) throws -> Data {
            let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Vectors"))
            return try Data(contentsOf: url)
        }
        let wire = [UInt8](try vector("prerequisites-wire"))
        let today = try FlagSet.decode(wire)
        // The fixture proves something only while this build still writes exactly that form.
        #expect(today.encoded() == wire)
        let compiled = CompiledFlagSet(today)
        let fixture = try #require(
            try JSONSerialization.jsonObject(with: try vector("prerequisites-old-client")) as? [String: Any])
        let evaluations = try #require(fixture["evaluations"] as? [[String: Any]])
        #expect(evaluations.count == 15)
        for evaluation in evaluations {
            let key = try #require(evaluation["flag"] as? String)
            let unit = try #require(evaluation["unit"] as? String)
            let flag = try #require(today.flags[key])
            let oldReason = evaluation["reason"] as? String
            let oldError = evaluation["errorCode"] as? String
            if !flag.prerequisites.isEmpty {
                #expect(oldReason == "ERROR" && oldError == "PARSE_ERROR", "\(key) for \(unit)")
                continue
            }
            var attributes: [String: String] = [:]
            for pair in evaluation["attributes"] as? [String] ?? [] {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                attributes[parts[0]] = parts[1]
            }
            let now = Fixtures.date("2026-12-06T12:00:00Z")
            let detail = compiled.evaluate(
                key, type: flag.type, default: .null, context: EvaluationContext(unitID: unit, attributes: attributes),
                at: now)
            #expect(detail.reason.rawValue == oldReason && oldError == nil, "\(key) for \(unit)")
        }
    }
}
