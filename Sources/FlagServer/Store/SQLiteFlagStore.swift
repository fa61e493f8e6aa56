import FlagSQLite
import Foundation

/// The `FlagStore` on one SQLite file, for a single server: WAL and `synchronous=FULL`, so that a write is on disk
/// when the call returns.
///
/// ```swift
/// let store = try SQLiteFlagStore(path: dataDirectory.appendingPathComponent("flags.sqlite").path)
/// ```
package struct SQLiteFlagStore: FlagStore {
    let database: SQLiteDatabase

    /// Opens (creating if needed) the store at `path`, checks the file's integrity, and brings its schema up to date.
    ///
    /// A damaged file throws a `StoreError` that `isCorrupt` and says how to restore it.
    package init(path: String) throws {
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: path, configuration: .server)
        } catch let error as SQLiteError where Self.isDamage(error) {
            throw Self.damaged(path: path, problems: [error.message], underlying: error)
        } catch {
            throw StoreError.underlying(error, while: "opening \(path)")
        }
        try self.init(database: database)
    }

    /// A store on an open database: checks its integrity and brings its schema up to date.
    ///
    /// Use `SQLiteDatabase.Configuration.server` so that an acknowledged write survives a power loss.
    package init(database: SQLiteDatabase) throws {
        self.database = database
        do {
            try Self.checkCapabilities(of: database)
            let problems = try database.integrityCheck()
            guard problems.isEmpty else {
                throw Self.damaged(path: database.path, problems: problems, underlying: nil)
            }
            try Self.migrator.migrate(database)
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError where Self.isDamage(error) {
            throw Self.damaged(path: database.path, problems: [error.message], underlying: error)
        } catch {
            throw StoreError.underlying(error, while: "opening \(database.path)")
        }
    }

    /// A store in memory, empty, gone when released: for tests and throwaway servers.
    package static func inMemory() throws -> SQLiteFlagStore {
        do {
            return try SQLiteFlagStore(database: SQLiteDatabase.inMemory())
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.underlying(error, while: "opening an in-memory store")
        }
    }

    /// Runs `body` in a read transaction, translating storage errors into `StoreError`s.
    package func reading<T>(_ action: String, _ body: (any SQLExecutor) throws -> T) throws -> T {
        try translatingErrors(action) { try database.read { try body($0) } }
    }

    /// Runs `body` in a write transaction, translating storage errors into `StoreError`s.
    package func writing<T>(_ action: String, _ body: (any SQLExecutor) throws -> T) throws -> T {
        try translatingErrors(action) { try database.write { try body($0) } }
    }

    private func translatingErrors<T>(_ action: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError where Self.isDamage(error) {
            throw Self.damaged(path: database.path, problems: [error.message], underlying: error)
        } catch {
            throw StoreError.underlying(error, while: action)
        }
    }

    /// The oldest SQLite whose SQL the store's statements use: `RETURNING` (3.35), upserts, and the JSON functions
    /// (`json_each`, built in from 3.38 and compiled into every Debian and Ubuntu build before that).
    static let oldestVersion = (major: 3, minor: 35)

    /// Throws, naming what to install, when the linked SQLite lacks what `oldestVersion` says the store uses.
    private static func checkCapabilities(of database: SQLiteDatabase) throws {
        let (version, hasJSON) = try database.read { db in
            let version = try db.queryFirst("SELECT sqlite_version()") { try $0.text(0) } ?? "unknown"
            let hasJSON: Bool
            do {
                hasJSON = try db.queryFirst("SELECT count(*) FROM json_each('[1]')") { try $0.int(0) } == 1
            } catch let error as SQLiteError where error.message.contains("json_each") {
                hasJSON = false  // a build without the JSON functions: "no such table: json_each"
            }
            return (version, hasJSON)
        }
        if let problem = capabilityProblem(version: version, hasJSON: hasJSON) {
            throw StoreError.underlying(
                SQLiteError(extendedResultCode: 1, message: problem), while: "opening \(database.path)")
        }
    }

    /// What the store misses in an SQLite of `version`, with or without the JSON functions; `nil` when nothing.
    static func capabilityProblem(version: String, hasJSON: Bool) -> String? {
        let parts = version.split(separator: ".").compactMap { Int($0) }
        let recent = parts.count >= 2 && (parts[0], parts[1]) >= oldestVersion
        guard !recent || !hasJSON else { return nil }
        let found = [recent ? nil : "SQLite \(version)", hasJSON ? nil : "no json_each"].compactMap { $0 }
        return "the server's store needs SQLite \(oldestVersion.major).\(oldestVersion.minor) or later with the JSON "
            + "functions, and this process has \(found.joined(separator: " and ")); install a newer libsqlite3 "
            + "(Debian 12 has 3.40)"
    }

    /// Corruption, or a row the schema forbids: the file was damaged or written by something else.
    private static func isDamage(_ error: SQLiteError) -> Bool {
        error.isCorruption || error.resultCode == 20  // SQLITE_MISMATCH
    }

    private static func damaged(path: String, problems: [String], underlying: (any Error)?) -> StoreError {
        let shown = problems.prefix(5).joined(separator: "; ") + (problems.count > 5 ? "; …" : "")
        return StoreError.corrupt(
            "the flag store \(path) is damaged (\(shown)). To restore it: stop the server; move \(path) and its "
                + "-wal and -shm files aside (keep them for diagnosis); then copy the last backup to \(path), or start "
                + "the server without the file so that it imports the seed flag sets again (config/flagsets/*.json; "
                + "the version history is then lost).",
            underlying: underlying
        )
    }
}
