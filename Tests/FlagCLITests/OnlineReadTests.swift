import Foundation
import Testing

/// Creation defaults and the read-only commands' tables.
@Suite("flagctl reads and creation defaults", .enabled(if: LiveServer.binary != nil))
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

    private static func daysSince2020() -> Int {
        Int((Date().timeIntervalSince1970 - 1_577_836_800 + 43_200) / 86_400)
    }
}
