import Foundation
import Testing

/// `flagctl requires` against a live server: a flag made to require another, shown by `get`, explained by `eval`,
/// refused at the server for values of the wrong type, and released again.
@Suite("flagctl requires", .live)
struct OnlineRequiresTests {
    @Test func aFlagRequiresAnotherUntilItIsReleased() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "checkout", "--type", "bool", "--default", "false"]).status == 0)
        #expect(try server.ctl(["create", "express", "--type", "bool", "--default", "false"]).status == 0)
        let everyone = [
            "rule", "add", "express", "--where", "unitID starts_with u", "--value", "true", "--name", "all",
        ]
        #expect(try server.ctl(everyone).status == 0)

        let wrong = try server.ctl(["requires", "express", "--on", "checkout", "--values", "yes"])
        #expect(wrong.status != 0)
        #expect(wrong.stderr.contains("--values for checkout"), "\(wrong)")

        let made = try server.ctl(["requires", "express", "--on", "checkout", "--values", "true"])
        #expect(made.status == 0, "\(made)")
        #expect(made.stdoutLines.last?.hasPrefix("express requires checkout to serve true") == true)
        let shown = try server.ctl(["get", "express"])
        #expect(shown.stdoutLines.contains("requires:    checkout = true"), "\(shown)")
        #expect(shown.stdoutLines.contains { $0.hasPrefix("rule:        all:") })
        #expect(!shown.stdoutLines.contains { $0.hasPrefix("rule:        prerequisites") })

        let failed = try server.ctl(["eval", "express", "--unit", "u-1", "--explain"])
        #expect(failed.stdoutLines.first { $0.hasPrefix("u-1") }?.contains("PREREQUISITE_FAILED  checkout") == true)
        #expect(failed.stdoutLines.contains { $0.contains("prerequisite 'checkout' serves false") }, "\(failed)")

        // The required flag cannot go while express needs it.
        let delete = try server.ctl(["archive", "checkout"])
        #expect(delete.status != 0)
        #expect(delete.stderr.contains("prerequisite of 1 flag (express)"), "\(delete)")

        #expect(try server.ctl(["requires", "express", "--remove", "checkout"]).status == 0)
        let released = try server.ctl(["eval", "express", "--unit", "u-1"])
        #expect(released.stdoutLines.last?.contains("TARGETING_MATCH") == true, "\(released)")
        #expect(try server.ctl(["requires", "express", "--remove", "checkout"]).status != 0)
    }
}
