import FlagSQLite
import FlagTestBasics
import Foundation
import Testing

@Suite("SQLiteMigrator")
struct SQLiteMigratorTests {
    /// Each migration appends a row to `runs`, so the table counts how often migrations ran.
    private static let migrations = [
        SQLiteMigration(version: 1, name: "runs and notes") { db in
            try db.executeScript("CREATE TABLE runs (version INTEGER); CREATE TABLE note (text TEXT)")
            try db.execute("INSERT INTO runs VALUES (1)")
        },
        SQLiteMigration(version: 2, name: "note author") { db in
            try db.execute("ALTER TABLE note ADD COLUMN author TEXT")
            try db.execute("INSERT INTO runs VALUES (2)")
        },
    ]

    @Test func migrationsRunOnceAndAreRecorded() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db.sqlite").path
            let migrator = SQLiteMigrator(Self.migrations)
            do {
                let database = try SQLiteDatabase(path: path)
                #expect(try migrator.appliedVersions(database) == [])
                #expect(try migrator.migrate(database) == [1, 2])
                #expect(try migrator.migrate(database) == [])
            }
            let reopened = try SQLiteDatabase(path: path)
            #expect(try migrator.migrate(reopened) == [])
            let (runs, recorded) = try reopened.read { db in
                (
                    try db.query("SELECT version FROM runs ORDER BY rowid") { try $0.int(0) },
                    try db.query("SELECT version, name FROM schema_migration ORDER BY version") {
                        "\(try $0.int(0)) \(try $0.text(1))"
                    }
                )
            }
            #expect(runs == [1, 2])
            #expect(recorded == ["1 runs and notes", "2 note author"])
        }
    }

    @Test func aNewMigrationAppliesOnTopOfRecordedOnes() throws {
        let database = try SQLiteDatabase.inMemory()
        try SQLiteMigrator(Array(Self.migrations.prefix(1))).migrate(database)
        #expect(try SQLiteMigrator(Self.migrations).migrate(database) == [2])
        try database.write { db in try db.execute("INSERT INTO note (text, author) VALUES ('n', 'a')") }
    }

    @Test func aFailingMigrationRollsBackAndIsNotRecorded() throws {
        let database = try SQLiteDatabase.inMemory()
        let failing = SQLiteMigration(version: 3, name: "fails half-way") { db in
            try db.execute("CREATE TABLE half (v INTEGER)")
            try db.execute("INSERT INTO nowhere VALUES (1)")
        }
        let migrator = SQLiteMigrator(Self.migrations + [failing])
        #expect(throws: SQLiteError.self) { try migrator.migrate(database) }
        #expect(try migrator.appliedVersions(database) == [1, 2])
        let halfExists = try database.read { db in
            try db.queryFirst("SELECT 1 FROM sqlite_schema WHERE name = 'half'") { _ in true }
        }
        #expect(halfExists == nil)
    }

    @Test func aDatabaseFromANewerProgramIsRefused() throws {
        let database = try SQLiteDatabase.inMemory()
        try SQLiteMigrator(Self.migrations).migrate(database)
        let error = #expect(throws: SQLiteError.self) {
            try SQLiteMigrator(Array(Self.migrations.prefix(1))).migrate(database)
        }
        #expect(error?.message.contains("has schema migrations [2] that this program does not know") == true)
    }

    @Test func versionsMustIncrease() throws {
        let database = try SQLiteDatabase.inMemory()
        let error = #expect(throws: SQLiteError.self) {
            try SQLiteMigrator(Self.migrations.reversed()).migrate(database)
        }
        #expect(error?.message == "migration 1 (runs and notes) follows 2 (note author); versions must increase")
        #expect(try SQLiteMigrator(Self.migrations).appliedVersions(database) == [])
    }
}
