import FlagAPI
import FlagCore
import Foundation
import Testing

@testable import FlagCLI

/// `clients`, `usage`, `stale --unused-days` and `sets settings` from canned answers of the telemetry routes
/// (docs/telemetry.md): how each answer is read, what is refused, and how it reads for people.
@Suite("flagctl telemetry formatting")
struct TelemetryFormattingTests {
    static let now = Date(timeIntervalSince1970: 1_796_205_605)  // 2026-12-02T10:00:05Z

    static func json(_ text: String) throws -> JSONValue {
        try JSONReader.parse(Array(text.utf8))
    }

    /// A `clients` answer read as flagctl reads it: the contract's decoder, then the mapping.
    static func clients(_ text: String) throws -> ClientsReport {
        try ClientsReport(API.clients.answer(Array(text.utf8)), route: "GET /c")
    }

    /// A `propagation` answer read as flagctl reads it.
    static func propagation(_ text: String) throws -> Propagation {
        Propagation(try API.propagation.answer(Array(text.utf8)))
    }

    /// A `usage` answer read as flagctl reads it.
    static func usage() throws -> UsageReport {
        UsageReport(try API.usage.answer(Array(usageText.utf8)))
    }

    /// Every operator this FlagCore knows, but `leaving`, as a JSON array.
    static func operators(leaving: Set<String> = []) -> String {
        "[" + Operator.known.map(\.name).filter { !leaving.contains($0) }.map { "\"\($0)\"" }.joined(separator: ",")
            + "]"
    }

    static func clients() throws -> ClientsReport {
        let all = operators()
        let old = operators(leaving: ["semver_gte", "semver_lt"])
        return try clients(
            #"""
            {"set":"demo","instances":[
             {"id":"in_a","sdk":{"name":"FlagClient","version":"2.0.0"},"app":{"name":"Shop","version":"5.3.0"},
              "version":41,"appliedAt":"2026-12-02T10:00:00Z","lastSeen":"2026-12-02T10:00:03Z",
              "capabilities":{"schema":1,"operators":\#(all)}},
             {"id":"in_b","sdk":{"name":"FlagClient","version":"2.0.0"},"app":null,"version":41,
              "appliedAt":"2026-12-02T10:00:01Z","lastSeen":"2026-12-02T10:00:02Z",
              "capabilities":{"schema":1,"operators":\#(all)}},
             {"id":"in_c","sdk":{"name":"FlagClient","version":"1.2.0"},"app":null,"version":40,
              "appliedAt":"2026-12-01T10:00:00Z","lastSeen":"2026-12-02T09:59:00Z",
              "capabilities":{"schema":1,"operators":\#(old)},"future":"ignored"},
             {"id":"in_d","sdk":{"name":"FlagClient","version":"2.0.0"},"app":null,"version":null,"appliedAt":null,
              "lastSeen":"2026-12-02T10:00:04Z","capabilities":{"schema":1,"operators":\#(all)}}],
             "silent":2}
            """#)
    }

    @Test func aClientsAnswerIsReadIntoInstances() throws {
        let answer = try Self.clients()
        #expect(answer.set == "demo")
        #expect(answer.silent == 2)
        #expect(answer.instances.map(\.id) == ["in_a", "in_b", "in_c", "in_d"])
        let first = answer.instances[0]
        #expect(first.sdk == .init(name: "FlagClient", version: "2.0.0"))
        #expect(first.app == .init(name: "Shop", version: "5.3.0"))
        #expect(first.version == 41)
        #expect(first.lastSeen == (try ISO8601.date(from: "2026-12-02T10:00:03Z")))
        #expect(first.capabilities == .current)
        #expect(answer.instances[2].capabilities?.operators.contains("semver_gte") == false)
        #expect(answer.instances[3].version == nil)
    }

    @Test func clientsReadByVersionAndBySDKWithTheConnectionsThatDoNotReport() throws {
        let answer = try Self.clients()
        #expect(
            ClientsText.lines(answer) == [
                "4 instances of demo reported in the last 10 minutes",
                "",
                "VERSION   INSTANCES  SHARE",
                "v41       2          50%",
                "v40       1          25%",
                "none yet  1          25%",
                "",
                "SDK               INSTANCES  SCHEMA  OPERATORS",
                "FlagClient 2.0.0  3          1       all \(Operator.known.count)",
                "FlagClient 1.2.0  1          1       lacks semver_lt, semver_gte",
                "2 connections do not report telemetry (SDKs from before it, or telemetry turned off): not counted "
                    + "above",
            ])
    }

    @Test func noClientsIsSaidSo() throws {
        let answer = try Self.clients(#"{"set":"demo","instances":[],"silent":1}"#)
        #expect(
            ClientsText.lines(answer) == [
                "no instance of demo reported in the last 10 minutes",
                "1 connection does not report telemetry (SDKs from before it, or telemetry turned off): not counted "
                    + "above",
            ])
    }

    @Test(
        "an answer that is not the contract's shape is refused by the contract's decoder",
        arguments: [
            #"{"set":"demo","instances":[{"id":"in_a","sdk":"FlagClient 2.0.0","capabilities":{"schema":1,"operators":[]}}],"silent":0}"#,
            #"{"set":"demo","instances":{},"silent":0}"#,
            #"{"set":"demo","instances":[]}"#,
        ])
    func badClientsAnswers(_ body: String) throws {
        #expect(throws: WireFormatError.self) { try API.clients.answer(Array(body.utf8)) }
    }

    @Test func anInstanceWithoutItsCapabilitiesIsRefusedNamingIt() throws {
        let body =
            #"{"set":"demo","instances":[{"id":"in_a","sdk":{"name":"F","version":"1"},"lastSeen":"2026-12-02T10:00:03Z"}],"silent":0}"#
        do {
            _ = try Self.clients(body)
            Issue.record("an instance without capabilities was accepted")
        } catch let error as CLIError {
            #expect(
                error.message
                    == #"the server's answer to GET /c lists instance in_a without its "capabilities"; "#
                    + "is it a flagserver with client telemetry?")
        }
    }

    @Test func thePropagationAnswerOfTheDocsIsRead() throws {
        let propagation = try Self.propagation(
            #"""
            {"set":"demo","version":41,"active":850,"applied":842,"p50Ms":1840,"p99Ms":2950,
             "written":{"streams":850,"ms":12.4},"silent":3,
             "lagging":[{"id":"in_x","sdk":{"name":"FlagClient","version":"1.9.0"},"app":null,"version":40,
               "lastSeen":"2026-12-02T10:00:01Z"}]}
            """#)
        #expect(
            propagation
                == Propagation(
                    version: 41, active: 850, applied: 842, p50Milliseconds: 1840, p99Milliseconds: 2950,
                    written: .init(streams: 850, milliseconds: 12.4), silent: 3,
                    lagging: [
                        ReportingInstance(
                            id: "in_x", sdk: .init(name: "FlagClient", version: "1.9.0"), app: nil, version: 40,
                            appliedAt: nil, lastSeen: try ISO8601.date(from: "2026-12-02T10:00:01Z"), capabilities: nil)
                    ]))
        let nobody = try Self.propagation(
            #"{"set":"demo","version":2,"active":0,"applied":0,"p50Ms":null,"p99Ms":null,"written":null,"silent":0,"lagging":[]}"#
        )
        #expect(nobody.written == nil && nobody.p50Milliseconds == nil && nobody.active == 0)
        #expect(throws: WireFormatError.self) { try API.propagation.answer(Array(#"{"version":2,"applied":0}"#.utf8)) }
    }

    // MARK: - usage

    static let usageText =
        #"""
        {"set":"demo","days":30,"flags":[
         {"key":"new-checkout","lastEvaluated":"2026-12-02T10:00:00Z",
          "days":[{"day":"2026-12-01","evaluations":234,"variants":{"on":234}},
                  {"day":"2026-12-02","evaluations":1234,"variants":{"on":1000,"off":234}}]},
         {"key":"old-banner","lastEvaluated":null,"days":[]},
         {"key":"columns","lastEvaluated":"2026-11-20T08:00:00Z",
          "days":[{"day":"2026-11-20","evaluations":60,"variants":{"":60}}]}],
         "sdks":[{"name":"FlagClient","version":"1.9.0","instances":10},
                 {"name":"FlagClient","version":"2.0.0","instances":840}]}
        """#

    @Test func usageOfEveryFlagIsATableWithTheClientsBySDKVersion() throws {
        let usage = try Self.usage()
        #expect(
            UsageText.summary(usage, now: Self.now) == [
                "demo, the last 30 days (UTC):",
                "KEY           EVALUATIONS  PER DAY  LAST EVALUATED                      VARIANTS",
                "columns       60           2        2026-11-20 08:00 UTC (12 days ago)  (none) 60",
                "new-checkout  1468         48       2026-12-02 10:00 UTC (now)          on 1234, off 234",
                "old-banner    0            0        never in these 30 days              -",
                "",
                "SDK               INSTANCES",
                "FlagClient 2.0.0  840",
                "FlagClient 1.9.0  10",
            ])
    }

    @Test func usageOfOneFlagGoesDayByDayNewestFirst() throws {
        let usage = try Self.usage()
        let one = UsageReport(set: usage.set, days: usage.days, flags: [usage.flags[0]], sdks: [])
        #expect(
            UsageText.days(one, now: Self.now) == [
                "new-checkout in demo, the last 30 days (UTC): 1468 evaluations, last evaluated 2026-12-02 10:00 UTC "
                    + "(now)",
                "DAY         EVALUATIONS  VARIANTS",
                "2026-12-02  1234         on 1000, off 234",
                "2026-12-01  234          on 234",
                "",
                "no active client instance",
            ])
    }

    @Test func aFlagNobodyEvaluatedSaysSo() throws {
        let usage = try Self.usage()
        let one = UsageReport(set: usage.set, days: 7, flags: [usage.flags[1]], sdks: usage.sdks)
        #expect(
            UsageText.days(one, now: Self.now) == [
                "old-banner in demo, the last 7 days (UTC): not evaluated", "", "SDK               INSTANCES",
                "FlagClient 2.0.0  840", "FlagClient 1.9.0  10",
            ])
    }

    @Test(
        "the operators an SDK declared read as the shorter list",
        arguments: [
            (Operator.known.map(\.name), "all \(Operator.known.count)"),
            (Operator.known.map(\.name).filter { $0 != "matches" }, "lacks matches"),
            (["eq", "in", "not-an-operator"], "only eq, in (2 of \(Operator.known.count))"),
            ([], "none of \(Operator.known.count)"),
        ] as [([String], String)])
    func operatorColumn(_ operators: [String], _ text: String) {
        #expect(ClientsText.operators(ClientCapabilities(schema: 1, operators: Set(operators))) == text)
    }

    @Test(
        "a wrong --days exits 2 naming the range",
        arguments: [
            (["usage", "--days", "0"], "error: --days needs a number of days from 1 to 90 (the counts kept), not '0'"),
            (
                ["usage", "--days", "91"],
                "error: --days needs a number of days from 1 to 90 (the counts kept), not '91'"
            ),
            (
                ["usage", "--days", "7d"],
                "error: --days needs a number of days from 1 to 90 (the counts kept), not '7d'"
            ),
            (
                ["stale", "--unused-days", "abc"],
                "error: --unused-days needs a number of days from 1 to 90 (the counts kept), not 'abc'"
            ),
            (["usage", "a", "b"], "error: unexpected argument 'b'"),
            (["clients", "x"], "error: unexpected argument 'x'"),
        ])
    func wrongDays(_ line: [String], _ message: String) {
        let run = runInProcess(line)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderrLines.first == message)
    }

    // MARK: - stale --unused-days

    static func flags() throws -> [String: JSONValue] {
        try #require(
            try json(
                #"""
                {"recent-expired":{"expiresAt":"2026-12-01T00:00:00Z","owner":"pay"},
                 "never":{},
                 "long-ago":{"expiresAt":"2027-06-01T00:00:00Z"},
                 "archived":{"archived":true},
                 "busy":{},
                 "overdue":{"expiresAt":"2026-10-01T00:00:00Z"},
                 "unlisted":{}}
                """#
            ).object)
    }

    static func lastEvaluated() throws -> [String: Date?] {
        [
            "recent-expired": try ISO8601.date(from: "2026-12-02T09:00:00Z"), "never": nil,
            "long-ago": try ISO8601.date(from: "2026-10-20T00:00:00Z"), "archived": nil,
            "busy": try ISO8601.date(from: "2026-12-01T00:00:00Z"), "overdue": nil,
        ]
    }

    @Test func unusedFlagsAreStaleOnlyWithUnusedDays() throws {
        let without = StaleCommand.entries(
            try Self.flags(), lastEvaluated: try Self.lastEvaluated(), unusedDays: nil, now: Self.now)
        #expect(without.map(\.key) == ["overdue", "recent-expired"])
        #expect(without.map(\.status) == ["overdue", "expired"])

        let with = StaleCommand.entries(
            try Self.flags(), lastEvaluated: try Self.lastEvaluated(), unusedDays: 30, now: Self.now)
        #expect(with.map(\.key) == ["long-ago", "never", "overdue", "recent-expired", "unlisted"])
        #expect(with.map(\.status) == ["unused", "unused", "overdue, unused", "expired", "unused"])
        // Evaluated 43 days ago: unused for 30 days, but not for 60.
        let sixty = StaleCommand.entries(
            try Self.flags(), lastEvaluated: try Self.lastEvaluated(), unusedDays: 60, now: Self.now)
        #expect(!sixty.map(\.key).contains("long-ago"))
    }

    /// A flag that another requires is evaluated through it: neither unused by clients nor unreferenced by code.
    @Test func aRequiredFlagIsInUse() throws {
        var flags = try Self.flags()
        let wireForm =
            #"{"rules":[{"name":"prerequisites","conditions":"#
            + #"[{"attribute":"never","op":"prerequisite","values":["true"]}],"value":false}]}"#
        flags["busy"] = try JSONReader.parse(Array(wireForm.utf8))
        let authored = #"{"prerequisites":[{"flag":"long-ago","values":[true]}]}"#
        flags["unlisted"] = try JSONReader.parse(Array(authored.utf8))
        let entries = StaleCommand.entries(
            flags, lastEvaluated: try Self.lastEvaluated(), unusedDays: 30, references: [:], now: Self.now)
        #expect(!entries.map(\.key).contains("never"))
        #expect(!entries.map(\.key).contains("long-ago"))
        // Still stale for the reasons that remain: the dependents themselves are referenced nowhere.
        #expect(entries.first { $0.key == "busy" }?.status == "unreferenced")
    }

    // MARK: - errors, settings, the console

    @Test func aRefusalOfTheCompatibilityGatePrintsTheServersMessageAndExits1() throws {
        let body =
            #"{"error":{"code":"incompatible_clients","message":"operator \"semver_gte\" in flag \"nc\" cannot be evaluated by 1 of 1 active instances (100.00 %): FlagClient 1.2.0 (1). Pass allowIncompatible=true (flagctl --force) to write it anyway.","path":null,"constructs":["operator \"semver_gte\" in flag \"nc\""],"lacking":1,"active":1}}"#
        let error = AdminClient.error(status: 422, AdminClient.errorAnswer(Array(body.utf8)), ifMatch: nil)
        #expect(error.exitCode == .failure)
        #expect(
            error.diagnostic == [
                #"error: operator "semver_gte" in flag "nc" cannot be evaluated by 1 of 1 active instances (100.00 %): "#
                    + "FlagClient 1.2.0 (1). Pass allowIncompatible=true (flagctl --force) to write it anyway."
            ])
    }

    @Test func otherRefusalsKeepTheirProblems() throws {
        let body =
            #"{"error":{"code":"invalid_flag_set","message":"m","problems":[{"path":"flags.x","message":"bad"}]}}"#
        let error = AdminClient.error(status: 422, AdminClient.errorAnswer(Array(body.utf8)), ifMatch: nil)
        #expect(error.message == "rejected, nothing changed: flags.x: bad")
    }

    /// A body that is not the error shape (a proxy's page) leaves the status to speak.
    @Test func anErrorBodyOfAnotherShapeIsNamedByItsStatus() {
        #expect(AdminClient.errorAnswer(Array(#"{"error":"incompatible_clients","message":"m"}"#.utf8)) == nil)
        #expect(AdminClient.error(status: 502, nil, ifMatch: nil).message == "HTTP 502")
    }

    @Test func forceAddsAllowIncompatibleToEveryWrite() throws {
        let forced = try Mutation(parsedArguments(KillCommand.self, ["kill", "k", "--force", "--reason", "r"]))
        #expect(forced.changeRequest == ChangeRequest(reason: "r", allowIncompatible: true))
        let removal = RemoveOverrideRequest(unit: "u", reason: forced.reason, allowIncompatible: forced.forced)
        #expect(
            try API.removeOverride.call(PathParameters(set: "s", key: "k"), removal).target
                == "/v1/admin/sets/s/flags/k/overrides?allowIncompatible=true&reason=r&unit=u")
        let plain = try Mutation(parsedArguments(KillCommand.self, ["kill", "k"]))
        #expect(plain.changeRequest == ChangeRequest())
    }

    @Test(
        "sets settings takes a known mode",
        arguments: [
            (
                ["sets", "settings", "t", "--compatibility", "strict"],
                "error: unknown --compatibility 'strict'; use enforce, warn or off"
            ),
            (["sets", "settings"], "error: missing SET"),
            (["sets", "settings", "t", "--compatibility"], "error: --compatibility needs a value (MODE)"),
            (
                ["sets", "settings", "t", "--reason", "why"],
                "error: --reason goes with a change: --compatibility enforce|warn|off or --reviews required|off"
            ),
        ])
    func settingsUsage(_ line: [String], _ message: String) {
        let run = runInProcess(line)
        #expect(run.status == 2, "\(run)")
        #expect(
            run.stderrLines == [
                message,
                "usage: flagctl sets settings SET [--compatibility enforce|warn|off] [--reviews required|off] "
                    + "[--reason S]",
                "See 'flagctl sets settings --help'.",
            ])
    }

    @Test func aStatusLineIsRedrawnOnATerminalAndLeftOutElsewhere() {
        for terminal in [true, false] {
            var out: [UInt8] = []
            let console = Console(writeOutput: { out += $0 }, writeError: { _ in }, isTerminal: terminal)
            console.print("killed nc (version 3)")
            console.status("applied by 1 of 2 instances on v3, 0.0 s")
            console.status("applied by 1 of 2 instances on v3, 0.2 s")
            console.print("applied by 2 of 2 instances on v3, 0.5 s")
            console.flush()
            let text = String(decoding: out, as: UTF8.self)
            if terminal {
                #expect(
                    text
                        == "killed nc (version 3)\napplied by 1 of 2 instances on v3, 0.0 s\r\u{1B}[2K"
                        + "applied by 1 of 2 instances on v3, 0.2 s\r\u{1B}[2Kapplied by 2 of 2 instances on v3, 0.5 s\n"
                )
            } else {
                #expect(text == "killed nc (version 3)\napplied by 2 of 2 instances on v3, 0.5 s\n")
            }
        }
    }
}
