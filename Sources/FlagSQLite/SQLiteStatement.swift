#if canImport(CSQLite)
    import CSQLite
#else
    import SQLite3
#endif

/// One prepared statement of a connection, finalized when it is released.
///
/// Used only by `SQLiteConnection`, inside the database's serial access, so it needs no synchronization.
final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    private let connection: OpaquePointer
    /// Set while a query walks this statement's rows, so that a nested query with the same SQL gets its own.
    var isInUse = false

    init(connection: OpaquePointer, sql: String, persistent: Bool) throws {
        var statement: OpaquePointer?
        var remainder = ""
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let code = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(connection, text, -1, flags, &statement, &tail)
            if let tail {
                remainder = String(cString: tail)
            }
            return code
        }
        guard code == SQLITE_OK else {
            throw SQLiteError.last(from: connection, code: code, sql: sql)
        }
        guard let statement else {
            throw SQLiteError.misuse("the SQL text holds no statement", sql: sql)
        }
        // A second statement would be silently ignored by sqlite3_prepare; refuse it instead.
        guard remainder.allSatisfy({ $0.isWhitespace || $0 == ";" }) else {
            sqlite3_finalize(statement)
            throw SQLiteError.misuse("the SQL text holds more than one statement; use executeScript", sql: sql)
        }
        self.handle = statement
        self.sql = sql
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds `arguments` to the statement's parameters, in order; their number must match.
    func bind(_ arguments: [SQLiteValue]) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.count == expected else {
            throw SQLiteError(
                extendedResultCode: SQLITE_RANGE,
                message: "the statement takes \(expected) arguments, \(arguments.count) were given",
                sql: sql
            )
        }
        // SQLITE_TRANSIENT: SQLite copies the bytes, because Swift's buffers live only for the closure's duration.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch argument {
            case .null:
                code = sqlite3_bind_null(handle, index)
            case .integer(let value):
                code = sqlite3_bind_int64(handle, index, value)
            case .real(let value):
                code = sqlite3_bind_double(handle, index, value)
            case .text(let value):
                var text = value
                code = text.withUTF8 { bytes in
                    // An empty buffer may have no address, and a NULL pointer would bind NULL instead of "".
                    guard let base = bytes.baseAddress, !bytes.isEmpty else {
                        return sqlite3_bind_text(handle, index, "", 0, transient)
                    }
                    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        sqlite3_bind_text64(handle, index, $0, UInt64(bytes.count), transient, UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let value):
                code = value.withUnsafeBytes { bytes in
                    guard let base = bytes.baseAddress, !bytes.isEmpty else {
                        return sqlite3_bind_zeroblob(handle, index, 0)
                    }
                    return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), transient)
                }
            }
            guard code == SQLITE_OK else {
                throw SQLiteError.last(from: connection, code: code, sql: sql)
            }
        }
    }

    /// Advances to the next row: `true` when a row is ready, `false` when the statement is done.
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW:
            return true
        case SQLITE_DONE:
            return false
        default:
            throw SQLiteError.last(from: connection, code: code, sql: sql)
        }
    }

    /// Makes the statement ready to run again and releases what it holds (read locks, bound copies).
    func reset() {
        // sqlite3_reset repeats the last step's error, which `step` has already reported.
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }
}
