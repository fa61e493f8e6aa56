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
}
