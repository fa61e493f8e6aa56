import FlagCore
import FlagSQLite
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// Under `.manual` a version waits across relaunches until `activate()`; under the other policies a launch starts
/// from the newest version stored.
@Suite struct ApplyPolicyRelaunchTests {
    /// v1 serves both flags on; v2 kills `new-checkout` and turns `dark-mode` off.
    static let v1 = Docs.bytes(version: 1, Docs.flag("new-checkout", true), Docs.flag("dark-mode", true))
    static let v2 = ApplyPolicyTests.document(
        2, Docs.flag("new-checkout", true, killed: true), Docs.flag("dark-mode", false))

    /// The cache as a `.manual` client leaves it when v2 arrived while v1 was in use: v2 stored, v1 set aside.
    static func seedWaiting(_ directory: URL) throws {
        try seedCache(directory, Self.v1, version: 1)
        let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
        let v2 = Array(Self.v2.utf8)
        try cache.store(
            set: "ios-prod", document: .init(version: 2, etag: "\"2\"", bytes: v2), keepingActivated: { 1 },
            now: Docs.start)
        cache.close()
    }

    /// Once a version is set aside, newer ones leave it alone while it is in use: it is the one activated.
    @Test func laterArrivalsKeepTheVersionSetAside() throws {
        try withTemporaryDirectory { directory in
            try Self.seedWaiting(directory)
            let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            defer { cache.close() }
            let v3 = Docs.bytes(version: 3, Docs.flag("new-checkout", true))
            try cache.store(
                set: "ios-prod", document: .init(version: 3, etag: nil, bytes: v3), keepingActivated: { 1 },
                now: Docs.start)
            #expect(try cache.activated(set: "ios-prod")?.document.bytes == Self.v1)
            #expect(try cache.stored(set: "ios-prod")?.version == 3)
            // The same version again (a document replacing its patches) sets nothing aside.
            try cache.store(
                set: "ios-prod", document: .init(version: 3, etag: nil, bytes: v3), keepingActivated: { 3 },
                now: Docs.start)
            #expect(try cache.activated(set: "ios-prod")?.version == 1)
        }
    }

    /// `activate()` forgets the copy only when the newest cached is the version activated: when a newer one was
    /// stored meanwhile, the copy stays, and the next arrival replaces a copy of a version no longer in use.
    @Test func activationAndArrivalInEitherOrder() throws {
        try withTemporaryDirectory { directory in
            try Self.seedWaiting(directory)  // v1 aside, v2 cached
            let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            defer { cache.close() }
            let v3 = Docs.bytes(version: 3, Docs.flag("new-checkout", true))
            try cache.store(
                set: "ios-prod", document: .init(version: 3, etag: nil, bytes: v3), keepingActivated: { 1 },
                now: Docs.start)
            // v2 activated while v3 was being stored: v1 stays the version a relaunch starts from.
            try cache.discardActivated(set: "ios-prod", activated: { 2 }, now: Docs.start)
            #expect(try cache.activated(set: "ios-prod")?.version == 1)
            // v3 activated: nothing newer is cached, the copy goes.
            try cache.discardActivated(set: "ios-prod", activated: { 3 }, now: Docs.start)
            #expect(try cache.activated(set: "ios-prod") == nil)

            // A copy left from before an activation whose removal failed: v4 arriving while v3 is in use replaces it.
            try Self.seedWaiting(directory)  // v1 aside again, v2 cached
            let v4 = Docs.bytes(version: 4, Docs.flag("new-checkout", true))
            try cache.store(
                set: "ios-prod", document: .init(version: 4, etag: nil, bytes: v4), keepingActivated: { 2 },
                now: Docs.start)
            #expect(try cache.activated(set: "ios-prod")?.version == 2)
        }
    }

    /// A cache written before the activated version was kept opens, keeps its set, and gains the new tables.
    @Test func aCacheOfTheEarlierSchemaOpens() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent(FlagCache.fileName).path
            let old = try SQLiteDatabase(path: path, configuration: FlagCache.configuration)
            let earlier = FlagCache.migrator.migrations.filter { $0.version <= 3 }
            _ = try SQLiteMigrator(earlier).migrate(old)
            try old.write { db in
                try db.execute(
                    "INSERT INTO flag_set_cache (set_name, version, etag, document, stored_at) VALUES (?, 1, NULL, ?, 0)",
                    [.text("ios-prod"), .blob(Self.v1)])
            }
            try old.close()

            let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            defer { cache.close() }
            #expect(try FlagCache.migrator.appliedVersions(cache.database).contains(4))
            #expect(try cache.stored(set: "ios-prod")?.document.bytes == Self.v1)
            #expect(try cache.activated(set: "ios-prod") == nil)
        }
    }
}
