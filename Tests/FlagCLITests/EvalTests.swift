import FlagCLI
import FlagTestSupport
import Foundation
import Testing

/// One expected evaluation of the demo set (config/flagsets/demo.json).
struct DemoCase: CustomTestStringConvertible, Sendable {
    let key: String
    let unit: String
    var attributes: [String] = []
    var at = "2026-11-29T12:00:00Z"
    /// The value as compact JSON.
    let value: String
    let reason: String
    let variant: String

    var testDescription: String { "\(key) for \(unit) \(attributes) at \(at)" }
}

/// `flagctl eval --file`, run as a process. Expected results follow SPEC §2 by hand from the demo file; bucket
/// numbers were computed with an independent MurmurHash3 (checked against /work/shared/vectors).
@Suite("flagctl eval --file", .live)
struct EvalTests {
    static let noon = "2026-11-29T12:00:00Z"

    /// At noon on 2026-11-29 the new-checkout schedule stands at 10 % (bucket < 1000).
    static let cases: [DemoCase] = [
        // u-1 is listed in the beta cohort's include.
        DemoCase(key: "new-checkout", unit: "u-1", value: "true", reason: "TARGETING_MATCH", variant: "beta-first"),
        // qa-1 is in the qa cohort, whose override comes before the rules.
        DemoCase(key: "new-checkout", unit: "qa-1", value: "true", reason: "TARGETING_MATCH", variant: "override:qa"),
        // beta by its condition group: appVersion >= 5.2.0 in AT.
        DemoCase(
            key: "new-checkout", unit: "u-20", attributes: ["appVersion=5.2.0", "country=AT"], value: "true",
            reason: "TARGETING_MATCH", variant: "beta-first"),
        // u-13 is excluded from beta; bucket("new-checkout:u-13") = 7101 is outside 10 %.
        DemoCase(
            key: "new-checkout", unit: "u-13", attributes: ["appVersion=5.3.0", "country=DE"], value: "false",
            reason: "DEFAULT", variant: "default"),
        // bucket("new-checkout:u-8") = 227 < 1000.
        DemoCase(key: "new-checkout", unit: "u-8", value: "true", reason: "SPLIT", variant: "rollout"),
        // bucket("new-checkout:u-4") = 7192: out at 10 %, in at 100 % (2026-12-02), expired from 2027-01-10.
        DemoCase(key: "new-checkout", unit: "u-4", value: "false", reason: "DEFAULT", variant: "default"),
        DemoCase(
            key: "new-checkout", unit: "u-4", at: "2026-12-02T09:00:00Z", value: "true", reason: "SPLIT",
            variant: "rollout"),
        DemoCase(
            key: "new-checkout", unit: "u-4", at: "2027-01-10T00:00:00Z", value: "true", reason: "STATIC",
            variant: "expired"),
        // Expired on 2026-10-01: the expiredValue for everyone.
        DemoCase(key: "dark-mode", unit: "u-1", value: "true", reason: "STATIC", variant: "expired"),
        // No targeting at all: the default with STATIC.
        DemoCase(key: "payments-enabled", unit: "u-1", value: "true", reason: "STATIC", variant: "default"),
        // A unit override until 2026-12-31, then the default.
        DemoCase(
            key: "api-rate-limit", unit: "acct-load-test", value: "100000", reason: "TARGETING_MATCH",
            variant: "override"),
        DemoCase(
            key: "api-rate-limit", unit: "acct-load-test", at: "2027-01-01T00:00:00Z", value: "600",
            reason: "DEFAULT", variant: "default"),
        DemoCase(key: "api-rate-limit", unit: "qa-2", value: "6000", reason: "TARGETING_MATCH", variant: "qa"),
        // The split 34/33/33: buckets 2571 → control, 5362 → green, 9479 → orange.
        DemoCase(key: "checkout-button", unit: "u-4", value: "\"blue\"", reason: "SPLIT", variant: "control"),
        DemoCase(key: "checkout-button", unit: "u-9", value: "\"green\"", reason: "SPLIT", variant: "green"),
        DemoCase(key: "checkout-button", unit: "u-5", value: "\"orange\"", reason: "SPLIT", variant: "orange"),
        DemoCase(
            key: "checkout-button", unit: "u-4", attributes: ["email=kim@flagstaff.dev"], value: "\"orange\"",
            reason: "TARGETING_MATCH", variant: "staff-preview"),
        // beta-ios = in beta and on iOS.
        DemoCase(
            key: "ios-widgets", unit: "u-1", attributes: ["platform=ios"], value: "true", reason: "TARGETING_MATCH",
            variant: "ios-beta"),
        DemoCase(
            key: "ios-widgets", unit: "u-1", attributes: ["platform=android"], value: "false", reason: "DEFAULT",
            variant: "default"),
        DemoCase(
            key: "home-layout", unit: "u-1", attributes: ["screenWidth=1024"],
            value: #"{"columns":3,"sections":["recent","recommended","trending"]}"#, reason: "TARGETING_MATCH",
            variant: "large-screens"),
        DemoCase(
            key: "home-layout", unit: "u-1", attributes: ["screenWidth=800"],
            value: #"{"columns":2,"sections":["recent","recommended"]}"#, reason: "DEFAULT", variant: "default"),
    ]

    static func arguments(_ demo: DemoCase) -> [String] {
        ["eval", demo.key, "--file", "demo.json", "--unit", demo.unit, "--at", demo.at]
            + demo.attributes.flatMap { ["--attr", $0] }
    }

    @Test("--json prints one object with the value, reason, variant and version", arguments: cases)
    func json(_ demo: DemoCase) throws {
        let directory = try TemporaryDirectory()
        try directory.copyDemo()
        let run = try Flagctl.run(Self.arguments(demo) + ["--json"], in: directory)
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr == "")
        let objects = try Flagctl.jsonObjects(run)
        let object = try #require(objects.first)
        #expect(objects.count == 1)
        #expect(Set(object.keys) == ["key", "unit", "value", "reason", "variant", "version"])
        #expect(object["key"] as? String == demo.key)
        #expect(object["unit"] as? String == demo.unit)
        #expect(object["reason"] as? String == demo.reason)
        #expect(object["variant"] as? String == demo.variant)
        #expect(object["version"] as? Int == 1)
        let value = try #require(object["value"])
        let expected = try JSONSerialization.jsonObject(with: Data(demo.value.utf8), options: .fragmentsAllowed)
        #expect((value as? NSObject)?.isEqual(expected) == true, "value \(value), expected \(demo.value)")
    }

    @Test("people get an aligned table")
    func table() throws {
        let directory = try TemporaryDirectory()
        try directory.copyDemo()
        let run = try Flagctl.run(
            ["eval", "new-checkout", "--file", "demo.json", "--unit", "qa-1", "--at", Self.noon], in: directory)
        #expect(run.status == 0, "\(run)")
        #expect(
            run.stdoutLines == [
                "UNIT  VALUE  REASON           VARIANT",
                "qa-1  true   TARGETING_MATCH  override:qa",
            ])
    }

    @Test("--units-file: one result per unit, in file order; blank lines, comments and CRLF are fine")
    func unitsFile() throws {
        let directory = try TemporaryDirectory()
        try directory.copyDemo()
        try directory.write("units.txt", "# who to check\r\nu-1\r\n\r\n  qa-1  \n# u-99\nu-8\nu-4")
        let people = try Flagctl.run(
            ["eval", "new-checkout", "--file", "demo.json", "--units-file", "units.txt", "--at", Self.noon],
            in: directory)
        #expect(people.status == 0, "\(people)")
        #expect(
            people.stdoutLines == [
                "UNIT  VALUE  REASON           VARIANT",
                "u-1   true   TARGETING_MATCH  beta-first",
                "qa-1  true   TARGETING_MATCH  override:qa",
                "u-8   true   SPLIT            rollout",
                "u-4   false  DEFAULT          default",
            ])
        let json = try Flagctl.run(
            ["eval", "new-checkout", "--file", "demo.json", "--units-file", "units.txt", "--at", Self.noon, "--json"],
            in: directory)
        let objects = try Flagctl.jsonObjects(json)
        #expect(objects.compactMap { $0["unit"] as? String } == ["u-1", "qa-1", "u-8", "u-4"])
        #expect(objects.compactMap { $0["variant"] as? String } == ["beta-first", "override:qa", "rollout", "default"])
    }

    @Test("--units-file that is missing or holds no ids fails")
    func unitsFileProblems() throws {
        let directory = try TemporaryDirectory()
        try directory.copyDemo()
        try directory.write("empty.txt", "# nobody\n\n")
        let empty = try Flagctl.run(
            ["eval", "new-checkout", "--file", "demo.json", "--units-file", "empty.txt"], in: directory)
        #expect(empty.status == 1)
        #expect(empty.stderrLines == ["error: no unit ids in 'empty.txt': write one id per line"])
        let missing = try Flagctl.run(
            ["eval", "new-checkout", "--file", "demo.json", "--units-file", "nope.txt"], in: directory)
        #expect(missing.status == 1)
        #expect(missing.stderrLines == ["error: cannot read 'nope.txt': No such file or directory"])
    }

    @Test("--explain lists the steps under each unit, and as \"steps\" in JSON")
    func explain() throws {
        let directory = try TemporaryDirectory()
        try directory.copyDemo()
        let arguments = [
            "eval", "new-checkout", "--file", "demo.json", "--unit", "u-13", "--attr", "appVersion=5.3.0",
            "--attr", "country=DE", "--at", Self.noon, "--explain",
        ]
        let people = try Flagctl.run(arguments, in: directory)
        #expect(people.status == 0, "\(people)")
        #expect(
            people.stdoutLines == [
                "UNIT  VALUE  REASON   VARIANT",
                "u-13  false  DEFAULT  default",
                "    - not in cohort 'qa' (override)",
                "    - rule 'beta-first': no match",
                "    - rollout: bucket 7101 >= 1000 (outside)",
                "    - serving the flag's default",
            ])
        let json = try Flagctl.run(arguments + ["--json"], in: directory)
        let object = try #require(try Flagctl.jsonObjects(json).first)
        #expect(
            object["steps"] as? [String] == [
                "not in cohort 'qa' (override)", "rule 'beta-first': no match",
                "rollout: bucket 7101 >= 1000 (outside)",
                "serving the flag's default",
            ])
    }

    @Test("an unknown flag key is an error listing the known keys")
    func unknownKey() throws {
        let directory = try TemporaryDirectory()
        try directory.copyDemo()
        let run = try Flagctl.run(["eval", "new-chekout", "--file", "demo.json", "--unit", "u-1"], in: directory)
        #expect(run.status == 1)
        #expect(run.stdout == "")
        #expect(
            run.stderrLines == [
                "error: unknown flag 'new-chekout' in demo.json (known: api-rate-limit, checkout-button, dark-mode, "
                    + "home-layout, ios-widgets, new-checkout, payments-enabled)"
            ])
    }

    @Test("a set with problems still evaluates: the broken flag reports PARSE_ERROR, with a warning")
    func setWithProblems() throws {
        let directory = try TemporaryDirectory()
        try directory.write("broken.json", LintTests.brokenSet)
        let broken = try Flagctl.run(
            ["eval", "ghost-cohort", "--file", "broken.json", "--unit", "u-1", "--json"], in: directory)
        #expect(broken.status == 0, "\(broken)")
        #expect(
            broken.stdout == #"{"key":"ghost-cohort","unit":"u-1","value":false,"reason":"ERROR","#
                + #""errorCode":"PARSE_ERROR","version":3}"# + "\n")
        #expect(
            broken.stderrLines == [
                "warning: broken.json has 6 problems; the flags they touch evaluate with PARSE_ERROR "
                    + "(run 'flagctl lint broken.json')"
            ])
        let sound = try Flagctl.run(["eval", "good", "--file", "broken.json", "--unit", "u-1"], in: directory)
        #expect(sound.stdoutLines == ["UNIT  VALUE  REASON  VARIANT", "u-1   true   STATIC  default"])
        // A default of the wrong type is not shown as the flag's value.
        let wrong = try Flagctl.run(["eval", "wrong-default", "--file", "broken.json", "--unit", "u-1"], in: directory)
        #expect(
            wrong.stdoutLines == [
                "UNIT  VALUE  REASON  VARIANT  ERROR",
                "u-1   null   ERROR   -        PARSE_ERROR",
            ])
    }

    @Test("a set file that is not JSON fails with FILE:LINE:COLUMN")
    func malformedSet() throws {
        let directory = try TemporaryDirectory()
        try directory.write("bad.json", "{\n  \"schema\": 1,\n  \"flags\": {\"x\": tru}\n}")
        let run = try Flagctl.run(["eval", "x", "--file", "bad.json", "--unit", "u-1"], in: directory)
        #expect(run.status == 1)
        #expect(run.stdout == "")
        let line = try #require(run.stderrLines.first)
        #expect(line.hasPrefix("error: bad.json:3:"), "\(line)")
    }
}
