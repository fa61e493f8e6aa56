import FlagSQLite
import FlagTestBasics
import Foundation
import Testing

@Suite("SQLite integrity checks")
struct SQLiteIntegrityTests {
    @Test func aSoundDatabaseHasNoProblems() throws {
        try withTemporaryDirectory { directory in
            let database = try SQLiteDatabase(path: try Self.populatedFile(in: directory))
            #expect(try database.integrityCheck() == [])
            #expect(try database.quickCheck() == [])
        }
    }

    @Test func overwrittenPagesAreReported() throws {
        try withTemporaryDirectory { directory in
            let path = try Self.populatedFile(in: directory)
            let handle = try #require(FileHandle(forUpdatingAtPath: path))
            let size = try handle.seekToEnd()
            #expect(size > 40 * 4096)
            // Garbage over a whole page in the middle of the file: a b-tree page, since nothing was ever deleted.
            let pageSize: UInt64 = 4096
            try handle.seek(toOffset: size / 2 / pageSize * pageSize)
            try handle.write(contentsOf: Data((0..<Int(pageSize)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }))
            try handle.close()

            let database = try SQLiteDatabase(path: path)
            let problems = try database.integrityCheck()
            #expect(problems.contains { $0.contains("btreeInitPage() returns error code 11") }, "\(problems)")
            #expect(try !database.quickCheck().isEmpty)
            #expect(try database.integrityCheck(maxProblems: 1).count == 1)
        }
    }

    @Test func aFileThatIsNotADatabaseIsReported() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db.sqlite").path
            try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))
            let error = #expect(throws: SQLiteError.self) { try SQLiteDatabase(path: path) }
            #expect(error?.isCorruption == true)
            #expect(error?.resultCode == 26)  // SQLITE_NOTADB
        }
    }

    /// A database file of a few hundred KiB with a table and an index, checkpointed and closed.
    private static func populatedFile(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("db.sqlite").path
        let database = try SQLiteDatabase(path: path)
        try database.write { db in
            try db.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, body BLOB NOT NULL)")
            try db.execute("CREATE INDEX item_name ON item (name)")
            for id in 0..<2000 {
                try db.execute(
                    "INSERT INTO item (id, name, body) VALUES (?, ?, ?)",
                    [
                        .init(id), .text("item-\(id * 7919 % 2000)"),
                        .blob(Array(repeating: UInt8(id % 256), count: 100)),
                    ]
                )
            }
        }
        try database.close()  // the last connection to close checkpoints the WAL into the file
        return path
    }
}
