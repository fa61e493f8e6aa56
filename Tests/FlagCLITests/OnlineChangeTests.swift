import FlagTestSupport
import Foundation
import Testing

/// Change requests and reviews (docs/reviews.md) through the built flagctl against a live server.
@Suite("flagctl change requests", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineChangeTests {
    /// A token of the admin API with `role`, made with flagctl.
    static func token(_ server: LiveServer, _ name: String, role: String) throws -> String {
        let created = try server.ctl(["tokens", "create", name, "--role", role], set: nil)
        #expect(created.status == 0, "\(created)")
        return created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aProposedKillIsApprovedByAnotherPersonAndApplied() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "nc", "--type", "bool", "--default", "false"]).status == 0)
        let alice = try Self.token(server, "alice", role: "editor")
        let bob = try Self.token(server, "bob", role: "editor")

        let proposed = try server.ctl(
            ["kill", "nc", "--propose", "Kill the checkout", "--reason", "errors"], token: alice)
        #expect(proposed.status == 0, "\(proposed)")
        #expect(
            proposed.stdout
                == "proposed change request 1 on t; nothing is written until another person approves it "
                + "(flagctl changes approve 1) and it is applied (flagctl changes apply 1)\n")
        #expect(try server.flag("nc")["killed"] as? Bool == false)
        #expect(try server.version() == 2)

        let list = try server.ctl(["changes", "list"])
        #expect(
            list.stdoutLines.first?.hasPrefix("ID  STATE  TITLE              AUTHOR  APPROVED BY  PROPOSED") == true)
        #expect(list.stdoutLines.dropFirst().first?.hasPrefix("1   open   Kill the checkout  alice   -") == true)
        let show = try server.ctl(["changes", "show", "1"])
        #expect(show.stdoutLines.first == "change request 1: Kill the checkout")
        #expect(show.stdoutLines.contains("reason:      errors"))
        #expect(Array(show.stdoutLines.suffix(2)) == ["~ flag nc", "    killed: false → true"])

        let own = try server.ctl(["changes", "approve", "1"], token: alice)
        #expect(own.status == 1)
        #expect(own.stderrLines.first?.contains("may not approve it: another person must") == true, "\(own)")
        let approved = try server.ctl(["changes", "approve", "1", "--reason", "checked"], token: bob)
        #expect(approved.stdout == "change request 1 (Kill the checkout) is approved\n", "\(approved)")
        let applied = try server.ctl(["changes", "apply", "1"], token: alice)
        #expect(applied.stdout == "change request 1 (Kill the checkout) is applied, as version 3\n", "\(applied)")
        #expect(try server.flag("nc")["killed"] as? Bool == true)
        let json = try server.json(["changes", "list", "--state", "applied"])
        #expect((json["changes"] as? [[String: Any]])?.first?["appliedVersion"] as? Int == 3)
    }

    @Test func withReviewsRequiredAWriteIsRefusedUntilProposedButAKillIsNot() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "nc", "--type", "bool", "--default", "false"]).status == 0)
        let settings = try server.ctl(["sets", "settings", "t", "--reviews", "required"], set: nil)
        #expect(settings.stdoutLines.last?.hasPrefix("set t: reviews required: a write needs a change request") == true)
        let alice = try Self.token(server, "alice", role: "editor")
        let held = try server.ctl(["set", "nc", "--default", "true"], token: alice)
        #expect(held.status == 1)
        #expect(held.stderrLines.first?.contains("requires reviews: propose the change instead") == true, "\(held)")
        #expect(try server.ctl(["kill", "nc"], token: alice).status == 0)
        #expect(
            try server.ctl(["set", "nc", "--default", "true", "--propose", "Default on"], token: alice).status == 0)
        let urgent = try server.ctl(["set", "nc", "--default", "true", "--without-review", "incident 7"])
        #expect(urgent.stdout == "nc defaults to true (version 4)\n", "\(urgent)")

        let both = try server.ctl(["kill", "nc", "--propose", "x", "--without-review", "y"])
        #expect(both.stderrLines.first == "error: --propose and --without-review cannot be used together")
        let waiting = try server.ctl(["kill", "nc", "--propose", "x", "--wait", "90%"])
        #expect(waiting.stderrLines.first?.hasPrefix("error: --wait cannot go with --propose") == true)
        let created = try server.ctl(["sets", "create", "u", "--propose", "x"], set: nil)
        #expect(created.status == 2)
        #expect(try server.ctl(["changes", "show", "one"]).status == 2)
    }

    @Test func aChangeScheduledWithAtAppliesAtItsTime() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "nc", "--type", "bool", "--default", "false"]).status == 0)
        // An hour away, so that it is still scheduled when listed however slow the machine; then moved closer.
        let proposed = try server.ctl(["kill", "nc", "--propose", "Night kill", "--at", "+1h"])
        #expect(proposed.stdout.hasPrefix("proposed change request 1 on t, to apply at "), "\(proposed)")
        #expect(try server.ctl(["changes", "list"]).stdoutLines.dropFirst().first?.contains("scheduled") == true)
        // flagctl turns "+20s" into a time before the server sees it; a loaded machine took more than 1 s between.
        let moved = try server.ctl(["changes", "schedule", "1", "--at", "+20s"])
        #expect(moved.status == 0, "\(moved)")
        #expect(waitUntil(every: .milliseconds(500)) { (try? server.flag("nc")["killed"] as? Bool) == true })
        let show = try server.ctl(["changes", "show", "1"])
        #expect(show.stdoutLines.contains { $0.hasPrefix("decided:     applied by flagserver") }, "\(show)")
        let late = try server.ctl(["changes", "schedule", "1", "--at", "+1h"])
        #expect(late.stderrLines.first?.contains("is applied; only one that is open or approved or scheduled") == true)
        let alone = try server.ctl(["kill", "nc", "--at", "+1h"])
        #expect(alone.stderrLines.first == "error: --at schedules a change request: it goes with --propose TITLE")
    }
}
