import FlagAPI
import FlagSQLite
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

@Suite("SQLiteFlagStore")
struct SQLiteFlagStoreTests {
    private static func path(in directory: URL) -> String {
        directory.appendingPathComponent("flags.sqlite").path
    }

    /// A set of `count` flags of about 200 bytes each, created in one version.
    private static func largeChange(_ count: Int) -> VersionChange {
        var items: [ItemKey: [UInt8]?] = [:]
        for index in 0..<count {
            items[.flag("flag-\(index)")] =
                body(#"{"type":"bool","default":false,"description":"\#(index)"}"#)
                + Array(repeating: UInt8(ascii: " "), count: 150)
        }
        return VersionChange(items: items)
    }

    private static func rowCounts(_ database: SQLiteDatabase) throws -> [String: Int] {
        try database.read { db in
            var counts: [String: Int] = [:]
            for table in ["flag_set", "set_version", "item_change", "audit", "token"] {
                counts[table] = try db.queryFirst("SELECT count(*) FROM \(table)") { try $0.int(0) }
            }
            return counts
        }
    }

    /// The store's SQL needs `RETURNING` and `json_each`: an older SQLite is refused at open, naming what to install.
    @Test func anSQLiteTooOldOrWithoutJSONIsNamed() throws {
        #expect(SQLiteFlagStore.capabilityProblem(version: "3.40.1", hasJSON: true) == nil)
        #expect(SQLiteFlagStore.capabilityProblem(version: "3.35.0", hasJSON: true) == nil)
        #expect(SQLiteFlagStore.capabilityProblem(version: "4.0.0", hasJSON: true) == nil)
        let old = try #require(SQLiteFlagStore.capabilityProblem(version: "3.34.1", hasJSON: true))
        #expect(old.contains("needs SQLite 3.35 or later") && old.contains("has SQLite 3.34.1;"))
        let bare = try #require(SQLiteFlagStore.capabilityProblem(version: "3.40.1", hasJSON: false))
        #expect(bare.contains("has no json_each;"))
        #expect(
            SQLiteFlagStore.capabilityProblem(version: "garbage", hasJSON: true)?.contains("SQLite garbage") == true)
        // This machine's SQLite has what the store needs, or no store test could run.
        #expect(try SQLiteFlagStore.inMemory().sets().isEmpty)
    }

    /// The concerns' SQL numbers parameters as PostgreSQL does; SQLite gets the same numbers in its own spelling.
    @Test func parametersAreRenumberedOutsideQuotesOnly() {
        #expect(sqliteParameters("SELECT $1, $12 WHERE a = $2") == "SELECT ?1, ?12 WHERE a = ?2")
        #expect(sqliteParameters("SELECT '$1', \"$2\", 'it''s $3', $4") == "SELECT '$1', \"$2\", 'it''s $3', ?4")
        #expect(sqliteParameters("SELECT a$, $x, 'ü' || $1") == "SELECT a$, $x, 'ü' || ?1")
        #expect(sqliteParameters("SELECT 1") == "SELECT 1")
    }

    @Test func everythingSurvivesReopening() throws {
        try withTemporaryDirectory { directory in
            let path = Self.path(in: directory)
            var snapshots: [Snapshot] = []
            var history: [VersionInfo] = []
            var auditLog: [AuditEntry] = []
            var tokens: [StoredToken] = []
            do {
                let store = try SQLiteFlagStore(path: path)
                try store.createSet(
                    "ios", change: .init(items: [.flag("a"): body("a1")]), digest: digest(1),
                    audit: audit("set.create", 1))
                _ = try store.append(
                    set: "ios", base: 1, change: .init(items: [.flag("b"): body("b1")]),
                    digest: digest(2), audit: audit("flag.create", 2, subject: "b"))
                _ = try store.append(
                    set: "ios", base: 2, change: .init(items: [.flag("a"): nil]), digest: digest(3),
                    audit: audit("flag.delete", 3, subject: "a", reason: "done"))
                try store.tokens.add(
                    StoredToken(
                        name: "ios-app", hash: digest(9), role: .sdk(set: "ios"),
                        createdAt: time(4)), audit: audit("key.create", 4))
                try store.tokens.add(
                    StoredToken(name: "ci", hash: digest(10), role: .admin(.admin, sets: nil), createdAt: time(5)),
                    audit: audit("token.create", 5))
                _ = try store.tokens.revoke(name: "ci", at: time(6), audit: audit("token.revoke", 6))
                snapshots = try (1...3).map { try store.snapshot(set: "ios", version: $0) }
                history = try store.history(set: "ios", subject: nil, limit: 10)
                auditLog = try store.auditLog.records(set: nil, limit: 100)
                tokens = try store.tokens.all()
            }
            let reopened = try SQLiteFlagStore(path: path)
            #expect(try (1...3).map { try reopened.snapshot(set: "ios", version: $0) } == snapshots)
            #expect(try reopened.history(set: "ios", subject: nil, limit: 10) == history)
            #expect(try reopened.auditLog.records(set: nil, limit: 100) == auditLog)
            #expect(auditLog.count == 6)
            #expect(try reopened.tokens.all() == tokens)
            #expect(tokens.map(\.revokedAt) == [nil, time(6)])
            #expect(try reopened.sets() == [StoredSet(name: "ios", version: 3, updatedAt: time(3))])
        }
    }

    @Test func migrationsAreRecordedAndRunOnce() throws {
        try withTemporaryDirectory { directory in
            let path = Self.path(in: directory)
            _ = try SQLiteFlagStore(path: path)
            let database = try SQLiteDatabase(path: path)
            _ = try SQLiteFlagStore(database: database)
            let recorded = try database.read { db in
                try db.query("SELECT version FROM schema_migration") { try $0.int(0) }
            }
            #expect(recorded == [1, 2, 3, 4, 5, 6, 7])
        }
    }

    /// Migration 2 makes every admin token there was an `admin` with no limit to sets, and SDK keys stay keys.
    @Test func tokensOfTheFirstSchemaKeepWhatTheyMayDo() throws {
        try withTemporaryDirectory { directory in
            let path = Self.path(in: directory)
            let database = try SQLiteDatabase(path: path)
            try SQLiteMigrator([SQLiteMigration(version: 1, name: "v1", script: SQLiteFlagStore.schemaV1)])
                .migrate(database)
            try database.write { db in
                try db.execute(
                    "INSERT INTO flag_set (name, current_version, created_at, updated_at) VALUES ('s', 1, 0, 0)")
                try db.execute(
                    "INSERT INTO token (name, hash, role, role_set, created_at) VALUES ('root', x'01', 'admin', NULL, 5)"
                )
                try db.execute(
                    "INSERT INTO token (name, hash, role, role_set, created_at) VALUES ('app', x'02', 'sdk', 's', 6)")
            }
            let store = try SQLiteFlagStore(database: database)
            let tokens = try store.tokens.all()
            #expect(tokens.map(\.role) == [.admin(.admin, sets: nil), .sdk(set: "s")])
            #expect(tokens.allSatisfy { $0.expiresAt == nil && $0.sessionOf == nil && $0.lastUsedAt == nil })
        }
    }

    @Test func aOneItemChangeToALargeSetWritesAHandfulOfRows() throws {
        try withTemporaryDirectory { directory in
            let database = try SQLiteDatabase(path: Self.path(in: directory))
            let store = try SQLiteFlagStore(database: database)
            try store.createSet("big", change: Self.largeChange(1000), digest: digest(1), audit: audit("set.create", 1))
            let before = try Self.rowCounts(database)
            #expect(before == ["flag_set": 1, "set_version": 1, "item_change": 1000, "audit": 1, "token": 0])
            let changesBefore = try database.read { $0.totalChanges }

            _ = try store.append(
                set: "big", base: 1, change: .init(items: [.flag("flag-7"): body("{}")]),
                digest: digest(2), audit: audit("flag.update", 2))

            let after = try Self.rowCounts(database)
            #expect(after == ["flag_set": 1, "set_version": 2, "item_change": 1001, "audit": 2, "token": 0])
            // Rows written by the append: the pointer update, the audit row, the version row, one item row.
            #expect(try database.read { $0.totalChanges } - changesBefore == 4)
            let snapshot = try store.snapshot(set: "big", version: nil)
            #expect(snapshot.items.count == 1000)
            #expect(snapshot.items[.flag("flag-7")] == body("{}"))
            let original = Self.largeChange(1000).items.compactMapValues { $0 }
            #expect(try store.snapshot(set: "big", version: 1).items == original)
        }
    }

    @Test func theSchemaRefusesDuplicateAndMissingVersions() throws {
        let database = try SQLiteDatabase.inMemory()
        let store = try SQLiteFlagStore(database: database)
        try store.createSet("ios", change: .init(), digest: digest(1), audit: audit("set.create", 1))
        let insert = """
            INSERT INTO set_version (set_name, version, created_at, digest, audit_id) VALUES ('ios', ?, 0, x'', 1)
            """
        for version in [1, 3] {
            let error = #expect(throws: SQLiteError.self) {
                try database.write { db in try db.execute(insert, [.init(version)]) }
            }
            #expect(error?.isConstraintViolation == true)
        }
    }

    @Test func aDamagedFileIsRefusedWithRestoreInstructions() throws {
        try withTemporaryDirectory { directory in
            let path = Self.path(in: directory)
            do {
                let database = try SQLiteDatabase(path: path)
                let store = try SQLiteFlagStore(database: database)
                try store.createSet("big", change: Self.largeChange(1000), digest: digest(1), audit: audit("c", 1))
                try database.close()
            }
            let handle = try #require(FileHandle(forUpdatingAtPath: path))
            let size = try handle.seekToEnd()
            try handle.seek(toOffset: size / 2 / 4096 * 4096)
            try handle.write(contentsOf: Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }))
            try handle.close()

            let error = #expect(throws: StoreError.self) { try SQLiteFlagStore(path: path) }
            #expect(error?.isCorrupt == true)
            let message = error?.message ?? ""
            #expect(message.hasPrefix("the flag store \(path) is damaged ("))
            #expect(message.contains("stop the server; move \(path) and its -wal and -shm files aside"))
            #expect(message.contains("copy the last backup to \(path)"))
            #expect(message.contains("imports the seed flag sets again"))
        }
    }

    @Test func aFileThatIsNotADatabaseIsRefusedWithRestoreInstructions() throws {
        try withTemporaryDirectory { directory in
            let path = Self.path(in: directory)
            try Data("not a database, clearly".utf8).write(to: URL(fileURLWithPath: path))
            let error = #expect(throws: StoreError.self) { try SQLiteFlagStore(path: path) }
            #expect(error?.isCorrupt == true)
            #expect(error?.message.contains("stop the server") == true)
        }
    }
}
