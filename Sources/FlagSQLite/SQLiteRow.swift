#if canImport(CSQLite)
    import CSQLite
#else
    import SQLite3
#endif

/// The current row of a query, valid only inside the closure it is passed to.
///
/// Getters check the stored type: a NULL or a text where an integer is expected throws instead of reading 0, so that
/// a damaged or foreign row is reported rather than misread. The `optional…` getters map NULL to `nil`.
public struct SQLiteRow {
    private let statement: SQLiteStatement

    init(statement: SQLiteStatement) {
        self.statement = statement
    }

    /// The number of columns in the row.
    public var columnCount: Int { Int(sqlite3_column_count(statement.handle)) }

    /// The name of the column at `index`, as the query spelled it.
    public func columnName(_ index: Int) throws -> String {
        let column = try checked(index)
        guard let name = sqlite3_column_name(statement.handle, column) else {
            throw SQLiteError(extendedResultCode: SQLITE_NOMEM, message: "no memory for column \(index)'s name")
        }
        return String(cString: name)
    }

    /// Whether the column at `index` holds NULL.
    public func isNull(_ index: Int) throws -> Bool {
        sqlite3_column_type(statement.handle, try checked(index)) == SQLITE_NULL
    }

    /// The column at `index` as whatever SQLite stored.
    public func value(_ index: Int) throws -> SQLiteValue {
        let column = try checked(index)
        switch sqlite3_column_type(statement.handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement.handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement.handle, column))
        case SQLITE_TEXT: return .text(readText(column))
        case SQLITE_BLOB: return .blob(readBlob(column))
        default: return .null
        }
    }

    /// The integer in the column at `index`.
    public func int64(_ index: Int) throws -> Int64 {
        let column = try expect(SQLITE_INTEGER, "an integer", at: index)
        return sqlite3_column_int64(statement.handle, column)
    }

    /// The integer in the column at `index`, which must fit an `Int`.
    public func int(_ index: Int) throws -> Int {
        let value = try int64(index)
        guard let result = Int(exactly: value) else {
            throw mismatch(at: index, "the integer \(value) does not fit an Int")
        }
        return result
    }

    /// The number in the column at `index`; integers are converted.
    public func double(_ index: Int) throws -> Double {
        let column = try checked(index)
        switch sqlite3_column_type(statement.handle, column) {
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_column_double(statement.handle, column)
        default: throw mismatch(at: index, "expected a number, found \(typeName(column))")
        }
    }

    /// The text in the column at `index`.
    public func text(_ index: Int) throws -> String {
        readText(try expect(SQLITE_TEXT, "a text", at: index))
    }

    /// The bytes in the column at `index`.
    public func blob(_ index: Int) throws -> [UInt8] {
        readBlob(try expect(SQLITE_BLOB, "a blob", at: index))
    }

    /// The integer in the column at `index`, or `nil` for NULL.
    public func optionalInt(_ index: Int) throws -> Int? {
        try isNull(index) ? nil : try int(index)
    }

    /// The number in the column at `index`, or `nil` for NULL.
    public func optionalInt64(_ index: Int) throws -> Int64? {
        try isNull(index) ? nil : try int64(index)
    }

    /// The text in the column at `index`, or `nil` for NULL.
    public func optionalText(_ index: Int) throws -> String? {
        try isNull(index) ? nil : try text(index)
    }

    /// The bytes in the column at `index`, or `nil` for NULL.
    public func optionalBlob(_ index: Int) throws -> [UInt8]? {
        try isNull(index) ? nil : try blob(index)
    }

    private func checked(_ index: Int) throws -> Int32 {
        guard index >= 0, index < columnCount else {
            throw SQLiteError(
                extendedResultCode: SQLITE_RANGE,
                message: "column \(index) does not exist; the row has \(columnCount) columns",
                sql: statement.sql
            )
        }
        return Int32(index)
    }

    private func expect(_ type: Int32, _ description: String, at index: Int) throws -> Int32 {
        let column = try checked(index)
        guard sqlite3_column_type(statement.handle, column) == type else {
            throw mismatch(at: index, "expected \(description), found \(typeName(column))")
        }
        return column
    }

    private func mismatch(at index: Int, _ problem: String) -> SQLiteError {
        let name = sqlite3_column_name(statement.handle, Int32(index)).map { String(cString: $0) } ?? "?"
        return SQLiteError(
            extendedResultCode: SQLITE_MISMATCH,
            message: "column \(index) (\(name)): \(problem)",
            sql: statement.sql
        )
    }

    private func typeName(_ column: Int32) -> String {
        switch sqlite3_column_type(statement.handle, column) {
        case SQLITE_INTEGER: return "an integer"
        case SQLITE_FLOAT: return "a real"
        case SQLITE_TEXT: return "a text"
        case SQLITE_BLOB: return "a blob"
        default: return "NULL"
        }
    }

    private func readText(_ column: Int32) -> String {
        // sqlite3_column_text before sqlite3_column_bytes: the byte count is then that of the UTF-8 form.
        guard let text = sqlite3_column_text(statement.handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement.handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    private func readBlob(_ column: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(statement.handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(statement.handle, column))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}

@available(*, unavailable, message: "a row is valid only inside the closure it is passed to")
extension SQLiteRow: Sendable {}
