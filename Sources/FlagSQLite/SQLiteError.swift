#if canImport(CSQLite)
    import CSQLite
#else
    import SQLite3
#endif

/// A failure reported by SQLite or by this wrapper, with the statement that failed but never its arguments.
///
/// Arguments are left out on purpose: they may hold token hashes or users' data, and errors end up in logs.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …): the low 8 bits of `extendedResultCode`.
    public var resultCode: Int32 { extendedResultCode & 0xff }
    /// The extended result code (`SQLITE_CONSTRAINT_PRIMARYKEY`, `SQLITE_IOERR_FSYNC`, …).
    public let extendedResultCode: Int32
    /// What went wrong, in SQLite's words or this wrapper's.
    public let message: String
    /// The SQL text being run when the error happened, if any.
    public let sql: String?

    /// An error with the given code and message.
    public init(extendedResultCode: Int32, message: String, sql: String? = nil) {
        self.extendedResultCode = extendedResultCode
        self.message = message
        self.sql = sql
    }

    /// The database file is damaged or is not a database: restore it, do not retry.
    public var isCorruption: Bool { resultCode == SQLITE_CORRUPT || resultCode == SQLITE_NOTADB }
    /// Another connection held a lock longer than the busy timeout; the operation may succeed if retried.
    public var isBusy: Bool { resultCode == SQLITE_BUSY || resultCode == SQLITE_LOCKED }
    /// A UNIQUE, PRIMARY KEY, NOT NULL, CHECK or FOREIGN KEY constraint (or a trigger) refused a write.
    public var isConstraintViolation: Bool { resultCode == SQLITE_CONSTRAINT }

    public var description: String {
        let codeText = String(cString: sqlite3_errstr(resultCode))
        var text = "SQLite error \(resultCode) (\(codeText); extended code \(extendedResultCode)): \(message)"
        if let sql {
            text += " — while running `\(sql)`"
        }
        return text
    }

    /// The error the connection last reported, attributed to `sql`.
    static func last(from connection: OpaquePointer, code: Int32, sql: String?) -> SQLiteError {
        let extended = sqlite3_extended_errcode(connection)
        // The connection's last error is the one for `code` unless a later call overwrote it; fall back to `code`.
        let useExtended = extended & 0xff == code & 0xff
        let message = String(cString: sqlite3_errmsg(connection))
        return SQLiteError(extendedResultCode: useExtended ? extended : code, message: message, sql: sql)
    }

    /// A misuse of this wrapper (a programming error in the caller), reported as `SQLITE_MISUSE`.
    static func misuse(_ message: String, sql: String? = nil) -> SQLiteError {
        SQLiteError(extendedResultCode: SQLITE_MISUSE, message: message, sql: sql)
    }
}
