import FlagCore
import FlagTestSupport
import Foundation
import Testing

/// Client telemetry against a live flagserver: `--wait` with and without instances, a timeout naming the lagging one,
/// the compatibility gate and `--force`, `lint --against`, and what `clients`, `usage` and `stale --unused-days` show.
///
/// The instances are played by the test: each holds a stream open (which is how the server issues its id, in the
/// `Flagstaff-Instance` header) and posts reports as a FlagClient would.
@Suite("flagctl and client telemetry, live", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineTelemetryTests {
    /// One client instance: a held stream and the id the server issued to it.
    final class Instance {
        let stream: TestClient
        let id: String
        let sdk: TelemetryReport.Software
        let app: TelemetryReport.Software?
        let capabilities: ClientCapabilities
        let enums: [String: TelemetryReport.KnownValues]
        private let server: LiveServer
        private let key: String

        init(
            _ server: LiveServer, key: String, sdk: String = "2.0.0", app: String? = "5.3.0",
            lacking: Set<String> = [], enums: [String: TelemetryReport.KnownValues] = [:]
        ) throws {
            self.server = server
            self.key = key
            self.enums = enums
            self.sdk = TelemetryReport.Software(name: "FlagClient", version: sdk)
            self.app = app.map { TelemetryReport.Software(name: "Shop", version: $0) }
            capabilities = ClientCapabilities(
                schema: FlagSet.currentSchema, operators: ClientCapabilities.current.operators.subtracting(lacking))
            stream = try TestClient(port: server.port)
            stream.send("GET /v1/sets/t/stream HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(key)\r\n\r\n")
            let head = try stream.readHead()
            #expect(head.status == 200, "\(head.status) \(head.headers)")
            id = try #require(head.header("Flagstaff-Instance"), "no instance id on the stream's answer")
        }

        /// Reports `version` as applied, with `counts`; the server answers 204.
        func report(version: Int, counts: TelemetryReport.Counts = [:]) throws {
            let report = TelemetryReport(
                instance: id, sdk: sdk, app: app, version: version, appliedAt: Date(), capabilities: capabilities,
                enums: enums, counts: counts)
            let answer = try LiveClient(port: server.port).send(
                "POST", "/v1/sets/t/telemetry", token: key, headers: [("Content-Type", "application/json")],
                body: String(decoding: report.encoded(), as: UTF8.self))
            #expect(answer.status == 204, "report: \(answer.status) \(answer.text)")
        }
    }

    /// A server with set `t` holding a bool flag `k` at version 2, and an SDK key of `t`.
    private func seeded() throws -> (LiveServer, key: String) {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "k", "--type", "bool", "--default", "false", "--kind", "ops"]).status == 0)
        let created = try server.ctl(["keys", "create", "app"])
        #expect(created.status == 0, "\(created)")
        return (server, created.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Waits until the set is at `version`: the write of a command started in the background has happened. Asks
    /// the server for the set's ETag with the SDK key `key`, not through flagctl: a process per look was slow enough
    /// under Thread Sanitizer to use up the background command's `--wait-timeout` before the test could answer it.
    private func awaitVersion(_ version: Int, of server: LiveServer, key: String) throws {
        let reached = waitUntil(every: .milliseconds(20)) {
            let answer = try? LiveClient(port: server.port).send("GET", "/v1/sets/t", token: key)
            return answer?.header("ETag") == "\"\(version)\""
        }
        try #require(reached, "the set never reached version \(version)")
    }

    @Test func withNoActiveInstanceWaitSaysSoAndExitsZero() throws {
        let (server, _) = try seeded()
        let run = try server.ctl(["kill", "k", "--wait", "99%"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines.first == "killed k (version 3)")
        #expect(
            run.stdoutLines.dropFirst().first?.hasSuffix(
                "no instance of t reported in the last 5 minutes: nobody to wait for (v3)") == true, "\(run)")
        #expect(run.stderr.isEmpty)

        let again = try server.ctl(["kill", "k", "--wait", "99%"])
        #expect(again.status == 0)
        #expect(
            again.stdoutLines == [
                "killed k (unchanged, still version 3)",
                "nothing to wait for: the write made no new version (still version 3)",
            ])

        let json = try server.json(["restore", "k", "--wait", "100"])
        let wait = try #require(json["wait"] as? [String: Any])
        #expect(wait["result"] as? String == "noActiveInstances")
        #expect(wait["percent"] as? Int == 100)
        #expect((wait["propagation"] as? [String: Any])?["active"] as? Int == 0)
        #expect(json["version"] as? Int == 4)
    }

    @Test func waitFor100PercentReturnsOnceEveryInstanceReportsTheKill() throws {
        let (server, key) = try seeded()
        let instances = [try Instance(server, key: key), try Instance(server, key: key, sdk: "1.9.0")]
        for instance in instances { try instance.report(version: 2) }
        let kill = try server.start(["kill", "k", "--wait", "100%", "--wait-timeout", "20s"])
        try awaitVersion(3, of: server, key: key)
        for instance in instances { try instance.report(version: 3) }
        let run = try kill.finish()
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines.first == "killed k (version 3)")
        #expect(
            run.stdoutLines.contains {
                $0.hasPrefix("written to 2 streams in ") && $0.contains("; applied by 2 of 2 instances on v3, ")
            },
            "\(run)")
        #expect(
            run.stdoutLines.contains {
                $0.hasPrefix("confirmed: 100% of the active instances report v3 or later (--wait 100%)")
            },
            "\(run)")
        // Not a terminal: no status line was drawn, so no carriage return.
        #expect(!run.stdout.contains("\r"))
    }

    @Test func aTimeoutExitsFourNamingTheLaggingInstance() throws {
        let (server, key) = try seeded()
        let prompt = try Instance(server, key: key)
        let lagging = try Instance(server, key: key, sdk: "1.9.0", app: "5.2.1")
        try prompt.report(version: 2)
        try lagging.report(version: 2)
        let kill = try server.start(["kill", "k", "--wait", "100%", "--wait-timeout", "4s"])
        try awaitVersion(3, of: server, key: key)
        try prompt.report(version: 3)
        let run = try kill.finish()
        #expect(run.status == 4, "\(run)")
        #expect(run.stdoutLines.first == "killed k (version 3)")
        #expect(run.stdoutLines.contains { $0.contains("applied by 1 of 2 instances on v3") }, "\(run)")
        let row = try #require(run.stdoutLines.first { $0.hasPrefix(lagging.id) }, "\(run)")
        #expect(row.contains("FlagClient 1.9.0") && row.contains("Shop 5.2.1") && row.contains("v2"), "\(row)")
        #expect(!run.stdoutLines.contains { $0.hasPrefix(prompt.id) })
        #expect(
            run.stderrLines == [
                "error: not confirmed within 4s (--wait-timeout): 1 of 2 active instances (50%) report v3, below "
                    + "the 100% asked; the write itself is done (version 3)"
            ])
        #expect(try server.flag("k")["killed"] as? Bool == true)
    }

    @Test func theGateRefusesWhatAnInstanceCannotEvaluateAndForceWritesIt() throws {
        let (server, key) = try seeded()
        let old = try Instance(server, key: key, sdk: "1.2.0", lacking: ["semver_gte", "semver_lt"])
        try old.report(version: 2)
        let rule = ["rule", "add", "k", "--where", "appVersion semver_gte 5.0.0", "--value", "true"]

        // lint --against sees it before the write.
        let document = #"""
            {"schema":1,"set":"t","flags":{"k":{"type":"bool","kind":"ops","default":false,
             "rules":[{"name":"new","conditions":[{"attribute":"appVersion","op":"semver_gte","values":["5.0.0"]}],
             "value":true}]}}}
            """#
        let file = try server.workspace.write("next.json", document)
        let lint = try server.ctl(["lint", file, "--against", server.url], set: nil)
        #expect(lint.status == 1, "\(lint)")
        #expect(
            lint.stdoutLines.first
                == #"flags.k: operator "semver_gte" cannot be evaluated by 1 of 1 active instance of t (100%): "#
                + "FlagClient 1.2.0 (1); they would serve the flag's compiled-in default")
        #expect(lint.stdoutLines.last?.contains("the compatibility gate would refuse this file") == true)

        let refused = try server.ctl(rule)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderrLines.count == 1)
        #expect(
            refused.stderrLines.first?.hasPrefix(#"error: operator "semver_gte" in flag "k" cannot be evaluated"#)
                == true, "\(refused)")
        #expect(refused.stderr.contains("FlagClient 1.2.0 (1)") && refused.stderr.contains("--force"), "\(refused)")
        #expect(try server.version() == 2)

        let forced = try server.ctl(rule + ["--force"])
        #expect(forced.status == 0, "\(forced)")
        #expect(forced.stdout == "added rule rule-1 to k: appVersion semver_gte 5.0.0 → true (version 3)\n")
        // The server still says what it let through, as a warning on stderr.
        #expect(
            forced.stderrLines.count == 1
                && forced.stderrLines[0].hasPrefix(#"warning: operator "semver_gte" in flag "k" cannot be evaluated"#),
            "\(forced)")
        let history = try server.json(["history", "k", "--limit", "1"])["versions"] as? [[String: Any]] ?? []
        #expect((history.first?["reason"] as? String)?.contains("allowIncompatible") == true, "\(history)")

        // What the server already serves is a note now, not a refusal.
        let relint = try server.ctl(["lint", file, "--against", server.url], set: nil)
        #expect(relint.status == 0, "\(relint)")
        #expect(relint.stdoutLines.first?.hasPrefix("note: flags.k: operator \"semver_gte\"") == true, "\(relint)")

        // With the set's compatibility at warn, the write is made and the warning goes to stderr.
        let settings = try server.ctl(["sets", "settings", "t", "--compatibility", "warn", "--reason", "migration"])
        #expect(settings.status == 0, "\(settings)")
        #expect(settings.stdout.hasPrefix("set t: compatibility warn: "))
        #expect(try server.ctl(["sets", "settings", "t"]).stdout.hasPrefix("t: compatibility warn: "))
        let warned = try server.ctl(["rule", "add", "k", "--where", "appVersion semver_lt 2.0.0", "--value", "false"])
        #expect(warned.status == 0, "\(warned)")
        #expect(warned.stdout.hasSuffix("(version 4)\n"))
        #expect(warned.stderrLines.count == 1)
        #expect(warned.stderrLines.first?.hasPrefix(#"warning: operator "semver_lt" in flag "k""#) == true, "\(warned)")
    }

    /// The gate for values, through flagctl: `lint --against` reads the values each instance reported from the
    /// clients route and judges offline as the server judges the write; the write is refused naming the app, and
    /// `--force` makes it.
    @Test func theGateRefusesAValueAnEnumReaderLacksAndLintSeesItFirst() throws {
        let (server, key) = try seeded()
        let created = try server.ctl(["create", "theme", "--type", "string", "--default", "blue", "--kind", "ops"])
        #expect(created.status == 0, "\(created)")
        let old = try Instance(
            server, key: key, app: "5.2.0", enums: ["theme": .init(values: ["blue", "green"], defaultValue: "blue")])
        try old.report(version: 3)

        let document = #"""
            {"schema":1,"set":"t","flags":{"theme":{"type":"string","kind":"ops","default":"blue",
             "rules":[{"name":"de","conditions":[{"attribute":"country","op":"eq","values":["DE"]}],"value":"orange"}]}}}
            """#
        let file = try server.workspace.write("orange.json", document)
        let lint = try server.ctl(["lint", file, "--against", server.url], set: nil)
        #expect(lint.status == 1, "\(lint)")
        #expect(
            lint.stdoutLines.first
                == #"flags.theme: value "orange" is not known to 1 of 1 active instance of t (100%): "#
                + #"Shop 5.2.0 with FlagClient 2.0.0 (1); they would serve their compiled-in default "blue""#,
            "\(lint)")

        let rule = ["rule", "add", "theme", "--where", "country eq DE", "--value", "orange"]
        let refused = try server.ctl(rule)
        #expect(refused.status == 1, "\(refused)")
        #expect(
            refused.stderrLines.first?.hasPrefix(#"error: value "orange" in flag "theme" is not known to 1 of 1"#)
                == true, "\(refused)")
        #expect(refused.stderr.contains("Shop 5.2.0 with FlagClient 2.0.0 (1)"), "\(refused)")
        #expect(try server.version() == 3)
        let forced = try server.ctl(rule + ["--force"])
        #expect(forced.status == 0, "\(forced)")
        #expect(try server.version() == 4)
    }

    @Test func clientsUsageAndUnusedFlagsFromWhatInstancesReport() throws {
        let (server, key) = try seeded()
        #expect(
            try server.ctl(["create", "idle", "--type", "bool", "--default", "false", "--kind", "ops"]).status == 0)
        let first = try Instance(server, key: key)
        let second = try Instance(server, key: key, sdk: "1.2.0", app: nil, lacking: ["semver_gte"])
        try first.report(version: 3, counts: ["k": ["": ["STATIC": 5], "kill": ["DISABLED": 2]]])
        try second.report(version: 2, counts: ["k": ["": ["STATIC": 3]]])

        let clients = try server.json(["clients"])
        #expect(clients["set"] as? String == "t")
        let listed = try #require(clients["instances"] as? [[String: Any]])
        #expect(Set(listed.compactMap { $0["id"] as? String }) == [first.id, second.id])
        for instance in listed {
            #expect(
                Set(instance.keys).isSuperset(of: ["id", "sdk", "version", "appliedAt", "lastSeen", "capabilities"]))
            #expect((instance["sdk"] as? [String: Any])?["name"] as? String == "FlagClient")
        }
        let table = try server.ctl(["clients"])
        #expect(table.status == 0)
        #expect(table.stdoutLines.first == "2 instances of t reported in the last 10 minutes", "\(table)")
        #expect(table.stdoutLines.contains { $0.hasPrefix("FlagClient 1.2.0") && $0.hasSuffix("lacks semver_gte") })

        let usage = try server.json(["usage", "k", "--days", "7"])
        let flags = try #require(usage["flags"] as? [[String: Any]])
        #expect(flags.count == 1)
        let days = try #require(flags.first?["days"] as? [[String: Any]])
        #expect(days.count == 1)
        #expect(days.first?["evaluations"] as? Int == 10)
        #expect(days.first?["variants"] as? [String: Int] == ["": 8, "kill": 2])
        #expect(flags.first?["lastEvaluated"] is String)
        let perDay = try server.ctl(["usage", "k"])
        #expect(
            perDay.stdoutLines.first?.hasPrefix("k in t, the last 30 days (UTC): 10 evaluations, last evaluated ")
                == true, "\(perDay)")
        #expect(perDay.stdoutLines.contains { $0.contains(" 10 ") && $0.hasSuffix(" (none) 8, kill 2") }, "\(perDay)")
        #expect(
            try server.ctl(["usage", "nope"]).stderrLines == [#"error: no flag "nope" in set "t" (see 'flagctl list')"#]
        )

        // Neither flag is expired: today's gate passes; with --unused-days, the flag nobody evaluated fails it.
        #expect(try server.ctl(["stale", "--fail"]).status == 0)
        let unused = try server.ctl(["stale", "--unused-days", "7", "--fail"])
        #expect(unused.status == 1, "\(unused)")
        #expect(unused.stdoutLines.first == "KEY   STATUS  EXPIRED  OWNER  SERVES  LAST EVALUATED")
        #expect(unused.stdoutLines.count == 3, "\(unused)")
        #expect(unused.stdoutLines.dropFirst().first == "idle  unused  -        -      -       never")
    }
}
