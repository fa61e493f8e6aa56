import FlagHTTP
import FlagTestBasics
import FlagTestSupport
import Foundation
import Testing

/// `flagctl create --values` and `flagctl values add|remove|clear` against a live server: an enum flag made, shown by
/// `get`, its values changed at the version read, what it still serves kept, and the list dropped.
@Suite("flagctl values", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineValuesTests {
    @Test func anEnumFlagIsMadeItsValuesChangedAndItsListDropped() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        let created = try server.ctl([
            "create", "theme", "--type", "string", "--default", "blue", "--values", "blue,green,dark mode", "--kind",
            "ops",
        ])
        #expect(created.status == 0, "\(created)")
        #expect(try server.flag("theme")["values"] as? [String] == ["blue", "green", "dark mode"])
        let shown = try server.ctl(["get", "theme"])
        #expect(shown.stdoutLines.contains(#"values:      "blue", "green", "dark mode""#), "\(shown)")
        let listed = try server.ctl(["list"])
        #expect(listed.stdoutLines.last?.contains("default") == true, "the values are counted nowhere: \(listed)")

        let added = try server.ctl(["values", "add", "theme", "orange", "green", "a,b"])
        #expect(added.status == 0, "\(added)")
        #expect(
            added.stdoutLines == [#"theme serves "blue", "green", "dark mode", "orange" or "a,b" (version 3)"#],
            "\(added)")
        #expect(try server.flag("theme")["values"] as? [String] == ["blue", "green", "dark mode", "orange", "a,b"])

        let removed = try server.ctl(["values", "remove", "theme", "green", "a,b", "--reason", "unused"])
        #expect(removed.status == 0, "\(removed)")
        #expect(try server.flag("theme")["values"] as? [String] == ["blue", "dark mode", "orange"])

        // What the flag serves stays listed: the server refuses at the value's path.
        let served = try server.ctl(["values", "remove", "theme", "blue"])
        #expect(served.status == 1, "\(served)")
        #expect(served.stderr.contains(#"flags.theme.default: "blue" is not one of the flag's values"#), "\(served)")
        let unknown = try server.ctl(["values", "remove", "theme", "pink"])
        #expect(unknown.status == 1)
        #expect(
            unknown.stderrLines == [
                #"error: theme does not list "pink"; its values are "blue", "dark mode" or "orange""#
            ])
        let every = try server.ctl(["values", "remove", "theme", "blue", "dark mode", "orange"])
        #expect(every.status == 2, "\(every)")
        #expect(
            every.stderrLines.first?.contains(
                "would leave none; to let it serve any string again: flagctl values clear theme") == true)

        let cleared = try server.ctl(["values", "clear", "theme"])
        #expect(cleared.status == 0, "\(cleared)")
        #expect(cleared.stdoutLines == ["theme serves any string again (version 5)"])
        #expect(try server.flag("theme")["values"] == nil)
        let none = try server.ctl(["values", "remove", "theme", "blue"])
        #expect(none.stderrLines == ["error: theme lists no values: it serves any string"])
    }

    @Test func aChangeMadeSinceTheVersionAskedForIsAConflict() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(
            try server.ctl(["create", "theme", "--type", "string", "--default", "a", "--values", "a,b"]).status == 0)
        let version = try server.version()
        #expect(try server.ctl(["values", "add", "theme", "c"]).status == 0)
        let stale = try server.ctl(["values", "add", "theme", "d", "--if-match", "\(version)"])
        #expect(stale.status == 3, "\(stale)")
        #expect(try server.flag("theme")["values"] as? [String] == ["a", "b", "c"])
    }

    @Test func aChangeBetweenTheReadAndTheWriteIsAConflictNotALostUpdate() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(
            try server.ctl(["create", "theme", "--type", "string", "--default", "a", "--values", "a,b"]).status == 0)
        let (upstream, token) = (server.port, server.token)
        // Between flagctl's read of the flag and its write, another editor adds a value.
        let proxy: HTTPHandler = { request, responder in
            let headers = request.headers.fields.filter {
                ["authorization", "if-match", "content-type"].contains($0.name.lowercased())
            }
            do {
                let answer = try LiveClient(port: upstream).execute(
                    request.method, request.target, headers: headers.map { ($0.name, $0.value) }, body: request.body)
                if request.method == "GET" {
                    let other = try LiveClient(port: upstream).send(
                        "PUT", "/v1/admin/sets/t/flags/theme/values", token: token, body: #"{"values":["a","b","c"]}"#)
                    precondition(other.status == 200, "the other editor's write: \(other.status)")
                }
                let kept = answer.headers.filter { ["etag", "content-type"].contains($0.name.lowercased()) }
                responder.respond(
                    HTTPResponse(
                        status: answer.status, headers: HTTPHeaders(kept.map { .init(name: $0.name, value: $0.value) }),
                        body: answer.body))
            } catch {
                responder.respond(HTTPResponse(status: 502))
            }
        }
        try withServer(handler: proxy) { _, port in
            let run = try Flagctl.run(
                ["values", "add", "theme", "d"], in: server.workspace,
                environment: ["FLAGCTL_SERVER": "http://127.0.0.1:\(port)", "FLAGCTL_TOKEN": token, "FLAGCTL_SET": "t"])
            #expect(run.status == 3, "\(run)")
            #expect(run.stderr.contains("the set changed meanwhile"), "\(run)")
        }
        #expect(try server.flag("theme")["values"] as? [String] == ["a", "b", "c"], "the other editor's value is kept")
    }

    @Test(
        "bad values are refused naming the option, the flag, or the path the server names",
        arguments: [
            (["create", "n", "--type", "int", "--default", "1", "--values", "1,2"], 2, "this is a int flag"),
            (["create", "s", "--type", "string", "--default", "a", "--values", "a,,b"], 2, "has an empty value"),
            (["create", "s", "--type", "string", "--default", "c", "--values", "a,b"], 1, "flags.s.default"),
            (["create", "s", "--type", "string", "--default", "a", "--values", "a,a"], 1, "flags.s.values[1]"),
            (["values", "add", "flag", "x"], 1, "flag is a bool flag; only a string flag lists its values"),
            (["values", "add", "flag", ""], 2, "a value of flag cannot be empty"),
            (["values", "add", "flag"], 2, "missing V"),
        ])
    func badValues(arguments: [String], status: Int32, message: String) throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "flag", "--type", "bool", "--default", "false"]).status == 0)
        let run = try server.ctl(arguments)
        #expect(run.status == status, "\(run)")
        #expect(run.stderr.contains(message), "\(run)")
    }
}
