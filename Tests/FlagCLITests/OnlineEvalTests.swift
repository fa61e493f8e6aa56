import Foundation
import Testing

@Suite("flagctl eval on a server", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineEvalTests {
    @Test func theServerAndAnExportedFileAgree() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "nc", "--type", "bool", "--default", "false"]).status == 0)
        let rule = ["rule", "add", "nc", "--where", "country in DE,AT", "--value", "true", "--name", "dach"]
        #expect(try server.ctl(rule).status == 0)

        let online = try server.ctl(["eval", "nc", "--unit", "u-1", "--attr", "country=DE", "--explain"])
        #expect(online.status == 0, "\(online)")
        let expected = ["UNIT  VALUE  REASON           VARIANT", "u-1   true   TARGETING_MATCH  dach"]
        #expect(Array(online.stdoutLines.prefix(2)) == expected)
        #expect(online.stdoutLines.count > 2)
        #expect(online.stdoutLines.dropFirst(2).allSatisfy { $0.hasPrefix("    - ") })

        let json = try server.json(["eval", "nc", "--unit", "u-2", "--attr", "country=FR"])
        #expect(json["value"] as? Bool == false)
        #expect(json["reason"] as? String == "DEFAULT")
        #expect(json["version"] as? Int == 3)
        #expect(json["steps"] == nil)

        #expect(try server.ctl(["export", "t.json"]).status == 0)
        let offline = try server.ctl(["eval", "nc", "--file", "t.json", "--unit", "u-1", "--attr", "country=DE"])
        #expect(offline.stdoutLines == Array(online.stdoutLines.prefix(2)))

        let unknown = try server.ctl(["eval", "nope", "--unit", "u-1"])
        #expect(unknown.status == 1)
        #expect(unknown.stderrLines == ["error: unknown flag 'nope' in set 't' (see 'flagctl list')"])
    }
}
