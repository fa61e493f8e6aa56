import FlagAPI
import FlagCore
import Foundation
import Testing

@testable import FlagCLI

/// The pure parts of the online commands: values by type, times for people, rollout progress, diffs.
@Suite("flagctl online formatting")
struct OnlineFormattingTests {
    @Test(
        "values are parsed by the flag's type",
        arguments: [
            ("true", "bool", JSONValue.bool(true)), ("false", "bool", .bool(false)), ("42", "int", .int(42)),
            ("-7", "int", .int(-7)), ("1.5", "double", .double(1.5)), ("blue", "string", .string("blue")),
            ("42", "string", .string("42")), (#"{"columns":2}"#, "json", .object(["columns": .int(2)])),
            ("[1,2]", "json", .array([.int(1), .int(2)])),
        ])
    func typedValues(_ text: String, _ type: String, _ expected: JSONValue) throws {
        #expect(try Typed.value(text, type: type, for: "--value") == expected)
    }

    @Test(
        "a value of the wrong type says what the type wants",
        arguments: [
            ("yes", "bool", "--value: 'yes' is not a bool; use true or false"),
            ("1.5", "int", "--value: '1.5' is not an int; use a whole number such as 42"),
            ("abc", "double", "--value: 'abc' is not a double; use a number such as 1.5"),
        ])
    func wrongTypes(_ text: String, _ type: String, _ message: String) {
        #expect(throws: CLIError.self) { try Typed.value(text, type: type, for: "--value") }
        do {
            _ = try Typed.value(text, type: type, for: "--value")
        } catch {
            #expect(error.message == message)
            #expect(error.exitCode == .failure)
        }
    }

    @Test(
        "a mutation answer gives the version note",
        arguments: [
            (#"{"set":"s","version":43,"changed":true,"key":"k","flag":{}}"#, "(version 43)"),
            (#"{"set":"s","version":42,"changed":false}"#, "(unchanged, still version 42)"),
        ])
    func versionNotes(_ body: String, _ expected: String) throws {
        #expect(AdminClient.versionNote(try API.kill.answer(Array(body.utf8))) == expected)
    }

    @Test func anAnswerThatIsNotAMutationResponseNamesWhatIsMissing() {
        #expect(throws: WireFormatError.self) { try API.kill.answer(Array(#"{"set":"s","changed":true}"#.utf8)) }
    }

    @Test(
        "times read as people say them",
        arguments: [
            (5 * 86_400, "in 5 days"), (-3 * 3600, "3 hours ago"), (30, "now"), (90 * 60, "in 2 hours"),
            (10 * 60, "in 10 minutes"), (86_400 * 42 - 1, "in 42 days"),
        ])
    func relativeTimes(_ offset: Int, _ text: String) {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(Shown.relative(now.addingTimeInterval(Double(offset)), now: now) == text)
    }

    @Test func datesReadInUTCToTheMinute() throws {
        #expect(Shown.date(try ISO8601.date(from: "2026-12-01T09:00:59Z")) == "2026-12-01 09:00 UTC")
    }

    @Test func aPausedScheduleStaysAtItsStepAndTheBarShowsThePercent() throws {
        let rollout = try JSONReader.parse(
            Array(
                #"""
                {"value":true,"schedule":[{"at":"2026-11-01T00:00:00Z","percent":1},
                {"at":"2026-11-02T00:00:00Z","percent":50},{"at":"2026-11-03T00:00:00Z","percent":100}],
                "pausedAt":"2026-11-02T12:00:00Z"}
                """#.utf8))
        let later = try ISO8601.date(from: "2026-11-10T00:00:00Z")
        #expect(RolloutView.percent(rollout, now: later) == 50)
        #expect(RolloutView.bar(50) == "[##########..........]")
        #expect(RolloutView.bar(100) == "[####################]")
        let lines = RolloutView.lines("x", rollout, now: later)
        #expect(lines[0] == "x: 50% of true, step 2 of 3, paused since 2026-11-02 12:00 UTC (8 days ago)")
        #expect(lines[5].hasPrefix(">  2     2026-11-02 00:00 UTC"))
    }

    @Test func conditionsSplitIntoAttributeOperatorAndValues() throws {
        let parsed = try ArgumentParser(commands: [RuleAddCommand.self])
            .parse(["rule", "add", "k", "--where", "country in DE,AT", "--value", "true"], environment: [:])
        guard case .run(_, let arguments, _) = parsed else {
            Issue.record("expected a command")
            return
        }
        #expect(
            try Typed.condition("country in DE,AT", arguments)
                == .object([
                    "attribute": .string("country"), "op": .string("in"),
                    "values": .array([.string("DE"), .string("AT")]),
                ]))
        #expect(throws: CLIError.self) { try Typed.condition("country", arguments) }
    }

    @Test func aDiffListsEachChangedMember() throws {
        let flags = [
            ItemDiff(key: "a", before: nil, after: RawJSON(.object(["default": .bool(false)]))),
            ItemDiff(
                key: "b", before: RawJSON(.object(["killed": .bool(false), "default": .int(1)])),
                after: RawJSON(.object(["killed": .bool(true), "default": .int(1)]))),
        ]
        #expect(try DiffText.lines(flags: flags, cohorts: []) == ["+ flag a", "~ flag b", "    killed: false → true"])
    }
}
