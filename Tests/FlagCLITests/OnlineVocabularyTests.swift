import Foundation
import Testing

/// flagctl takes its kinds, types and operators from FlagCore, as the server does, so that what one accepts the
/// other accepts too. (Its own list once said `kill_switch`, which the server refused: no kill switch could be
/// created.)
@Suite("flagctl and the server share one vocabulary", .enabled(if: LiveServer.binary != nil), .live)
struct OnlineVocabularyTests {
    /// SPEC §1's kinds, with the lifetime each gives a new flag.
    static let kinds: [(name: String, lifetimeDays: Int?)] = [
        ("release", 42), ("experiment", 90), ("ops", nil), ("kill-switch", nil), ("permission", nil),
    ]

    @Test func aFlagOfEveryKindIsCreatedAndListed() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        for (index, kind) in Self.kinds.enumerated() {
            let key = "flag-\(index)"
            let created = try server.ctl(["create", key, "--type", "bool", "--default", "false", "--kind", kind.name])
            #expect(created.status == 0, "\(kind.name): \(created)")
            #expect(created.stdoutLines.first == "created \(key) in t (version \(index + 2))")
            let expiry = created.stdoutLines.dropFirst().first
            if let days = kind.lifetimeDays {
                let note = "(in \(days) days), the \(kind.name) lifetime (set --expires or --lifetime)"
                #expect(expiry?.hasSuffix(note) == true, "\(created)")
            } else {
                #expect(expiry == nil, "\(created)")
            }
            #expect(try server.flag(key)["kind"] as? String == kind.name)

            let listed = try server.ctl(["list", "--kind", kind.name])
            #expect(listed.status == 0, "\(listed)")
            #expect(listed.stdoutLines.count == 2, "\(kind.name): \(listed)")
            #expect(listed.stdoutLines.last?.hasPrefix("\(key)  bool  \(kind.name)") == true, "\(listed)")
        }
        let all = try server.json(["list"])["flags"] as? [String: [String: Any]] ?? [:]
        #expect(Set(all.values.compactMap { $0["kind"] as? String }) == Set(Self.kinds.map(\.name)))
    }

    @Test func anUnknownNameIsAUsageErrorListingTheKnownOnes() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        let kinds = "release, experiment, ops, kill-switch or permission"
        for arguments in [
            ["create", "k", "--type", "bool", "--default", "false", "--kind", "kill_switch"],
            ["list", "--kind", "kill_switch"],
        ] {
            let run = try server.ctl(arguments)
            #expect(run.status == 2)
            #expect(run.stderrLines.first == "error: unknown --kind 'kill_switch'; use \(kinds)")
        }
        let type = try server.ctl(["create", "k", "--type", "float", "--default", "1"])
        #expect(type.stderrLines.first == "error: unknown --type 'float'; use bool, int, double, string or json")
        let condition = try server.ctl(["cohort", "create", "c", "--where", "appVersion semver_ge 5.2.0"])
        #expect(condition.status == 2)
        #expect(
            condition.stderrLines.first?.hasPrefix(
                "error: --where 'appVersion semver_ge 5.2.0': unknown operator 'semver_ge'; use eq, neq, in, ") == true)
        #expect(
            condition.stderrLines.first?.hasSuffix(", semver_gte, before, after, exists, not_exists or in_cohort")
                == true)
        #expect(try server.version(of: "t") == 1)
    }
}
