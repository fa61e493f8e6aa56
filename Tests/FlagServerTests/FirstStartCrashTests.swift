import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// What a first start leaves when it stops halfway (found by `Reliability/crash-durability --first-starts`): a
/// failure at the same point stands in for a SIGKILL there, since both end the start without finishing it.
@Suite("first start, interrupted")
struct FirstStartCrashTests {
    @Test(arguments: StoreKind.allCases)
    func creatingSeveralSetsIsAllOrNothing(kind: StoreKind) throws {
        try withTemporaryDirectory { directory in
            let store = try kind.make(in: directory)
            func creation(_ name: String, _ step: Int) -> SetCreation {
                SetCreation(
                    name: name, change: .init(items: [.flag("a"): body(name)]), digest: digest(1),
                    audit: audit("set.seed", step, subject: name))
            }
            let error = #expect(throws: StoreError.self) {
                try store.createSets([creation("demo", 1), creation("web", 1), creation("demo", 1)])
            }
            #expect(error?.isAlreadyExists == true)
            #expect(try store.sets().isEmpty)
            #expect(try store.auditLog.records(set: nil, limit: 10).isEmpty)
            #expect(try store.createSets([creation("demo", 2), creation("web", 2)]).map(\.version) == [1, 1])
            #expect(throws: StoreError.self) { try store.createSets([creation("api", 3), creation("web", 3)]) }
            #expect(try store.sets().map(\.name) == ["demo", "web"])
            #expect(try store.snapshot(set: "web", version: nil).items == [.flag("a"): body("web")])
        }
    }

    @Test func aSeedImportThatStopsHalfwayLeavesNothingAndTheNextStartSeedsAll() throws {
        try withTemporaryDirectory { directory in
            let seeds = directory.appendingPathComponent("flagsets")
            try FileManager.default.createDirectory(at: seeds, withIntermediateDirectories: true)
            try Data(#"{"schema":1,"set":"alpha","flags":{}}"#.utf8).write(to: seeds.appendingPathComponent("a.json"))
            // A second file for the same set makes the import fail after "alpha" from a.json: before the import
            // was one transaction, "alpha" stayed, and as the store was no longer empty no later start seeded again.
            let clash = seeds.appendingPathComponent("b.json")
            try Data(#"{"schema":1,"set":"alpha","flags":{}}"#.utf8).write(to: clash)
            try Data(#"{"schema":1,"set":"gamma","flags":{}}"#.utf8).write(to: seeds.appendingPathComponent("c.json"))
            let configuration = ServerConfiguration.test(in: directory, seeds: seeds)
            let clock = TestClock()
            let error = #expect(throws: ConfigurationError.self) {
                try ServerBootstrap.quiet(configuration, adminToken: environmentAdminToken, clock: clock)
            }
            #expect(error?.message.contains("flag set \"alpha\" already exists") == true)
            let store = try SQLiteFlagStore(path: configuration.databasePath)
            #expect(try store.sets().isEmpty)
            try FileManager.default.removeItem(at: clash)
            let next = try ServerBootstrap.quiet(configuration, adminToken: environmentAdminToken, clock: clock)
            #expect(next.seeded == ["alpha", "gamma"])
            #expect(try next.app.service.audit(nil, limit: 10).map(\.action) == ["set.seed", "set.seed"])
        }
    }

    @Test func theFirstAdminTokenIsStoredOnlyOnceItsFileIsWritten() throws {
        try withTemporaryDirectory { directory in
            let configuration = ServerConfiguration.test(in: directory)
            let clock = TestClock()
            _ = try ServerBootstrap.quiet(configuration, adminToken: environmentAdminToken, clock: clock)
            let store = try SQLiteFlagStore(path: configuration.databasePath)
            let tokens = try TokenAuthority(tokens: store.tokens, clock: clock.clock, environmentToken: nil)
            // The token file cannot be written: before, the token's hash was already stored, so every later start
            // saw an admin token and made none, while no one knew it.
            let unwritable = directory.appendingPathComponent("missing/admin-token")
            #expect(throws: ServiceError.self) {
                try tokens.bootstrapAdminToken(file: unwritable, environmentTokenSet: false)
            }
            #expect(!tokens.hasStoredAdminToken)
            #expect(try store.tokens.all().isEmpty)
            let next = try ServerBootstrap.quiet(configuration, clock: clock)
            let file = try #require(next.adminTokenFile)
            let token = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .newlines)
            #expect(try next.app.tokens.authenticate("Bearer \(token)").name == "admin")
        }
    }
}
