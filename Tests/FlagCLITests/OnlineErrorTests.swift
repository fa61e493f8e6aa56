import FlagTestSupport
import Foundation
import Testing

/// Every failure is one clear line (plus the usage for usage errors), the right exit code, and no new version.
@Suite("flagctl online failures", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineErrorTests {
    /// A server with set `t` holding an int flag `cols` at version 2.
    private func seeded() throws -> LiveServer {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "cols", "--type", "int", "--default", "2", "--kind", "ops"]).status == 0)
        return server
    }

    @Test func failuresSayWhatToFixAndChangeNothing() throws {
        let server = try seeded()
        let cases: [(arguments: [String], token: String?, status: Int32, stderr: String)] = [
            (
                ["kill", "cols"], "fsa_wrong", 1,
                "error: the server refused the token (401): check --token / FLAGCTL_TOKEN"
            ),
            (["kill", "nope"], nil, 1, #"error: no flag "nope" in set "t""#),
            (
                ["set", "cols", "--default", "abc"], nil, 1,
                "error: --default for cols: 'abc' is not an int; use a whole number such as 42"
            ),
            (
                ["override", "cols", "true", "--unit", "u-1"], nil, 1,
                "error: VALUE for cols: 'true' is not an int; use a whole number such as 42"
            ),
            (
                ["override", "cols", "3", "--unit", "u-1", "--for", "2x"], nil, 2,
                "error: --for '2x' is not a duration: unknown unit 'x' at offset 1"
            ),
            (
                ["expire", "cols", "--at", "2026-13-01", "--keep", "3"], nil, 2,
                "error: --at '2026-13-01' is not a date: month 13 is out of range 01–12; use 2026-12-01 or "
                    + "2026-12-01T09:00:00Z"
            ),
            (
                ["kill", "cols", "--if-match", "1"], nil, 3,
                "error: the set changed meanwhile: it is at version 2 now, not 1 (--if-match); nothing was changed: "
                    + "review with 'flagctl history' and retry"
            ),
        ]
        for test in cases {
            let run = try server.ctl(test.arguments, token: test.token)
            #expect(run.status == test.status, "\(test.arguments): \(run)")
            #expect(run.stderrLines.first?.hasPrefix(test.stderr) == true, "\(test.arguments): \(run)")
            #expect(run.stderrLines.count == (test.status == 2 ? 3 : 1), "\(run)")
            #expect(run.stdout.isEmpty)
        }
        #expect(try server.version() == 2)
        #expect(try server.ctl(["kill", "cols", "--if-match", "2"]).stdout == "killed cols (version 3)\n")
        #expect(try server.ctl(["kill", "cols"]).stdout == "killed cols (unchanged, still version 3)\n")
    }

    @Test func usageErrorsExitTwoWithTheCommandsUsage() throws {
        let server = try seeded()
        let run = try server.ctl(["rollout", "cols", "--value", "3"])
        #expect(run.status == 2)
        #expect(
            run.stderrLines == [
                "error: give exactly one of --percent P, --phased apple, --steps S",
                "usage: flagctl rollout KEY [pause|resume|show] --value V (--percent P | --phased apple "
                    + "[--start DATE] | --steps S)",
                "See 'flagctl rollout --help'.",
            ])
        let noSet = try server.ctl(["list"], set: nil)
        #expect(noSet.status == 2)
        #expect(noSet.stderrLines.first == "error: no flag set: pass --set NAME or set FLAGCTL_SET")
        #expect(try server.version() == 2)
    }

    @Test func anUnreachableServerIsOneLine() throws {
        let directory = try TemporaryDirectory()
        let run = try Flagctl.run(
            ["--server", "http://127.0.0.1:1", "--token", "fsa_x", "--set", "t", "list"], in: directory)
        #expect(run.status == 1)
        #expect(
            run.stderrLines == [
                "error: cannot reach http://127.0.0.1:1: connection refused; is flagserver running? "
                    + "(--server / FLAGCTL_SERVER)"
            ])
    }

    @Test func withoutATokenItSaysHowToSetOneAndDoesNotReadTheFile() throws {
        let server = try LiveServer()
        let run = try Flagctl.run(["sets", "list"], in: server.directory, environment: ["FLAGCTL_SERVER": server.url])
        #expect(run.status == 1)
        #expect(
            run.stderrLines == [
                "error: no admin token; the server wrote one to data/admin-token: "
                    + "export FLAGCTL_TOKEN=$(cat data/admin-token)"
            ])
    }

    @Test func anSDKKeyReadsItsSetAndNoOther() async throws {
        let server = try seeded()
        #expect(try server.ctl(["sets", "create", "other"]).status == 0)
        let created = try server.ctl(["keys", "create", "app"])
        #expect(created.status == 0)
        let token = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("fss_"))
        #expect(created.stderrLines == ["created SDK key app for t; it is shown only this once, store it now"])
        #expect(try await status(of: "/v1/sets/t", server: server, token: token) == 200)
        #expect(try await status(of: "/v1/sets/other", server: server, token: token) == 403)

        let keys = try server.ctl(["keys", "list"])
        #expect(keys.stdoutLines.count == 2 && keys.stdoutLines[1].hasPrefix("app   "))
        #expect(try server.ctl(["keys", "revoke", "app"]).stdout == "revoked SDK key app\n")
        #expect(try await status(of: "/v1/sets/t", server: server, token: token) == 401)
    }

    private func status(of path: String, server: LiveServer, token: String) async throws -> Int {
        let port = server.port
        return try await offThePool { try LiveClient(port: port).send("GET", path, token: token).status }
    }

    /// A set over the server's body limit: flagctl shows the server's message as it is, and it names the setting of
    /// the configuration file to raise (it said only "body of N bytes exceeds 1048576").
    @Test func anImportOverTheBodyLimitNamesTheSettingToRaise() throws {
        let server = try LiveServer(configuration: #"{"limits":{"maxBodyBytes":65536}}"#)
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        let flags = (0..<1_000).map { index in
            #""flag-\#(index)":{"type":"string","kind":"ops","default":"\#(String(repeating: "v", count: 60))"}"#
        }
        let file = try server.workspace.write("big.json", #"{"schema":1,"flags":{\#(flags.joined(separator: ","))}}"#)
        let run = try server.ctl(["import", file])
        #expect(run.status == 1, "\(run)")
        let size = try #require(run.stderr.firstMatch(of: /body of (\d+) bytes/)?.1)
        #expect(
            run.stderr
                == "error: body of \(size) bytes exceeds the limit of 65536 bytes (raise limits.maxBodyBytes in the "
                + "server's configuration file to allow more)\n")
        #expect(try server.version(of: "t") == 1)
    }
}
