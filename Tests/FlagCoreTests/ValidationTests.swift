import Foundation
import Testing

@testable import FlagCore

@Suite("Validation: every problem with its JSON path, all at once")
struct ValidationTests {
    private func problems(_ json: String) throws -> [Problem] {
        CompiledFlagSet(try Fixtures.decode(json)).problems
    }

    private func paths(flag: String, cohorts: String = "{}") throws -> [String] {
        try problems(Fixtures.set(flag: flag, cohorts: cohorts)).map(\.path)
    }

    @Test(arguments: [
        (#"{"type":"bool","default":"yes"}"#, "flags.f.default"),
        (#"{"type":"int","default":1.5}"#, "flags.f.default"),
        (#"{"type":"string","default":"a","killValue":3}"#, "flags.f.killValue"),
        (#"{"type":"bool","default":true,"expiredValue":1}"#, "flags.f.expiredValue"),
        (#"{"type":"bool","default":true,"overrides":[{"unit":"u","value":"x"}]}"#, "flags.f.overrides[0].value"),
        (#"{"type":"bool","default":true,"rules":[{"name":"r","conditions":[],"value":0}]}"#, "flags.f.rules[0].value"),
        (#"{"type":"bool","default":true,"rollout":{"value":"x","percent":5}}"#, "flags.f.rollout.value"),
        (
            #"{"type":"bool","default":true,"rules":[{"name":"r","conditions":[],"split":[{"value":1,"weight":100}]}]}"#,
            "flags.f.rules[0].split[0].value"
        ),
    ])
    func wrongValueTypes(flag: String, path: String) throws {
        #expect(try paths(flag: flag) == [path])
    }

    @Test func missingCohorts() throws {
        let flag = #"""
            {"type":"bool","default":false,"overrides":[{"cohort":"nope","value":true}],
             "rules":[{"name":"a","cohort":"ghost","value":true},
                      {"name":"b","conditions":[{"attribute":"unitID","op":"in_cohort","values":["phantom"]}],"value":true}]}
            """#
        #expect(
            try paths(flag: flag) == [
                "flags.f.overrides[0].cohort", "flags.f.rules[0].cohort", "flags.f.rules[1].conditions[0].values[0]",
            ])
    }

    @Test func cohortCyclesAreRejectedAndNamed() throws {
        let cohorts = #"""
            {"a":{"groups":[[{"attribute":"unitID","op":"in_cohort","values":["b"]}]]},
             "b":{"groups":[[{"attribute":"unitID","op":"in_cohort","values":["c"]}]]},
             "c":{"groups":[[{"attribute":"unitID","op":"in_cohort","values":["a"]}]]},
             "d":{"groups":[[{"attribute":"unitID","op":"in_cohort","values":["d"]}]]}}
            """#
        let found = try problems(Fixtures.set(flag: #"{"type":"bool","default":false}"#, cohorts: cohorts))
        #expect(found.map(\.path) == ["cohorts.c", "cohorts.d"])
        #expect(found[0].message == "in_cohort cycle: a → b → c → a")
        #expect(found[1].message == "in_cohort cycle: d → d")
    }

    @Test func badRegularExpressions() throws {
        let flag = #"""
            {"type":"bool","default":false,"rules":[{"name":"r","conditions":[
              {"attribute":"email","op":"matches","values":["^ok$","(unclosed"]}],"value":true}]}
            """#
        #expect(try paths(flag: flag) == ["flags.f.rules[0].conditions[0].values[1]"])
    }

    @Test(arguments: [
        ("^(a+)+$", true), ("(a|ab)*c", true), ("(x*y){2,}", true), ("((ab)*)+", true), ("(?:a+)+", true),
        ("^[a-z]+@example\\.com$", false), ("(ab)+", false), ("a+b*c?", false), ("(a)(b)*", false),
        ("\\(a+\\)+", false), ("[(]a+[)]+", false), ("(a?)+", false), ("^(user|admin)-[0-9]+$", false),
    ])
    func patternsThatCanBacktrackExponentiallyAreRejected(pattern: String, rejected: Bool) throws {
        let escaped = pattern.replacingOccurrences(of: "\\", with: "\\\\")
        let flag = """
            {"type":"bool","default":false,"rules":[{"name":"r","conditions":[
              {"attribute":"email","op":"matches","values":["\(escaped)"]}],"value":true}]}
            """
        #expect(try paths(flag: flag) == (rejected ? ["flags.f.rules[0].conditions[0].values[0]"] : []))
    }

    @Test func percentsOutsideZeroToHundred() throws {
        let flag = #"""
            {"type":"bool","default":false,
             "rules":[{"name":"r","conditions":[],"rollout":{"value":true,"percent":101}}],
             "rollout":{"value":true,"schedule":[{"at":"2026-01-01T00:00:00Z","percent":-1}]}}
            """#
        #expect(try paths(flag: flag) == ["flags.f.rules[0].rollout.percent", "flags.f.rollout.schedule[0].percent"])
    }

    @Test func splitWeightsMustSumToHundred() throws {
        let flag = #"""
            {"type":"string","default":"a","rules":[{"name":"r","conditions":[],"split":[
              {"value":"a","weight":50},{"value":"b","weight":40}]}]}
            """#
        let found = try problems(Fixtures.set(flag: flag))
        #expect(found.map(\.path) == ["flags.f.rules[0].split"])
        #expect(found.first?.message == "split weights sum to 90, not 100")
    }

    @Test func unsortedSchedules() throws {
        let flag = #"""
            {"type":"bool","default":false,"rollout":{"value":true,"schedule":[
              {"at":"2026-01-02T00:00:00Z","percent":1},{"at":"2026-01-01T00:00:00Z","percent":5}]}}
            """#
        #expect(try paths(flag: flag) == ["flags.f.rollout.schedule[1].at"])
    }

    @Test func badKeysAndNames() throws {
        let json = #"""
            {"schema":1,"set":"Prod Set","version":1,
             "cohorts":{"Beta":{}},
             "flags":{"New_Checkout":{"type":"bool","default":false},"-x":{"type":"bool","default":false}}}
            """#
        #expect(try problems(json).map(\.path) == ["set", "cohorts.Beta", "flags.-x", "flags.New_Checkout"])
    }

    @Test func badOperandsAndUnknownConstructs() throws {
        let flag = #"""
            {"type":"bool","kind":"forever","default":false,"rules":[
              {"name":"n","conditions":[{"attribute":"age","op":"gt","values":["ten"]}],"value":true},
              {"name":"s","conditions":[{"attribute":"v","op":"semver_gte","values":["1.0"]}],"value":true},
              {"name":"t","conditions":[{"attribute":"at","op":"before","values":["tomorrow"]}],"value":true},
              {"name":"u","conditions":[{"attribute":"x","op":"similar_to","values":["y"]}],"value":true},
              {"name":"e","conditions":[{"attribute":"x","op":"eq","values":[]}],"value":true},
              {"name":"n","conditions":[],"value":true},
              {"name":"b","conditions":[],"bandit":{"arms":3}}]}
            """#
        #expect(
            try paths(flag: flag) == [
                "flags.f.kind",
                "flags.f.rules[0].conditions[0].values[0]",
                "flags.f.rules[1].conditions[0].values[0]",
                "flags.f.rules[2].conditions[0].values[0]",
                "flags.f.rules[3].conditions[0].op",
                "flags.f.rules[4].conditions[0].values",
                "flags.f.rules[5].name",
                "flags.f.rules[6]",
            ])
    }

    @Test func newerSchemaIsReportedForWrites() throws {
        let found = try problems(#"{"schema":2,"set":"s","version":1,"flags":{}}"#)
        #expect(found.map(\.path) == ["schema"])
    }

    @Test func everyProblemIsReportedNotJustTheFirst() throws {
        let json = #"""
            {"schema":1,"set":"s","version":1,"cohorts":{},"flags":{
              "a":{"type":"bool","default":1},
              "b":{"type":"int","default":"x","rollout":{"value":1,"percent":200}},
              "c":{"type":"bool","default":true,"rules":[{"name":"r","cohort":"none","value":true}]}}}
            """#
        #expect(
            try problems(json).map(\.path) == [
                "flags.a.default", "flags.b.default", "flags.b.rollout.percent", "flags.c.rules[0].cohort",
            ])
    }

    @Test func problemsReadMessagesNameTheFix() throws {
        let found = try problems(Fixtures.set(flag: #"{"type":"bool","default":"yes"}"#))
        #expect(found.first?.description == #"flags.f.default: expected a value of type bool, found "yes""#)
    }
}
