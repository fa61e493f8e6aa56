import Foundation

#if canImport(CSQLite)
    import CSQLite
#else
    import SQLite3
#endif

/// One SQLite connection behind a lock: the only way in is `read { }` or `write { }`, one caller at a time.
///
/// Opens a file, or an in-memory database with `":memory:"`. Writes are transactions that roll back when the
/// closure throws. Calling `read` or `write` from inside another's closure throws instead of deadlocking: use the
/// connection the outer closure was given.
/// ```swift
/// let database = try SQLiteDatabase(path: "/var/lib/flags/flags.sqlite", configuration: .server)
/// try database.write { db in try db.execute("INSERT INTO note (text) VALUES (?)", ["hello"]) }
/// ```
public final class SQLiteDatabase: @unchecked Sendable {
    // @unchecked Sendable is safe: `connection` and `isAccessing` are read and written only while `lock` is held,
    // so exactly one thread at a time touches the SQLite handle and its statements. That is also why the handle is
    // opened with SQLITE_OPEN_NOMUTEX: SQLite's own mutex would only repeat this lock. `path` and `configuration`
    // are immutable.
    // Recursive, not a `Locked`: a read or write called from inside another on the same thread must reach the
    // `isAccessing` check and throw `misuse`, not deadlock on a lock its own thread holds.
    private let lock = NSRecursiveLock()
    private var connection: SQLiteConnection?
    private var isAccessing = false

    /// The file path, or `":memory:"`.
    public let path: String
    /// The settings the database was opened with.
    public let configuration: Configuration

    /// Whether this database lives in memory and vanishes when closed.
    public var isInMemory: Bool { path == ":memory:" }

    /// Opens (creating if needed) the database at `path`, or an in-memory one for `":memory:"`.
    public init(path: String, configuration: Configuration = .server) throws {
        self.path = path
        self.configuration = configuration
        let connection = try Self.open(path: path, readOnly: configuration.readOnly)
        try Self.configure(connection, configuration, inMemory: path == ":memory:")
        self.connection = connection
    }

    /// A new, empty in-memory database.
    public static func inMemory(configuration: Configuration = .server) throws -> SQLiteDatabase {
        try SQLiteDatabase(path: ":memory:", configuration: configuration)
    }

    /// Runs `body` in a read-only transaction: it sees one consistent state, and any write in it fails.
    public func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try access { connection in
            try connection.execute("PRAGMA query_only = 1")
            let result = Result { () throws -> T in
                try connection.execute("BEGIN DEFERRED")
                return try inTransaction(connection, body)
            }
            // Must run whatever `body` did; should it fail, later writes fail loudly on the read-only connection.
            try connection.execute("PRAGMA query_only = 0")
            return try result.get()
        }
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE` … `COMMIT`) and returns after the commit; rolls back
    /// and rethrows when `body` throws.
    public func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try access { connection in
            // IMMEDIATE takes the write lock now, so the transaction cannot fail later on a lock upgrade.
            try connection.execute("BEGIN IMMEDIATE")
            return try inTransaction(connection, body)
        }
    }

    /// Runs `body` outside any transaction, for the statements that refuse one (`VACUUM`, some pragmas).
    public func writeWithoutTransaction<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try access(body)
    }

    /// Closes the connection; every later `read` or `write` throws. Closing twice does nothing.
    public func close() throws {
        lock.lock()
        defer { lock.unlock() }
        guard !isAccessing else {
            throw SQLiteError.misuse("close called inside a read or write of the database at \(path)")
        }
        connection = nil
    }

    /// Serializes access to the connection and refuses nested access from inside a closure.
    private func access<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        guard !isAccessing else {
            throw SQLiteError.misuse("read or write called inside another read or write; use the connection given")
        }
        guard let connection else {
            throw SQLiteError.misuse("the database at \(path) is closed")
        }
        isAccessing = true
        defer { isAccessing = false }
        return try body(connection)
    }

    /// Runs `body` in the transaction just begun: COMMIT on success, ROLLBACK on error.
    private func inTransaction<T>(_ connection: SQLiteConnection, _ body: (SQLiteConnection) throws -> T) throws -> T {
        let result: T
        do {
            result = try body(connection)
            guard connection.isInTransaction else {
                throw SQLiteError.misuse("the closure ended the transaction itself")
            }
            try connection.execute("COMMIT")
        } catch {
            // Some errors (SQLITE_FULL, SQLITE_IOERR, …) end the transaction by themselves; roll back only if open.
            if connection.isInTransaction {
                do {
                    try connection.execute("ROLLBACK")
                } catch let rollbackError as SQLiteError {
                    throw SQLiteError(
                        extendedResultCode: rollbackError.extendedResultCode,
                        message: "rollback failed (\(rollbackError.message)) after: \(error)",
                        sql: rollbackError.sql
                    )
                }
            }
            throw error
        }
        return result
    }

    private static func open(path: String, readOnly: Bool) throws -> SQLiteConnection {
        var handle: OpaquePointer?
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        var name = path
        if readOnly && path != ":memory:" {
            // `readonly_shm` opens the `-shm` for reading too: without it SQLite opens it for writing, creates it and
            // the `-wal` when missing, and may rebuild the WAL index under the WAL's write lock.
            flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX
            name = "file:\(uriEscaped(path))?readonly_shm=1"
        }
        let code = sqlite3_open_v2(name, &handle, flags, nil)
        guard let handle else {
            throw SQLiteError(extendedResultCode: SQLITE_NOMEM, message: "no memory to open the database at \(path)")
        }
        // The connection object closes the handle when released, also when opening failed.
        let connection = SQLiteConnection(handle: handle)
        guard code == SQLITE_OK else {
            let error = SQLiteError.last(from: handle, code: code, sql: nil)
            throw SQLiteError(
                extendedResultCode: error.extendedResultCode,
                message: "cannot open the database at \(path): \(error.message)"
            )
        }
        sqlite3_extended_result_codes(handle, 1)
        return connection
    }

    /// `path` as the path of a `file:` URI: the characters that would end or escape it are percent-encoded.
    private static func uriEscaped(_ path: String) -> String {
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    private static func configure(
        _ connection: SQLiteConnection,
        _ configuration: Configuration,
        inMemory: Bool
    ) throws {
        sqlite3_busy_timeout(connection.handle, configuration.busyTimeoutMilliseconds)
        if configuration.persistentWAL && !inMemory {
            var on: Int32 = 1
            sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
        }
        if configuration.readOnly {
            // Setting the journal mode or the sync level would write; reads need neither.
            try connection.execute("PRAGMA foreign_keys = \(configuration.foreignKeys ? "ON" : "OFF")")
            return
        }
        if !inMemory {
            let mode = try connection.queryFirst("PRAGMA journal_mode = \(configuration.journalMode.rawValue)") {
                try $0.text(0)
            }
            guard mode?.lowercased() == configuration.journalMode.rawValue else {
                throw SQLiteError(
                    extendedResultCode: SQLITE_CANTOPEN,
                    message: "journal_mode \(configuration.journalMode.rawValue) refused (got \(mode ?? "nothing"))"
                )
            }
        }
        if configuration.persistentWAL && !inMemory {
            // The log kept is emptied at the last close: a stale one would be replayed over the file at the next open.
            try connection.execute("PRAGMA journal_size_limit = 0")
        }
        try connection.execute("PRAGMA synchronous = \(configuration.synchronous.rawValue)")
        try connection.execute("PRAGMA foreign_keys = \(configuration.foreignKeys ? "ON" : "OFF")")
    }
}
