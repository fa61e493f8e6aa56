import Foundation
import Testing

@Suite("flagctl against a live flagserver", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineLifecycleTests {
    @Test func aFlagFromCreationToArchive() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).stdout == "created set t (version 1)\n")
        let created = try server.ctl(["create", "nc", "--type", "bool", "--default", "false", "--owner", "pay"])
        #expect(created.status == 0, "\(created)")
        #expect(created.stdoutLines.first == "created nc in t (version 2)")
        #expect(
            created.stdoutLines.last?.hasSuffix("(in 42 days), the release lifetime (set --expires or --lifetime)")
                == true)

        #expect(try server.ctl(["cohort", "create", "qa", "--units", "qa-1,qa-2"]).status == 0)
        let rule = try server.ctl(
            ["rule", "add", "nc", "--where", "country in DE,AT", "--value", "true", "--name", "dach"])
        #expect(rule.stdout == "added rule dach to nc: country in DE,AT → true (version 4)\n", "\(rule)")
        #expect(try server.ctl(["rollout", "nc", "--value", "true", "--phased", "apple"]).status == 0)
        let rollout = try #require(try server.flag("nc")["rollout"] as? [String: Any])
        #expect((rollout["schedule"] as? [Any])?.count == 7)
        let show = try server.ctl(["rollout", "nc", "show"])
        #expect(show.stdoutLines.prefix(2) == ["nc: 1% of true, step 1 of 7", "[....................] 1%"])
        #expect(show.stdoutLines.count == 11)

        #expect(try server.ctl(["rollout", "nc", "pause", "--reason", "errors"]).status == 0)
        #expect((try server.flag("nc")["rollout"] as? [String: Any])?["pausedAt"] is String)
        #expect(try server.ctl(["rollout", "nc", "resume"]).status == 0)
        #expect((try server.flag("nc")["rollout"] as? [String: Any])?["pausedAt"] == nil)

        #expect(try server.ctl(["override", "nc", "true", "--unit", "u-9", "--for", "2h"]).status == 0)
        #expect(try server.ctl(["override", "nc", "false", "--cohort", "qa"]).status == 0)
        let overrides = try #require(try server.flag("nc")["overrides"] as? [[String: Any]])
        #expect(overrides.count == 2)
        #expect(overrides.contains { $0["unit"] as? String == "u-9" && $0["until"] is String })
        let evaluated = try server.json(["eval", "nc", "--unit", "u-9"])
        #expect(evaluated["value"] as? Bool == true)
        #expect(try server.ctl(["override", "nc", "--remove", "--unit", "u-9"]).status == 0)

        #expect(try server.ctl(["kill", "nc", "--reason", "payment errors"]).stdout == "killed nc (version 11)\n")
        #expect(try server.flag("nc")["killed"] as? Bool == true)
        #expect(try server.ctl(["restore", "nc"]).stdout == "restored nc (version 12)\n")
        #expect(try server.ctl(["stale", "--fail"]).status == 0)
        #expect(try server.ctl(["expire", "nc", "--now", "--keep", "true"]).status == 0)
        #expect(try server.flag("nc")["expiredValue"] as? Bool == true)

        let stale = try server.ctl(["stale", "--fail"])
        #expect(stale.status == 1)
        #expect(stale.stdoutLines.first == "KEY  STATUS   EXPIRED  OWNER  SERVES")
        #expect(stale.stdoutLines.dropFirst().first?.hasPrefix("nc   expired") == true)
        #expect(try server.ctl(["archive", "nc"]).stdout == "archived nc (version 14)\n")
        #expect(try server.ctl(["stale", "--fail"]).status == 0)

        let history = try server.json(["history"])["versions"] as? [[String: Any]] ?? []
        #expect(
            history.compactMap { $0["action"] as? String } == [
                "flag.archive", "flag.expire", "flag.restore", "flag.kill", "flag.override.remove",
                "flag.override.add", "flag.override.add", "flag.rollout.resume", "flag.rollout.pause",
                "flag.rollout.set", "flag.rule.add", "cohort.create", "flag.create", "set.create",
            ])
        #expect(history.first { $0["action"] as? String == "flag.kill" }?["reason"] as? String == "payment errors")
        let table = try server.ctl(["history", "nc"])
        #expect(
            table.stdoutLines.first == "VERSION  TIME                  ACTOR  ACTION                SUBJECT  REASON")
        #expect(table.stdoutLines.count == 13)
        let diff = try server.ctl(["diff", "10", "11"])
        #expect(diff.stdoutLines == ["~ flag nc", "    killed: false → true"])

        // A rollback is a new version with the old content.
        let rollback = try server.ctl(["rollback", "4", "--reason", "start over"])
        #expect(rollback.stdout == "rolled t back to version 4 (version 15)\n")
        let restored = try server.flag("nc")
        #expect(restored["rollout"] == nil && restored["archived"] == nil && restored["killed"] as? Bool == false)
        #expect((restored["rules"] as? [Any])?.count == 1)
        #expect(try server.ctl(["diff", "4", "15"]).stdout == "versions 4 and 15 have the same flags and cohorts\n")
    }

    @Test func exportThenImportRoundTripsAndADryRunChangesNothing() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "cols", "--type", "int", "--default", "2", "--kind", "ops"]).status == 0)
        #expect(try server.ctl(["cohort", "create", "de", "--where", "country eq DE"]).status == 0)
        #expect(try server.ctl(["rule", "add", "cols", "--cohort", "de", "--value", "3"]).status == 0)
        let exported = try server.ctl(["export", "t.json"])
        #expect(exported.stdout == "wrote t version 4 to t.json (1 flag, 1 cohort)\n")

        #expect(try server.ctl(["sets", "create", "u"]).status == 0)
        let imported = try server.ctl(["import", "t.json"], set: "u")
        #expect(
            imported.stdoutLines == [
                "+ flag cols", "+ cohort de", "imported t.json into u (version 2)",
            ])
        let first = try server.document(set: "t")
        let second = try server.document(set: "u")
        #expect(
            NSDictionary(dictionary: first["flags"] as? [String: Any] ?? [:])
                .isEqual(to: second["flags"] as? [String: Any] ?? [:]))
        #expect(
            NSDictionary(dictionary: first["cohorts"] as? [String: Any] ?? [:])
                .isEqual(to: second["cohorts"] as? [String: Any] ?? [:]))
        #expect((first["flags"] as? [String: Any])?.count == 1)

        // Importing the same document again changes nothing; a dry run of a different one applies nothing.
        #expect(
            try server.ctl(["import", "t.json"], set: "u").stdoutLines.last
                == "imported t.json into u (unchanged, still version 2)")
        #expect(try server.ctl(["set", "cols", "--default", "5"], set: "u").status == 0)
        let dryRun = try server.ctl(["import", "t.json", "--dry-run"], set: "u")
        #expect(dryRun.stdoutLines == ["~ flag cols", "    default: 5 → 2", "nothing applied (--dry-run)"])
        #expect(try server.version(of: "u") == 3)
        let still = try server.json(["get", "cols"], set: "u")
        #expect((still["flag"] as? [String: Any])?["default"] as? Int == 5)
    }
}
