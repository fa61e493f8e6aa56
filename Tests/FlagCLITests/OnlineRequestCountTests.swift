import FlagTestSupport
import Foundation
import Testing

/// A mutating command sends one request: it never fetches the flag for its type, nor the set to see
/// whether a flag exists. The server reads typed text (`valueText`) and refuses to replace on `create`. `values add`
/// and `values remove` alone read the flag first: they write its whole list, at the version read.
@Suite("flagctl: one request per mutating command", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineRequestCountTests {
    /// Requests the server answered, by route, apart from `/metrics` itself.
    static func requests(_ server: LiveServer) throws -> [String: Int] {
        let metrics = try LiveClient(port: server.port).send("GET", "/metrics", token: server.token)
        var counts: [String: Int] = [:]
        for line in String(decoding: metrics.body, as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("flagserver_requests_total{") {
            guard let start = line.range(of: "route=\""), let end = line[start.upperBound...].firstIndex(of: "\""),
                let count = Int(line.split(separator: " ").last ?? "")
            else { continue }
            let route = String(line[start.upperBound..<end])
            if route != "GET /metrics" { counts[route, default: 0] += count }
        }
        return counts
    }

    @Test func eachMutatingCommandSendsOneRequest() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["cohort", "create", "beta", "--units", "u-1"]).status == 0)
        let commands: [(arguments: [String], route: String)] = [
            (
                ["create", "cols", "--type", "int", "--default", "2", "--kind", "ops"],
                "PUT /v1/admin/sets/{set}/flags/{key}"
            ),
            (["set", "cols", "--default", "3"], "POST /v1/admin/sets/{set}/flags/{key}/default"),
            (
                ["rule", "add", "cols", "--cohort", "beta", "--value", "4"],
                "POST /v1/admin/sets/{set}/flags/{key}/rules"
            ),
            (
                ["rule", "add", "cols", "--where", "country eq DE", "--percent", "50", "--value", "5"],
                "POST /v1/admin/sets/{set}/flags/{key}/rules"
            ),
            (
                ["override", "cols", "9", "--unit", "u-2", "--for", "2h"],
                "POST /v1/admin/sets/{set}/flags/{key}/overrides"
            ),
            (["rollout", "cols", "--value", "6", "--percent", "10"], "PUT /v1/admin/sets/{set}/flags/{key}/rollout"),
            (["expire", "cols", "--now", "--keep", "7"], "POST /v1/admin/sets/{set}/flags/{key}/expire"),
            (["kill", "cols", "--reason", "x"], "POST /v1/admin/sets/{set}/flags/{key}/kill"),
        ]
        for command in commands {
            let before = try Self.requests(server)
            let run = try server.ctl(command.arguments)
            #expect(run.status == 0, "\(command.arguments): \(run)")
            let after = try Self.requests(server)
            var sent = after
            for (route, count) in before { sent[route, default: 0] -= count }
            #expect(sent.filter { $0.value != 0 } == [command.route: 1], "\(command.arguments)")
        }
        // What the server read from the text, as the flag's type: ints, not strings.
        let flag = try server.flag("cols")
        #expect(flag["default"] as? Int == 3)
        let rules = try #require(flag["rules"] as? [[String: Any]])
        #expect(rules.map { $0["name"] as? String } == ["beta", "rule-2"])
        #expect(rules.first?["value"] as? Int == 4)
        #expect((rules.last?["rollout"] as? [String: Any])?["value"] as? Int == 5)
        #expect((flag["overrides"] as? [[String: Any]])?.first?["value"] as? Int == 9)
        #expect(flag["expiredValue"] as? Int == 7)
    }

    @Test func changingAnEnumFlagsValuesReadsTheFlagOnceAndWritesOnce() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "theme", "--type", "string", "--default", "a", "--values", "a"]).status == 0)
        let commands: [(arguments: [String], routes: [String: Int])] = [
            (
                ["values", "add", "theme", "b", "c"],
                ["GET /v1/admin/sets/{set}/flags/{key}": 1, "PUT /v1/admin/sets/{set}/flags/{key}/values": 1]
            ),
            (
                ["values", "remove", "theme", "c"],
                ["GET /v1/admin/sets/{set}/flags/{key}": 1, "PUT /v1/admin/sets/{set}/flags/{key}/values": 1]
            ),
            (["values", "clear", "theme"], ["DELETE /v1/admin/sets/{set}/flags/{key}/values": 1]),
        ]
        for command in commands {
            let before = try Self.requests(server)
            let run = try server.ctl(command.arguments)
            #expect(run.status == 0, "\(command.arguments): \(run)")
            var sent = try Self.requests(server)
            for (route, count) in before { sent[route, default: 0] -= count }
            #expect(sent.filter { $0.value != 0 } == command.routes, "\(command.arguments)")
        }
    }

    @Test func anImportShowsItsDiffFromTheOneRequestThatAppliesIt() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "old", "--type", "bool", "--default", "false", "--kind", "ops"]).status == 0)
        #expect(try server.ctl(["create", "kept", "--type", "int", "--default", "1", "--kind", "ops"]).status == 0)
        let document = #"""
            {"schema":1,"set":"t","cohorts":{},"flags":{
             "kept":{"type":"int","kind":"ops","default":2},"new":{"type":"bool","kind":"ops","default":true}}}
            """#
        let file = try server.workspace.write("next.json", document)
        for dryRun in [true, false] {
            let before = try Self.requests(server)
            let run = try server.ctl(["import", file] + (dryRun ? ["--dry-run"] : []))
            #expect(run.status == 0, "\(run)")
            #expect(run.stdoutLines.prefix(4) == ["~ flag kept", "    default: 1 → 2", "+ flag new", "- flag old"])
            var sent = try Self.requests(server)
            for (route, count) in before { sent[route, default: 0] -= count }
            #expect(sent.filter { $0.value != 0 } == ["PUT /v1/admin/sets/{set}": 1], "dry run: \(dryRun)")
        }
        #expect(try server.flag("kept")["default"] as? Int == 2)
    }

    @Test func createRefusesToReplaceAndSaysSoInOneRequest() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "dark", "--type", "bool", "--default", "false"]).status == 0)
        let before = try Self.requests(server)
        let again = try server.ctl(["create", "dark", "--type", "bool", "--default", "true"])
        #expect(again.status == 1)
        #expect(again.stderrLines == ["error: flag 'dark' already exists in set 't'; change it with set/rule/rollout"])
        let after = try Self.requests(server)
        #expect(after.values.reduce(0, +) - before.values.reduce(0, +) == 1)
        #expect(try server.flag("dark")["default"] as? Bool == false)
    }
}
