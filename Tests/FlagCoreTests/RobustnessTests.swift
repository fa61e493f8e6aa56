import Foundation
import Testing
@testable import FlagCore

/// Regressions for what fuzzing (Fuzz/, see RELIABILITY.md) and review of the fuzz targets found: each test holds
/// the smallest document that showed the fault.
@Suite("Robustness: fuzzing findings")
struct RobustnessTests {
    private static let flagPath = "flags.f"

    // MARK: - Found by FlagSetFuzz: a valid set must equal its own canonical encoding

    /// Fractions of a second were kept when read but dropped when written, so a stored set was another set: here
    /// the flag expired half a second later before storage than after.
    @Test func fractionalSecondsAreReadAsTheWholeSecondTheyWillBeStoredAs() throws {
        let set = try Fixtures.decode(
            #"""
            {"schema":1,"set":"s","version":1,"updatedAt":"2026-01-02T03:04:05.5+01:00","flags":{"f":{
              "type":"bool","default":false,"expiresAt":"2026-11-29T10:00:00.5Z","expiredValue":true,
              "overrides":[{"unit":"u-1","value":true,"until":"2026-11-29T09:00:00.999Z"}],
              "rollout":{"value":true,"schedule":[{"at":"2026-11-29T08:00:00.25Z","percent":100}],
                         "pausedAt":"2026-11-29T08:30:00.75Z"}}}}
            """#)
        #expect(set.updatedAt == Fixtures.date("2026-01-02T02:04:05Z"))
        let flag = try #require(set.flags["f"])
        #expect(flag.expiresAt == Fixtures.date("2026-11-29T10:00:00Z"))
        #expect(flag.overrides.first?.until == Fixtures.date("2026-11-29T09:00:00Z"))
        #expect(flag.rollout?.pausedAt == Fixtures.date("2026-11-29T08:30:00Z"))
        guard case .schedule(let steps)? = flag.rollout?.stage else {
            Issue.record("expected a schedule")
            return
        }
        #expect(steps.map(\.at) == [Fixtures.date("2026-11-29T08:00:00Z")])

        let stored = try FlagSet.decode(set.encoded())
        #expect(stored == set)
        #expect(stored.encoded() == set.encoded())
        let now = Fixtures.date("2026-11-29T10:00:00Z").addingTimeInterval(0.25)
        let context = EvaluationContext(unitID: "u-2")
        for compiled in [CompiledFlagSet(set), CompiledFlagSet(stored)] {
            let detail = compiled.evaluate("f", default: false, context: context, at: now)
            #expect(detail.value == true)
            #expect(detail.reason == .static)
        }
    }

    /// An offset could move a date-time outside years 0001–9999, which `format` clamps: the set read back was
    /// another set. Such instants are now rejected when read.
    @Test(arguments: [
        ("0001-01-01T00:00:00+00:01", false),
        ("0001-01-01T00:59:59+01:00", false),
        ("9999-12-31T23:59:59-00:01", false),
        ("9999-12-31T23:00:00-23:59", false),
        ("0001-01-01T00:00:00-00:01", true),
        ("0001-01-01T01:00:00+01:00", true),
        ("9999-12-31T23:59:59+00:01", true),
        ("9999-12-31T23:59:59.999Z", true),
    ])
    func offsetsCannotMoveAnInstantOutsideTheYearsAFormatCanWrite(_ text: String, _ accepted: Bool) throws {
        #expect((ISO8601.parse(text) != nil) == accepted, "\(text)")
        if !accepted {
            #expect(throws: ISO8601.ParseError(code: .instantOutOfRange)) { try ISO8601.date(from: text) }
        }
        let set = try Fixtures.decode(Fixtures.set(flag: #"{"type":"bool","default":true,"expiresAt":"\#(text)"}"#))
        if accepted {
            #expect(CompiledFlagSet(set).problems == [])
            #expect(try FlagSet.decode(set.encoded()) == set)
        } else {
            #expect(set.unreadableFlags["f"]?.map(\.path) == ["flags.f.expiresAt"])
        }
    }

    @Test func instantOutOfRangeMessageSaysWhy() {
        #expect(
            ISO8601.ParseError(code: .instantOutOfRange).message
                == "the offset moves the instant outside years 0001–9999 in UTC")
    }

    // MARK: - Found by review of the FlagSetFuzz target: in_cohort graphs that are valid but cannot be evaluated

    /// A set whose cohort `c0` names `c1`, `c1` names `c2`, … `c(count-1)`, each `fanOut` times; the flag `f`
    /// serves true to `c0`, and `u-1` is listed in the last cohort.
    private static func chain(count: Int, fanOut: Int = 1) -> FlagSet {
        var cohorts: [String: Cohort] = [:]
        for index in 0..<count - 1 {
            let next = Array(repeating: "c\(index + 1)", count: fanOut)
            cohorts["c\(index)"] = Cohort(groups: [[Condition(attribute: "unitID", op: .inCohort, values: next)]])
        }
        cohorts["c\(count - 1)"] = Cohort(include: ["u-1"])
        let rule = Rule(name: "r", target: .cohort("c0"), serve: .value(.bool(true)))
        let flag = Flag(key: "f", type: .bool, defaultValue: .bool(false), rules: [rule])
        return FlagSet(name: "s", version: 1, cohorts: cohorts, flags: ["f": flag])
    }

    private static func evaluate(_ compiled: CompiledFlagSet) -> EvaluationDetail<Bool> {
        let context = EvaluationContext(unitID: "u-1")
        return compiled.evaluate("f", default: false, context: context, at: Date(timeIntervalSince1970: 0))
    }

    /// Cycle detection recursed once per cohort: 50,000 cohorts in a chain (4 MB of JSON) overflowed the stack
    /// (crash at about 30,000 on an 8 MiB main thread), and evaluation recursed as deep. Once that was fixed, the
    /// "uses cohort …, which uses cohort …" messages nested every link: 24 GB for this chain.
    @Test func longInCohortChainIsReportedWithoutExhaustingStackOrMemory() {
        let compiled = CompiledFlagSet(Self.chain(count: 50_000))
        #expect(compiled.problems.map(\.description) == ["cohorts.c49966: nests in_cohort 33 levels deep (at most 32)"])
        let detail = Self.evaluate(compiled)
        #expect(detail.value == false)
        #expect(detail.errorCode == .parseError)
        #expect(
            detail.errorMessage
                == "flag 'f' cannot be evaluated: cohort 'c0': uses cohort 'c1', which leads to cohort 'c49966', "
                + "which nests in_cohort 33 levels deep (at most 32)")
    }

    /// A cohort at the end of a long chain naming every cohort before it closes 5,000 cycles: each was reported
    /// with the whole path, and every member walked, per cycle (quadratic). Now the first cycle is reported, with
    /// its name list shortened, and the rest are broken through it.
    @Test func manyCyclesThroughOneCohortAreReportedOnce() {
        var set = Self.chain(count: 5_000)
        let all = (0..<4_999).map { "c\($0)" }
        set.cohorts["c4999"] = Cohort(groups: [[Condition(attribute: "unitID", op: .inCohort, values: all)]])
        let compiled = CompiledFlagSet(set)
        #expect(
            compiled.problems.map(\.description) == [
                "cohorts.c4999: in_cohort cycle: c0 → c1 → c2 → c3 → c4 → … 4993 more … → c4998 → c4999 → c0"
            ])
        #expect(Self.evaluate(compiled).errorCode == .parseError)
    }

    @Test func inCohortNestingUpToTheLimitEvaluates() {
        let deepest = CompiledFlagSet(Self.chain(count: Compiler.maximumCohortDepth + 1))
        #expect(deepest.problems == [])
        #expect(Self.evaluate(deepest).value == true)
        #expect(Self.evaluate(deepest).reason == .targetingMatch)
        let tooDeep = CompiledFlagSet(Self.chain(count: Compiler.maximumCohortDepth + 2))
        #expect(tooDeep.problems.map(\.description) == ["cohorts.c0: nests in_cohort 33 levels deep (at most 32)"])
    }

    /// Each cohort naming the next twice doubles the work: 40 such cohorts took 2^40 checks per evaluation (a
    /// hang of every evaluation, from a 3 KB document that validated).
    @Test func inCohortReferencesThatMultiplyAreReported() {
        // Cost of c0 with n doubling levels below it: 2^(n+1) - 1 checks.
        let cheap = CompiledFlagSet(Self.chain(count: 9, fanOut: 2))  // 511
        #expect(cheap.problems == [])
        #expect(Self.evaluate(cheap).value == true)
        let costly = CompiledFlagSet(Self.chain(count: 10, fanOut: 2))  // 1023
        #expect(
            costly.problems.map(\.description) == [
                "cohorts.c0: expands through in_cohort to more than 1000 cohort checks per evaluation"
            ])
        let huge = CompiledFlagSet(Self.chain(count: 40, fanOut: 2))
        #expect(huge.problems.map(\.path) == ["cohorts.c30"])
        #expect(Self.evaluate(huge).errorCode == .parseError)
    }
}
