import FlagCore
import FlagHTTP
import FlagTestSupport
import Foundation
import Testing

/// Text stored with control characters (descriptions, owners, rule names, cohort descriptions) reaches the terminals of
/// everyone who reads it with flagctl: a live flagserver serves the hostile strings, and every read shows them as
/// escapes, on one line each, while `--json` carries them exactly. The server refuses them when an admin writes them,
/// so they come from a seed document, as a set stored before that refusal would hold them.
@Suite("flagctl against a live server: control characters", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineControlCharacterTests {
    /// A server with set `t`, seeded, whose flag `k`, its rule and cohort `beta` carry the hostile text, and `k`
    /// killed since (version 2).
    private func seeded() throws -> LiveServer {
        let seeds = try TemporaryDirectory()
        let document: [String: Any] = [
            "schema": 1, "set": "t",
            "cohorts": ["beta": ["include": ["u-1"], "description": Hostile.text]],
            "flags": [
                "k": [
                    "type": "string", "kind": "ops", "default": "plain", "description": Hostile.text,
                    "owner": "team\(Hostile.title)",
                    "rules": [
                        [
                            "name": "beta\(Hostile.title)\(Hostile.clear)", "cohort": "beta",
                            "value": "x\(Hostile.title)",
                        ]
                    ],
                ]
            ],
        ]
        try JSONSerialization.data(withJSONObject: document).write(to: seeds.url.appendingPathComponent("t.json"))
        let path = String(decoding: try JSONSerialization.data(withJSONObject: [seeds.url.path]), as: UTF8.self)
        let server = try LiveServer(configuration: #"{"seedDirectory":\#(path.dropFirst().dropLast())}"#)
        let run = try server.ctl(["kill", "k", "--reason", "incident 12"])
        #expect(run.status == 0, "kill: \(run)")
        return server
    }

    /// An admin's text with a control character is refused, and the server's message naming it is one visible line.
    @Test func aReasonOrADescriptionWithOneIsRefusedInOneVisibleLine() throws {
        let server = try seeded()
        for write in [
            ["restore", "k", "--reason", Hostile.text],
            ["create", "k2", "--type", "bool", "--default", "false", "--description", "a\(Hostile.title)"],
        ] {
            let run = try server.ctl(write)
            #expect(run.status == 1, "\(run)")
            Hostile.expectSafe(run)
            #expect(run.stderrLines.count == 1, "\(run)")
            #expect(run.stderr.contains("contains the control character U+001B at position"), "\(run)")
        }
        #expect(try server.version() == 2)
    }

    @Test func everyReadShowsTheHostileStringsAsEscapesOnTheirLine() throws {
        let server = try seeded()
        // A table cuts a long cell with `…`: the description column shows the start of the text.
        let cut = #"Checkout\e]0;pwned\u0007\u009b2J"#
        let reads: [([String], String)] = [
            (["get", "k"], Hostile.shownText),
            (["get", "k"], #"team\e]0;pwned\u0007"#),
            (["list"], "k"),
            (["history"], "incident 12"),
            (["history", "k"], "incident 12"),
            (["diff", "1", "2"], "flag k"),
            (["cohort", "show", "beta"], "description: \(Hostile.shownText)"),
            (["cohort", "list"], cut),
            (["eval", "k", "--unit", "u-1", "--explain"], "killed"),
            (["restore", "k"], "restored k"),
            (["eval", "k", "--unit", "u-1", "--explain"], #""x\u001b]0;pwned\u0007"  TARGETING_MATCH"#),
            (["eval", "k", "--unit", "u-1"], #"beta\e]0;pwned\u0007\u009b2J"#),
            (["export"], #"\u001b]0;pwned\u0007\u009b2J\nforged: line"#),
            (["generate", "swift"], "/// Checkout ]0;pwned 2J forged: line"),
            (["refs"], "unused (in the set, no code reads them):"),
            (["stale"], "no stale flags in t"),
            (["usage"], "t, the last 30 days"),
            (["clients"], "no instance of t reported"),
        ]
        for (arguments, shown) in reads {
            let run = try server.ctl(arguments)
            #expect(run.status == 0, "\(arguments): \(run)")
            Hostile.expectSafe(run)
            #expect(run.stdout.contains(shown), "\(arguments) shows no \(shown): \(run)")
        }
    }

    /// `--json` keeps the exact strings: JSON escapes C0 itself, and the C1 character that JSON may carry raw is
    /// written in JSON's own `\u` form, so the line still reads back to the stored value.
    @Test func jsonCarriesTheExactStringsWithoutARawControlCharacter() throws {
        let server = try seeded()
        for arguments in [["get", "k"], ["diff", "1", "2"], ["cohort", "show", "beta"]] {
            let run = try server.ctl(["--json"] + arguments)
            #expect(run.status == 0, "\(run)")
            Hostile.expectSafe(run)
            #expect(run.stdoutLines.count == 1, "\(run)")
            #expect(run.stdout.contains(#"\u009b2J"#), "\(run)")
        }
        let flag = try server.flag("k")
        #expect(flag["description"] as? String == Hostile.text)
        #expect(flag["owner"] as? String == "team\(Hostile.title)")
        let rules = try #require(flag["rules"] as? [[String: Any]])
        #expect(rules.first?["name"] as? String == "beta\(Hostile.title)\(Hostile.clear)")
    }

    /// The server's error message quotes the key it was given: `error: …` stays one line of visible text.
    @Test func anErrorQuotingTheRequestIsOneVisibleLine() throws {
        let server = try seeded()
        let run = try server.ctl(["get", "nope\(Hostile.title)\nforged"])
        #expect(run.status == 1, "\(run)")
        Hostile.expectSafe(run)
        #expect(run.stderrLines.count == 1, "\(run)")
        #expect(run.stderr.contains(#"nope\e]0;pwned\u0007\nforged"#), "\(run)")
    }

    /// Token and SDK key names must be keys: the server's refusal quotes the name, and flagctl shows it as one
    /// visible line.
    @Test func aRefusedTokenOrKeyNameIsQuotedAsEscapes() throws {
        let server = try seeded()
        for create in [
            ["tokens", "create", "ci\(Hostile.title)\nforged", "--role", "viewer"],
            ["keys", "create", "app\(Hostile.title)\nforged"],
        ] {
            let run = try server.ctl(create)
            #expect(run.status == 1, "\(run)")
            Hostile.expectSafe(run)
            #expect(run.stderrLines.count == 1, "\(run)")
            #expect(run.stderr.contains(#"\e]0;pwned\u0007\nforged"#), "\(run)")
        }
        for list in [["tokens", "list"], ["keys", "list"]] {
            let run = try server.ctl(list)
            #expect(run.status == 0, "\(run)")
            Hostile.expectSafe(run)
        }
    }
}

/// A server that is not this flagserver (an older one, a proxy, a hostile one) may send anything: `clients` shows
/// the SDK and app names a telemetry report carried, and any error message, as escapes.
@Suite("flagctl against a canned server: control characters", .live)
struct CannedServerControlCharacterTests {
    static let clients = #"""
        {"set":"t\u001b]0;pwned\u0007","instances":[
         {"id":"in_a\u001b[2J","sdk":{"name":"FlagClient\u001b]0;pwned\u0007","version":"2.0.0\#u{9B}2J"},
          "app":{"name":"Shop\nforged","version":"5.3.0"},"version":41,"appliedAt":"2026-12-02T10:00:00Z",
          "lastSeen":"2026-12-02T10:00:03Z","capabilities":{"schema":1,"operators":["eq\u001b[31m"]}}],
         "silent":0}
        """#

    /// Answers `clients` with hostile names, and every other request with a hostile error.
    static func handler(_ request: HTTPRequest, _ responder: HTTPResponder) {
        if request.path == "/v1/admin/sets/t/clients" {
            responder.respond(HTTPResponse(status: 200, body: Array(clients.utf8)))
        } else {
            let error = #"{"error":{"code":"bad_request","message":"refused\u001b]0;pwned\u0007\nerror: forged"}}"#
            responder.respond(HTTPResponse(status: 400, body: Array(error.utf8)))
        }
    }

    static func ctl(_ arguments: [String], port: Int) throws -> Run {
        let environment = ["FLAGCTL_SERVER": "http://127.0.0.1:\(port)", "FLAGCTL_TOKEN": "t", "FLAGCTL_SET": "t"]
        return try Flagctl.run(arguments, in: try TemporaryDirectory(), environment: environment)
    }

    @Test func clientsShowsHostileTelemetryNamesAsEscapes() throws {
        try withServer(handler: Self.handler) { _, port in
            let run = try Self.ctl(["clients"], port: port)
            #expect(run.status == 0, "\(run)")
            Hostile.expectSafe(run)
            #expect(run.stdout.contains(#"FlagClient\e]0;pwned\u0007 2.0.0\u009b2J"#), "\(run)")
            #expect(run.stdoutLines.first == #"1 instance of t\e]0;pwned\u0007 reported in the last 10 minutes"#)

            let json = try Self.ctl(["--json", "clients"], port: port)
            Hostile.expectSafe(json)
            let object = try #require(try Flagctl.jsonObjects(json).first)
            let instances = try #require(object["instances"] as? [[String: Any]])
            let sdk = try #require(instances.first?["sdk"] as? [String: Any])
            #expect(sdk["version"] as? String == "2.0.0\u{9B}2J")
        }
    }

    @Test func aServersErrorMessageIsOneVisibleLine() throws {
        try withServer(handler: Self.handler) { _, port in
            let run = try Self.ctl(["sets", "list"], port: port)
            #expect(run.status == 1, "\(run)")
            Hostile.expectSafe(run)
            #expect(run.stderrLines == [#"error: refused\e]0;pwned\u0007\nerror: forged"#], "\(run)")
        }
    }
}
