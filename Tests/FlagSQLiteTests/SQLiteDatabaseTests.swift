import FlagSQLite
import FlagTestBasics
import Foundation
import Testing

@Suite("SQLiteDatabase")
struct SQLiteDatabaseTests {
    @Test func serverConfigurationIsWALWithFullSync() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db.sqlite").path
            let database = try SQLiteDatabase(path: path, configuration: .server)
            let (mode, sync, foreignKeys) = try database.read { db in
                (
                    try db.queryFirst("PRAGMA journal_mode") { try $0.text(0) },
                    try db.queryFirst("PRAGMA synchronous") { try $0.int(0) },
                    try db.queryFirst("PRAGMA foreign_keys") { try $0.int(0) }
                )
            }
            #expect(mode == "wal")
            #expect(sync == 2)  // FULL
            #expect(foreignKeys == 1)
        }
    }

    @Test func clientConfigurationIsWALWithNormalSync() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db.sqlite").path
            let database = try SQLiteDatabase(path: path, configuration: .client)
            #expect(try database.read { try $0.queryFirst("PRAGMA journal_mode") { try $0.text(0) } } == "wal")
            #expect(try database.read { try $0.queryFirst("PRAGMA synchronous") { try $0.int(0) } } == 1)  // NORMAL
        }
    }

    @Test func everyStorageClassRoundTrips() throws {
        let database = try SQLiteDatabase.inMemory()
        let values: [SQLiteValue] = [
            nil, .integer(.max), .integer(.min), 0.1, "", "héllo 😀\u{0}tail", .blob([]), .blob([0, 255, 0, 7]),
        ]
        try database.write { db in
            try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
            for value in values {
                try db.execute("INSERT INTO t (v) VALUES (?)", [value])
            }
        }
        let stored = try database.read { db in try db.query("SELECT v FROM t ORDER BY id") { try $0.value(0) } }
        #expect(stored == values)
        // An empty text or blob is not NULL.
        let nulls = try database.read { db in try db.query("SELECT v IS NULL FROM t ORDER BY id") { try $0.int(0) } }
        #expect(nulls == [1, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test func typedGettersRefuseTheWrongType() throws {
        let database = try SQLiteDatabase.inMemory()
        try database.read { db in
            try db.queryFirst("SELECT NULL, 'x', 42, 1.5, x'00ff'") { row throws in
                #expect(try row.optionalInt(0) == nil)
                #expect(try row.optionalText(1) == "x")
                #expect(try row.int(2) == 42)
                #expect(try row.double(2) == 42)
                #expect(try row.double(3) == 1.5)
                #expect(try row.blob(4) == [0, 255])
                #expect(try row.columnName(1) == "'x'")
                let nullAsInt = #expect(throws: SQLiteError.self) { try row.int(0) }
                #expect(nullAsInt?.message.contains("expected an integer, found NULL") == true)
                #expect(throws: SQLiteError.self) { try row.blob(1) }
                #expect(throws: SQLiteError.self) { try row.text(2) }
                let missing = #expect(throws: SQLiteError.self) { try row.value(5) }
                #expect(missing?.message == "column 5 does not exist; the row has 5 columns")
            }
        }
    }

    @Test func errorsCarryCodesAndSQLButNeverArguments() throws {
        let database = try SQLiteDatabase.inMemory()
        try database.write { db in try db.execute("CREATE TABLE token (hash TEXT PRIMARY KEY)") }
        let insert = "INSERT INTO token (hash) VALUES (?)"
        try database.write { db in try db.execute(insert, ["secret-token-hash"]) }
        let error = #expect(throws: SQLiteError.self) {
            try database.write { db in try db.execute(insert, ["secret-token-hash"]) }
        }
        #expect(error?.resultCode == 19)  // SQLITE_CONSTRAINT
        #expect(error?.extendedResultCode == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
        #expect(error?.isConstraintViolation == true)
        #expect(error?.sql == insert)
        #expect(error.map { "\($0)".contains("secret-token-hash") } == false)

        let arity = #expect(throws: SQLiteError.self) { try database.read { db in try db.execute("SELECT ?, ?", [1]) } }
        #expect(arity?.resultCode == 25)  // SQLITE_RANGE
        #expect(arity?.message == "the statement takes 2 arguments, 1 were given")

        let twoStatements = #expect(throws: SQLiteError.self) {
            try database.write { db in try db.execute("DELETE FROM token; DROP TABLE token") }
        }
        #expect(twoStatements?.resultCode == 21)  // SQLITE_MISUSE
        #expect(try database.read { db in try db.queryFirst("SELECT count(*) FROM token") { try $0.int(0) } } == 1)
    }

    @Test func writeRollsBackWhenTheClosureThrows() throws {
        let database = try SQLiteDatabase.inMemory()
        try database.write { db in try db.execute("CREATE TABLE t (v INTEGER UNIQUE)") }
        #expect(throws: PlannedFailure()) {
            try database.write { db in
                try db.execute("INSERT INTO t (v) VALUES (1)")
                throw PlannedFailure()
            }
        }
        // A statement failing half-way also undoes what the transaction did before it.
        #expect(throws: SQLiteError.self) {
            try database.write { db in
                try db.execute("INSERT INTO t (v) VALUES (2)")
                try db.execute("INSERT INTO t (v) VALUES (2)")
            }
        }
        #expect(try database.read { db in try db.query("SELECT v FROM t") { try $0.int(0) } } == [])
        try database.write { db in try db.execute("INSERT INTO t (v) VALUES (3)") }
        #expect(try database.read { db in try db.query("SELECT v FROM t") { try $0.int(0) } } == [3])
    }

    @Test func readCannotWriteAndLeavesTheConnectionWritable() throws {
        let database = try SQLiteDatabase.inMemory()
        try database.write { db in try db.execute("CREATE TABLE t (v INTEGER)") }
        let error = #expect(throws: SQLiteError.self) {
            try database.read { db in try db.execute("INSERT INTO t (v) VALUES (1)") }
        }
        #expect(error?.resultCode == 8)  // SQLITE_READONLY
        try database.write { db in try db.execute("INSERT INTO t (v) VALUES (2)") }
        #expect(try database.read { db in try db.query("SELECT v FROM t") { try $0.int(0) } } == [2])
    }

    @Test func nestedAccessThrowsInsteadOfDeadlocking() throws {
        let database = try SQLiteDatabase.inMemory()
        let error = #expect(throws: SQLiteError.self) {
            try database.write { _ in try database.read { _ in 1 } }
        }
        #expect(error?.resultCode == 21)  // SQLITE_MISUSE
        #expect(try database.read { db in try db.queryFirst("SELECT 7") { try $0.int(0) } } == 7)
    }

    @Test func statementsArePreparedOncePerSQLText() throws {
        let database = try SQLiteDatabase.inMemory()
        try database.write { db in
            try db.execute("CREATE TABLE t (v INTEGER)")
            let before = db.cachedStatementCount
            for value in 1...10 {
                try db.execute("INSERT INTO t (v) VALUES (?)", [.init(value)])
            }
            #expect(db.cachedStatementCount == before + 1)
            // Rebinding a cached statement returns the new argument's rows, not the old ones.
            let select = "SELECT v FROM t WHERE v > ? ORDER BY v"
            #expect(try db.query(select, [8]) { try $0.int(0) } == [9, 10])
            #expect(try db.query(select, [9]) { try $0.int(0) } == [10])
            #expect(db.cachedStatementCount == before + 2)
            // The same SQL nested inside its own row loop gets a statement of its own.
            let nested = try db.query(select, [8]) { row in
                try db.query(select, [.integer(try row.int64(0))]) { try $0.int(0) }
            }
            #expect(nested == [[10], []])
            #expect(db.cachedStatementCount == before + 2)
        }
    }

    @Test func concurrentWritersAreSerialized() throws {
        let database = try SQLiteDatabase.inMemory()
        try database.write { db in
            try db.executeScript("CREATE TABLE counter (n INTEGER NOT NULL); INSERT INTO counter VALUES (0)")
        }
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<50 {
                do {
                    try database.write { db in try db.execute("UPDATE counter SET n = n + 1") }
                } catch {
                    Issue.record(error)
                }
            }
        }
        #expect(try database.read { db in try db.queryFirst("SELECT n FROM counter") { try $0.int(0) } } == 400)
    }

    @Test func aFileKeepsItsDataAcrossReopening() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db.sqlite").path
            do {
                let database = try SQLiteDatabase(path: path)
                try database.write { db in
                    try db.execute("CREATE TABLE t (v TEXT)")
                    try db.execute("INSERT INTO t (v) VALUES ('kept')")
                }
                try database.close()
                let error = #expect(throws: SQLiteError.self) { try database.read { _ in 0 } }
                #expect(error?.message == "the database at \(path) is closed")
            }
            let reopened = try SQLiteDatabase(path: path)
            #expect(try reopened.read { db in try db.query("SELECT v FROM t") { try $0.text(0) } } == ["kept"])
        }
    }

    @Test func anUnopenablePathFailsWithTheReason() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("missing/db.sqlite").path
            let error = #expect(throws: SQLiteError.self) { try SQLiteDatabase(path: path) }
            #expect(error?.resultCode == 14)  // SQLITE_CANTOPEN
            #expect(error?.message.hasPrefix("cannot open the database at \(path)") == true)
        }
    }
}

/// An error a test throws on purpose from inside a transaction.
struct PlannedFailure: Error, Equatable {}
