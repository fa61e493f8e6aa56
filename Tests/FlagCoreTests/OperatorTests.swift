import Foundation
import Testing

@testable import FlagCore

@Suite("Attribute conditions (SPEC §2.3)")
struct OperatorTests {
    /// Whether a one-condition rule matches a context holding `attribute` (or not, when `nil`).
    private func holds(_ op: String, _ values: [String], _ attribute: String?, name: String = "a") throws -> Bool {
        let operands = values.map { "\"\($0)\"" }.joined(separator: ",")
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: """
                    {"type":"bool","default":false,"rules":[{"name":"r","conditions":[
                      {"attribute":"\(name)","op":"\(op)","values":[\(operands)]}],"value":true}]}
                    """,
                cohorts:
                    #"{"vip":{"include":["u-vip"]},"de":{"groups":[[{"attribute":"a","op":"eq","values":["DE"]}]]}}"#))
        #expect(set.problems == [])
        let attributes = attribute.map { ["a": $0] } ?? [:]
        return set.evaluate(
            "f", default: false, context: EvaluationContext(unitID: "u-1", attributes: attributes),
            at: Date(timeIntervalSince1970: 0)
        ).value
    }

    @Test(
        arguments: [
            ("eq", ["DE"], "DE", true), ("eq", ["DE"], "de", false), ("eq", ["DE", "AT"], "AT", true),
            ("neq", ["DE"], "FR", true), ("neq", ["DE"], "DE", false),
            ("in", ["DE", "AT"], "AT", true), ("in", ["DE", "AT"], "FR", false),
            ("not_in", ["DE", "AT"], "FR", true), ("not_in", ["DE", "AT"], "DE", false),
            ("contains", ["@ex"], "a@ex.com", true), ("contains", ["@ex"], "a@other.com", false),
            ("starts_with", ["5."], "5.2.0", true), ("starts_with", ["5."], "15.2", false),
            ("ends_with", ["@example.com"], "ann@example.com", true),
            ("ends_with", ["@example.com"], "ann@example.org", false),
            ("matches", ["^[a-z]+-[0-9]+$"], "user-42", true), ("matches", ["^[a-z]+-[0-9]+$"], "User-42", false),
            ("matches", ["ab"], "xxabxx", true),
            ("lt", ["10"], "9.5", true), ("lt", ["10"], "10", false), ("lte", ["10"], "10", true),
            ("gt", ["10"], "10.01", true), ("gt", ["10"], "1e1", false), ("gte", ["-1"], "-1", true),
            ("gt", ["10"], "eleven", false), ("lt", ["10"], "", false), ("lt", ["10"], "NaN", false),
            ("semver_eq", ["1.2.3"], "1.2.3+build.7", true), ("semver_eq", ["1.2.3"], "1.2.4", false),
            ("semver_lt", ["1.0.0"], "1.0.0-rc.1", true), ("semver_lte", ["1.0.0"], "1.0.0", true),
            ("semver_gt", ["1.0.0-beta.2"], "1.0.0-beta.11", true), ("semver_gte", ["5.2.0"], "5.10.0", true),
            ("semver_gte", ["5.2.0"], "5.2", false), ("semver_gte", ["5.2.0"], "v5.3.0", false),
            ("before", ["2026-12-01T00:00:00Z"], "2026-11-30T23:59:59Z", true),
            ("before", ["2026-12-01T00:00:00Z"], "2026-12-01T00:00:00Z", false),
            ("after", ["2026-12-01T00:00:00Z"], "2026-12-01T01:00:00+00:30", true),
            ("after", ["2026-12-01T00:00:00Z"], "not a date", false),
            ("exists", [], "", true), ("not_exists", [], "x", false),
            ("starts_with", [""], "", true), ("ends_with", [""], "", true), ("contains", [""], "", true),
            ("ends_with", ["é"], "café", true), ("starts_with", ["ca"], "", false), ("contains", ["fé"], "café", true),
            ("semver_gt", ["1.0.0-rc.1"], "1.0.0", true), ("semver_lt", ["1.0.0"], "01.0.0", false),
            ("semver_gte", ["10.0.0"], "9.99.99", false),
        ] as [(String, [String], String, Bool)])
    func operatorOnPresentAttribute(op: String, values: [String], attribute: String, expected: Bool) throws {
        #expect(try holds(op, values, attribute) == expected)
    }

    @Test(arguments: [
        "eq", "neq", "in", "not_in", "contains", "starts_with", "ends_with", "matches", "lt", "lte", "gt", "gte",
        "semver_eq", "semver_lt", "semver_lte", "semver_gt", "semver_gte", "before", "after", "exists",
    ])
    func missingAttributeIsFalse(op: String) throws {
        let values: [String] =
            switch op {
            case "exists": []
            case "lt", "lte", "gt", "gte": ["1"]
            case "before", "after": ["2026-01-01T00:00:00Z"]
            case let semver where semver.hasPrefix("semver"): ["1.0.0"]
            default: ["x"]
            }
        #expect(try holds(op, values, nil) == false)
    }

    @Test func notExistsIsTrueOnlyWhenMissing() throws {
        #expect(try holds("not_exists", [], nil) == true)
        #expect(try holds("not_exists", [], "") == false)
    }

    @Test func unitIDIsAnAttribute() throws {
        #expect(try holds("eq", ["u-1"], nil, name: "unitID") == true)
        #expect(try holds("starts_with", ["v-"], nil, name: "unitID") == false)
    }

    @Test func inCohortLooksAtTheUnit() throws {
        #expect(try holds("in_cohort", ["de"], "DE", name: "unitID") == true)
        #expect(try holds("in_cohort", ["vip", "de"], "FR", name: "unitID") == false)
    }

    @Test func cohortIncludeBeatsExcludeAndExcludeBeatsGroups() throws {
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: #"{"type":"bool","default":false,"rules":[{"name":"r","cohort":"c","value":true}]}"#,
                cohorts:
                    #"{"c":{"include":["both"],"exclude":["both","out"],"groups":[[{"attribute":"k","op":"eq","values":["v"]}]]}}"#
            ))
        func value(_ unit: String) -> Bool {
            set.evaluate(
                "f", default: false, context: EvaluationContext(unitID: unit, attributes: ["k": "v"]),
                at: Date(timeIntervalSince1970: 0)
            ).value
        }
        #expect(value("both") == true)
        #expect(value("out") == false)
        #expect(value("anyone") == true)
    }

    @Test func semanticVersionPrecedenceChainFromTheIssue() throws {
        let chain = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
            "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0",
        ]
        for (lower, higher) in zip(chain, chain.dropFirst()) {
            #expect(try holds("semver_lt", [higher], lower), "\(lower) < \(higher)")
            #expect(try holds("semver_gt", [lower], higher), "\(higher) > \(lower)")
            #expect(try !holds("semver_lt", [lower], higher))
        }
    }
}

@Suite("Phased rollouts (SPEC §2.2)")
struct PhasedRolloutTests {
    let start = Fixtures.date("2026-11-01T09:00:00Z")

    @Test func applePresetIsSevenDailySteps() throws {
        let rollout = try #require(Rollout.preset("apple", start: start, value: .bool(true)))
        guard case .schedule(let steps) = rollout.stage else {
            Issue.record("expected a schedule")
            return
        }
        #expect(steps.map(\.percent) == [1, 2, 5, 10, 20, 50, 100])
        #expect(steps.map { $0.at.timeIntervalSince(start) / 86_400 } == [0, 1, 2, 3, 4, 5, 6])
        #expect(rollout.percent(at: start.addingTimeInterval(-1)) == 0)
        #expect(rollout.percent(at: start) == 1)
        #expect(rollout.percent(at: start.addingTimeInterval(3.5 * 86_400)) == 10)
        #expect(rollout.percent(at: start.addingTimeInterval(30 * 86_400)) == 100)
        #expect(Rollout.preset("google", start: start, value: .bool(true)) == nil)
    }

    @Test func pauseHoldsThePercentAndResumeShiftsLaterSteps() throws {
        let rollout = try #require(Rollout.preset("apple", start: start, value: .bool(true)))
        let pausedAt = start.addingTimeInterval(2.5 * 86_400)  // at 5 %
        let paused = rollout.paused(at: pausedAt)
        #expect(paused.percent(at: start.addingTimeInterval(20 * 86_400)) == 5)
        #expect(paused.paused(at: pausedAt.addingTimeInterval(60)).pausedAt == pausedAt)
        let resumedAt = pausedAt.addingTimeInterval(3 * 86_400)  // paused for three days
        let resumed = paused.resumed(at: resumedAt)
        #expect(resumed.pausedAt == nil)
        guard case .schedule(let steps) = resumed.stage else {
            Issue.record("expected a schedule")
            return
        }
        #expect(steps.map { $0.at.timeIntervalSince(start) / 86_400 } == [0, 1, 2, 6, 7, 8, 9])
        #expect(resumed.percent(at: resumedAt) == 5)
        #expect(resumed.percent(at: start.addingTimeInterval(6 * 86_400)) == 10)
        #expect(rollout.resumed(at: resumedAt) == rollout)
    }

    @Test func compiledScheduleAgreesWithPercentAt() throws {
        let rollout = try #require(Rollout.preset("apple", start: start, value: .bool(true))).paused(
            at: start.addingTimeInterval(4 * 86_400 + 5))
        var flag = Flag(key: "f", type: .bool, defaultValue: .bool(false))
        flag.rollout = rollout
        let compiled = CompiledFlagSet(FlagSet(name: "s", version: 1, flags: ["f": flag]))
        #expect(compiled.problems == [])
        let later = start.addingTimeInterval(10 * 86_400)
        let units = (0..<20_000).map { "unit-\($0)" }
        let inside = units.filter {
            compiled.evaluate("f", default: false, context: EvaluationContext(unitID: $0), at: later).value
        }
        #expect(rollout.percent(at: later) == 20)
        #expect(abs(Double(inside.count) / 20_000 - 0.20) < 0.015)
    }
}
