import Foundation
import Testing

/// Creation defaults and the read-only commands' tables.
@Suite("flagctl reads and creation defaults", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineReadTests {
    @Test func creationSaysWhichLifetimeAppliedAndListsFilter() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        let experiment = try server.ctl(
            ["create", "arms", "--type", "string", "--default", "a", "--kind", "experiment"])
        let note = "(in 90 days), the experiment lifetime (set --expires or --lifetime)"
        #expect(experiment.stdoutLines.last?.hasSuffix(note) == true, "\(experiment)")
        let chosen = try server.ctl(["create", "dark", "--type", "bool", "--default", "false", "--lifetime", "6w"])
        #expect(chosen.stdoutLines.count == 2)
        #expect(chosen.stdoutLines.last?.hasSuffix("(in 42 days)") == true, "\(chosen)")
        let ops = try server.ctl(["create", "limit", "--type", "int", "--default", "10", "--kind", "ops"])
        #expect(ops.stdoutLines == ["created limit in t (version 4)"])
        let past = try server.ctl(["create", "old", "--type", "bool", "--default", "true", "--expires", "2020-01-01"])
        #expect(past.status == 0, "\(past)")
        #expect(past.stdoutLines.last == "expires 2020-01-01 00:00 UTC (\(Self.daysSince2020()) days ago)")
        let again = try server.ctl(["create", "dark", "--type", "bool", "--default", "true"])
        #expect(again.status == 1)
        #expect(again.stderrLines == ["error: flag 'dark' already exists in set 't'; change it with set/rule/rollout"])

        let list = try server.ctl(["list"])
        #expect(list.stdoutLines.first == "KEY    TYPE    KIND        DEFAULT  STATE    EXPIRES")
        #expect(list.stdoutLines.dropFirst().map { String($0.prefix(6)) } == ["arms  ", "dark  ", "limit ", "old   "])
        #expect(try server.ctl(["list", "--kind", "ops"]).stdoutLines.count == 2)
        let expired = try server.json(["list", "--expired"])["flags"] as? [String: Any]
        #expect(expired.map { Array($0.keys) } == ["old"])

        let sets = try server.ctl(["sets", "list"])
        #expect(sets.stdoutLines.first == "NAME  VERSION  FLAGS  COHORTS  UPDATED")
        #expect(sets.stdoutLines.dropFirst().first?.hasPrefix("t     5        4      0        ") == true, "\(sets)")

        let cohort = ["cohort", "create", "de", "--where", "country in DE,AT", "--description", "DACH"]
        #expect(try server.ctl(cohort).status == 0)
        #expect(
            try server.ctl(["cohort", "list"]).stdoutLines == [
                "NAME  UNITS  CONDITIONS        DESCRIPTION", "de    0      country in DE,AT  DACH",
            ])
        #expect(
            try server.ctl(["cohort", "show", "de"]).stdoutLines == [
                "name:        de", "description: DACH", "matches:     country in DE,AT",
            ])
        let missing = try server.ctl(["cohort", "show", "nope"])
        #expect(missing.status == 1)
        #expect(missing.stderrLines == [#"error: no cohort "nope" in set "t""#])
    }

    @Test func rolloutFormsAndAnInvalidImport() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        #expect(try server.ctl(["create", "cols", "--type", "int", "--default", "2", "--kind", "ops"]).status == 0)
        #expect(
            try server.ctl(["rollout", "cols", "--value", "3", "--percent", "25"]).stdout
                == "rolling out cols: 25% of 3 (version 3)\n")
        let percent = try server.ctl(["rollout", "cols", "show"])
        #expect(percent.stdoutLines == ["cols: 25% of 3", "[#####...............] 25%"])
        let steps = ["rollout", "cols", "--value", "3", "--steps", "0h:1,24h:5,72h:100", "--start", "2030-01-01"]
        #expect(try server.ctl(steps).stdout == "rolling out cols: 0% of 3, step 0 of 3 (version 4)\n")
        let show = try server.ctl(["rollout", "cols", "show"])
        #expect(show.stdoutLines.count == 7)
        #expect(show.stdoutLines[6].hasPrefix("  3     2030-01-04 00:00 UTC  in "))
        #expect(show.stdoutLines[6].hasSuffix("  100%"))
        let badSteps = try server.ctl(["rollout", "cols", "--value", "3", "--steps", "0h:1,24h"])
        #expect(badSteps.status == 2)
        #expect(badSteps.stderrLines.first == "error: --steps '24h' needs the form OFFSET:PERCENT, e.g. 24h:5")

        try server.workspace.write("bad.json", #"{"schema":1,"flags":{"x":{"type":"bool","default":3}}}"#)
        let invalid = try server.ctl(["import", "bad.json"])
        #expect(invalid.status == 1)
        #expect(
            invalid.stderrLines == [
                "error: rejected, nothing changed: flags.x.default: expected a value of type bool, found 3"
            ])
        #expect(try server.version() == 4)
    }

    private static func daysSince2020() -> Int {
        Int((Date().timeIntervalSince1970 - 1_577_836_800 + 43_200) / 86_400)
    }
}
