import FlagTestSupport
import Foundation
import Testing

/// Named tokens with roles, and promoting a flag between sets, through the built flagctl against a live server.
@Suite("flagctl tokens and promote", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineTokenTests {
    @Test func aTokenIsCreatedOnceListedAndRevoked() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        let created = try server.ctl(
            ["tokens", "create", "alice", "--role", "editor", "--sets", "t", "--expires", "90d", "--reason", "joins"],
            set: nil)
        #expect(created.status == 0, "\(created)")
        #expect(created.stdoutLines.count == 1 && created.stdout.hasPrefix("fsa_"))
        #expect(created.stderr.contains("created token alice (editor on t, until "))
        let token = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        // Alice may change flags of `t`, not create sets, and acts under her name.
        let alice = ["create", "dark", "--type", "bool", "--default", "false", "--kind", "ops"]
        #expect(try server.ctl(alice, token: token).status == 0)
        let refused = try server.ctl(["sets", "create", "other"], set: nil, token: token)
        #expect(refused.status == 1)
        #expect(refused.stderrLines.first?.hasPrefix("error: this token may not do that (403)") == true, "\(refused)")
        #expect(try server.ctl(["history"]).stdoutLines.dropFirst().first?.contains("alice") == true)

        let list = try server.ctl(["tokens", "list"], set: nil)
        #expect(
            list.stdoutLines.first == "NAME   ROLE    SETS  CREATED               EXPIRES               LAST USED",
            "\(list)")
        #expect(list.stdoutLines.contains { $0.hasPrefix("alice  editor  t     ") })
        let json = try server.json(["tokens", "list"], set: nil)["tokens"] as? [[String: Any]]
        #expect(json?.first { $0["name"] as? String == "alice" }?["role"] as? String == "editor")

        #expect(try server.ctl(["tokens", "revoke", "alice", "--reason", "left"], set: nil).status == 0)
        #expect(try server.ctl(["list"], token: token).status == 1)
        let bad = try server.ctl(["tokens", "create", "bob", "--role", "owner"], set: nil)
        #expect(bad.status == 2)
        #expect(bad.stderrLines.first == "error: unknown --role 'owner'; use viewer, editor, admin")
    }

    @Test func aFlagIsPromotedWithTheCohortsItNeeds() throws {
        let server = try LiveServer()
        for set in ["staging", "prod"] { #expect(try server.ctl(["sets", "create", set], set: nil).status == 0) }
        #expect(try server.ctl(["cohort", "create", "beta", "--units", "u-1"], set: "staging").status == 0)
        let create = ["create", "dark", "--type", "bool", "--default", "false", "--kind", "ops"]
        #expect(try server.ctl(create, set: "staging").status == 0)
        #expect(
            try server.ctl(["rule", "add", "dark", "--cohort", "beta", "--value", "true"], set: "staging").status == 0)
        let refused = try server.ctl(["promote", "dark", "--from", "staging", "--to", "prod"], set: nil)
        #expect(refused.status == 1)
        #expect(refused.stderrLines.first?.contains("uses cohort 'beta', which set 'prod' lacks") == true, "\(refused)")
        let promoted = try server.ctl(
            ["promote", "dark", "--from", "staging", "--to", "prod", "--with-cohorts", "--reason", "verified"], set: nil
        )
        #expect(promoted.stdout == "promoted dark from staging to prod (version 2)\n", "\(promoted)")
        #expect((try server.document(set: "prod")["cohorts"] as? [String: Any])?["beta"] != nil)
    }
}
