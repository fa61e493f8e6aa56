import Foundation
import Testing

@testable import FlagCore

/// What a flag needs a client to evaluate, and what a client lacks of it: the compatibility gate's question
/// (docs/telemetry.md, "The compatibility gate").
@Suite("Client capabilities: what a flag needs")
struct ClientCapabilitiesNeedsTests {
    static func condition(_ op: Operator, _ values: [String] = ["x"]) -> Condition {
        Condition(attribute: op == .inCohort ? "unitID" : "a", op: op, values: values)
    }

    static func uses(_ cohorts: String...) -> Condition {
        condition(.inCohort, cohorts)
    }

    static func flag(rules: [Rule] = [], overrides: [Override] = []) -> Flag {
        Flag(key: "f", type: .bool, defaultValue: .bool(false), overrides: overrides, rules: rules)
    }

    static func rule(_ name: String, _ conditions: [Condition]) -> Rule {
        Rule(name: name, target: .conditions(conditions), serve: .value(.bool(true)))
    }

    static func rule(_ name: String, cohort: String) -> Rule {
        Rule(name: name, target: .cohort(cohort), serve: .value(.bool(true)))
    }

    static func needs(_ flag: Flag, cohorts: [String: Cohort] = [:], schema: Int = 1) -> ClientCapabilities {
        FlagSet(name: "s", version: 3, schema: schema, cohorts: cohorts, flags: ["f": flag]).needs(of: flag)
    }

    @Test func aFlagWithoutRulesNeedsOnlyTheSchema() {
        let flag = Self.flag()
        #expect(Self.needs(flag) == ClientCapabilities(schema: 1, operators: []))
        #expect(Self.needs(flag, schema: 2) == ClientCapabilities(schema: 2, operators: []))
    }

    @Test func theOperatorsOfEveryRulesConditionsAreNeeded() {
        let flag = Self.flag(rules: [
            Self.rule("a", [Self.condition(.eq), Self.condition(.semverGte, ["5.2.0"])]),
            Self.rule("b", []),
            Self.rule("c", [Self.condition(.matches, ["^x"]), Self.condition(.eq)]),
        ])
        #expect(Self.needs(flag).operators == ["eq", "semver_gte", "matches"])
    }

    /// Through a rule's cohort, an `in_cohort` condition and a cohort override, and on through the cohorts those
    /// name; a cohort the flag does not reach adds nothing.
    @Test func theOperatorsOfTheCohortsAFlagUsesAreNeededTransitively() {
        let cohorts: [String: Cohort] = [
            "beta": Cohort(groups: [[Self.condition(.semverGte, ["5.2.0"]), Self.condition(.in)]]),
            "beta-ios": Cohort(groups: [[Self.uses("beta"), Self.condition(.eq)]]),
            "staff": Cohort(groups: [[Self.condition(.endsWith)], [Self.condition(.exists)]]),
            "qa": Cohort(include: ["qa-1"], groups: [[Self.uses("devices")]]),
            "devices": Cohort(groups: [[Self.condition(.startsWith)]]),
            "unused": Cohort(groups: [[Self.condition(.before), Self.condition(.notIn)]]),
        ]
        let byRuleCohort = Self.flag(rules: [Self.rule("r", cohort: "beta-ios")])
        #expect(Self.needs(byRuleCohort, cohorts: cohorts).operators == ["in_cohort", "eq", "semver_gte", "in"])

        let byCondition = Self.flag(rules: [Self.rule("r", [Self.uses("staff"), Self.condition(.lt)])])
        #expect(Self.needs(byCondition, cohorts: cohorts).operators == ["in_cohort", "lt", "ends_with", "exists"])

        let byOverride = Self.flag(overrides: [Override(target: .cohort("qa"), value: .bool(true))])
        #expect(Self.needs(byOverride, cohorts: cohorts).operators == ["in_cohort", "starts_with"])

        let byUnitOverride = Self.flag(overrides: [Override(target: .unit("beta"), value: .bool(true))])
        #expect(Self.needs(byUnitOverride, cohorts: cohorts).operators.isEmpty)
    }

    @Test func aCycleOfCohortsIsFollowedOnce() {
        let cohorts: [String: Cohort] = [
            "a": Cohort(groups: [[Self.uses("b"), Self.condition(.gt)]]),
            "b": Cohort(groups: [[Self.uses("c")], [Self.condition(.after)]]),
            "c": Cohort(groups: [[Self.uses("a", "c"), Self.condition(.semverLt, ["2.0.0"])]]),
            "self": Cohort(groups: [[Self.uses("self"), Self.condition(.neq)]]),
        ]
        let flag = Self.flag(rules: [Self.rule("r", cohort: "a"), Self.rule("s", cohort: "self")])
        #expect(
            Self.needs(flag, cohorts: cohorts).operators == ["in_cohort", "gt", "after", "semver_lt", "neq"])
    }

    /// A set whose flag reaches its last cohort through a chain of 50,000: walked without recursion.
    @Test func aLongChainOfCohortsIsWalkedToItsEnd() {
        let count = 50_000
        var cohorts: [String: Cohort] = [:]
        for index in 0..<count - 1 {
            cohorts["c\(index)"] = Cohort(groups: [[Self.uses("c\(index + 1)")]])
        }
        cohorts["c\(count - 1)"] = Cohort(groups: [[Self.condition(.semverGte, ["1.0.0"])]])
        let flag = Self.flag(rules: [Self.rule("r", cohort: "c0")])
        #expect(Self.needs(flag, cohorts: cohorts).operators == ["in_cohort", "semver_gte"])
    }

    /// A cohort the set does not have (the flag cannot compile then) adds nothing and stops nothing.
    @Test func aMissingCohortAddsNothing() {
        let cohorts = [
            "b": Cohort(groups: [[Self.uses("gone", "b2")]]), "b2": Cohort(groups: [[Self.condition(.lte)]]),
        ]
        let flag = Self.flag(rules: [Self.rule("r", cohort: "nowhere"), Self.rule("s", cohort: "b")])
        #expect(Self.needs(flag, cohorts: cohorts).operators == ["in_cohort", "lte"])
    }

    /// An operator from a newer writer is needed under its own name, so that a client that knows it passes.
    @Test func anOperatorThisBuildDoesNotKnowIsNeededByItsName() {
        let flag = Self.flag(rules: [Self.rule("r", [Self.condition(Operator(name: "geo_within"))])])
        let needs = Self.needs(flag)
        #expect(needs.operators == ["geo_within"])
        #expect(ClientCapabilities.current.lacking(needs).operators == ["geo_within"])
    }

    // MARK: - What a client lacks

    @Test func aClientLacksTheOperatorsItDoesNotDeclare() {
        var old = ClientCapabilities.current
        old.operators.subtract(["semver_gte", "semver_lt"])
        let needs = ClientCapabilities(schema: 1, operators: ["eq", "semver_gte", "semver_lt", "in"])
        let lacking = old.lacking(needs)
        #expect(lacking == ClientCapabilities(schema: 0, operators: ["semver_gte", "semver_lt"]))
        #expect(!lacking.isEmpty)
        #expect(ClientCapabilities.current.lacking(needs).isEmpty)
    }

    /// `lacking`'s schema is the one needed when it is newer than the client's, else 0 ("nothing lacking").
    @Test(arguments: [(1, 1, 0), (1, 2, 2), (3, 2, 0)])
    func aClientLacksANewerSchema(_ has: Int, _ needed: Int, _ lacking: Int) {
        let client = ClientCapabilities(schema: has, operators: ["eq"])
        let result = client.lacking(ClientCapabilities(schema: needed, operators: ["eq"]))
        #expect(result == ClientCapabilities(schema: lacking, operators: []))
        #expect(result.isEmpty == (lacking == 0))
    }

    /// The demo set, as a client of this build and as one that knows no semver operator sees it.
    @Test func theDemoSetsCheckoutNeedsSemverThroughItsBetaCohort() throws {
        let set = try FlagSet.decode(try Fixtures.demoBytes)
        let flag = try #require(set.flags["new-checkout"])
        let needs = set.needs(of: flag)
        #expect(needs.operators == ["semver_gte", "in"])
        #expect(ClientCapabilities.current.lacking(needs).isEmpty)
        var old = ClientCapabilities.current
        old.operators = old.operators.filter { !$0.hasPrefix("semver_") }
        #expect(old.lacking(needs).operators == ["semver_gte"])
    }

    // MARK: - The gate's rules

    @Test func aFlagIntroducesWhatItNeedsNowAndDidNot() {
        let before = ClientCapabilities(schema: 1, operators: ["eq", "in"])
        let now = ClientCapabilities(schema: 1, operators: ["eq", "semver_gte", "ends_with"])
        #expect(
            CompatibilityGate.introduced(needing: now, before: before) == [
                .operator("ends_with"), .operator("semver_gte"),
            ])
        let fewer = ClientCapabilities(schema: 1, operators: ["eq"])
        #expect(CompatibilityGate.introduced(needing: fewer, before: now).isEmpty)
        #expect(CompatibilityGate.introduced(needing: now, before: nil).first == .schema(1))
        let newer = ClientCapabilities(schema: 2, operators: ["eq", "in"])
        #expect(CompatibilityGate.introduced(needing: newer, before: before) == [.schema(2)])
    }

    @Test func aCohortIntroducesTheOperatorsOfItsOwnConditions() {
        let old = Cohort(groups: [[Self.condition(.eq)]])
        let new = Cohort(groups: [[Self.condition(.eq)], [Self.condition(.semverGte, ["5.0.0"]), Self.uses("beta")]])
        #expect(
            CompatibilityGate.introduced(by: new, before: old) == [.operator("in_cohort"), .operator("semver_gte")])
        #expect(CompatibilityGate.introduced(by: old, before: new).isEmpty)
    }

    /// More than 0.1 %: 1 of 1,000 passes, 2 of 1,000 and 1 of 999 refuse; nobody active refuses nothing.
    @Test(arguments: [(1, 1000, false), (2, 1000, true), (1, 999, true), (0, 0, false), (1, 1, true)])
    func theGateRefusesOverOneInAThousand(_ lacking: Int, _ active: Int, _ refused: Bool) {
        #expect(CompatibilityGate.refuses(lacking: lacking, active: active) == refused)
    }

    @Test func aConstructIsLackingByWhatAClientDeclares() {
        let client = ClientCapabilities(schema: 1, operators: ["eq"])
        #expect(CompatibilityGate.Construct.operator("in").isLacking(in: client, enums: [:]))
        #expect(!CompatibilityGate.Construct.operator("eq").isLacking(in: client, enums: [:]))
        #expect(CompatibilityGate.Construct.schema(2).isLacking(in: client, enums: [:]))
        #expect(!CompatibilityGate.Construct.schema(1).isLacking(in: client, enums: [:]))
        #expect(CompatibilityGate.Construct.operator("in").description == "operator \"in\"")
    }

    // MARK: - Values of enum flags

    static func theme(
        default value: String = "blue", rules: [Rule] = [], overrides: [Override] = [], rollout: Rollout? = nil
    ) -> Flag {
        Flag(
            key: "theme", type: .string, defaultValue: .string(value), overrides: overrides, rules: rules,
            rollout: rollout)
    }

    /// Every place a value is served from counts, in force now or not: a kill or an expiry serves its value without
    /// changing the flag, so the value must be known before.
    @Test func aFlagCanServeEveryValueItHoldsWhereverItHoldsIt() {
        var flag = Self.theme(
            rules: [
                Rule(name: "a", target: .conditions([]), serve: .value(.string("rule"))),
                Rule(
                    name: "b", target: .conditions([]),
                    serve: .rollout(Rollout(value: .string("rule-rollout"), stage: .percent(5)))),
                Rule(
                    name: "c", target: .conditions([]),
                    serve: .split([
                        Variant(value: .string("arm-1"), weight: 50), Variant(value: .string("arm-2"), weight: 50),
                    ])),
                Rule(name: "d", target: .conditions([]), serve: .unknown(["future"])),
            ],
            overrides: [Override(target: .unit("u"), value: .string("override"))],
            rollout: Rollout(value: .string("rollout"), stage: .percent(1)))
        flag.killValue = .string("kill")
        flag.expiredValue = .string("expired")
        #expect(
            flag.servableStrings == [
                "blue", "rule", "rule-rollout", "arm-1", "arm-2", "override", "rollout", "kill", "expired",
            ])
        flag.archived = true
        #expect(flag.servableStrings.isEmpty)
        #expect(Flag(key: "b", type: .bool, defaultValue: .bool(true)).servableStrings.isEmpty)
        #expect(Flag(key: "j", type: .json, defaultValue: .string("blue")).servableStrings.isEmpty)
    }

    @Test func aWriteIntroducesTheValuesTheFlagCouldNotServeBefore() {
        let before = Self.theme(rules: [Rule(name: "a", target: .conditions([]), serve: .value(.string("green")))])
        var now = before
        now.rules.append(Rule(name: "b", target: .conditions([]), serve: .value(.string("orange"))))
        now.killValue = .string("black")
        #expect(
            CompatibilityGate.introduced(serving: now, before: before) == [
                .value("black", flag: "theme"), .value("orange", flag: "theme"),
            ])
        // A value moved from a rule to the default is not new; nor is anything a deletion or a narrowing leaves.
        let moved = Self.theme(default: "green")
        #expect(CompatibilityGate.introduced(serving: moved, before: before).isEmpty)
        #expect(CompatibilityGate.introduced(serving: before, before: now).isEmpty)
        // A new flag introduces every value it can serve.
        #expect(
            CompatibilityGate.introduced(serving: before, before: nil) == [
                .value("blue", flag: "theme"), .value("green", flag: "theme"),
            ])
    }

    /// A client lacks a value only when it reported the flag's values without it: one that reported none for the
    /// flag (it reads it as a string, or is older) takes any value.
    @Test func aValueIsLackingOnlyByAClientThatReadsTheFlagAsAnEnumWithoutIt() {
        let client = ClientCapabilities.current
        let orange = CompatibilityGate.Construct.value("orange", flag: "theme")
        let old: [String: TelemetryReport.KnownValues] = ["theme": .init(values: ["blue", "green"])]
        let new: [String: TelemetryReport.KnownValues] = ["theme": .init(values: ["blue", "green", "orange"])]
        #expect(orange.isLacking(in: client, enums: old))
        #expect(!orange.isLacking(in: client, enums: new))
        #expect(!orange.isLacking(in: client, enums: [:]))
        #expect(!orange.isLacking(in: client, enums: ["other": .init(values: ["blue"])]))
        #expect(orange.description == "value \"orange\"")
    }
}
