#if canImport(CSQLite)
    import CSQLite
#else
    import SQLite3
#endif

/// An open SQLite connection, lent to the closures of `SQLiteDatabase.read` and `write`.
///
/// Do not keep it beyond the closure: the database's serial access is what makes using it safe. Statements are
/// prepared once per SQL text and cached for the connection's lifetime.
/// ```swift
/// let names = try database.read { db in
///     try db.query("SELECT name FROM flag_set ORDER BY name") { row in try row.text(0) }
/// }
/// ```
public final class SQLiteConnection {
    let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        // Finalize every statement before closing; close_v2 would otherwise keep a zombie connection alive.
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one statement with `arguments` bound to its `?` parameters; any rows it yields are skipped.
    public func execute(_ sql: String, _ arguments: [SQLiteValue] = []) throws {
        try withStatement(sql, arguments) { statement in
            while try statement.step() {}
        }
    }

    /// Runs several `;`-separated statements without arguments (schema scripts), without caching them.
    public func executeScript(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(extendedResultCode: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// Runs a query and maps each row with `transform`, in the order SQLite returns them.
    public func query<T>(
        _ sql: String,
        _ arguments: [SQLiteValue] = [],
        _ transform: (SQLiteRow) throws -> T
    ) throws -> [T] {
        try withStatement(sql, arguments) { statement in
            var results: [T] = []
            while try statement.step() {
                results.append(try transform(SQLiteRow(statement: statement)))
            }
            return results
        }
    }

    /// Runs a query and maps its first row with `transform`; `nil` when there is no row.
    public func queryFirst<T>(
        _ sql: String,
        _ arguments: [SQLiteValue] = [],
        _ transform: (SQLiteRow) throws -> T
    ) throws -> T? {
        try withStatement(sql, arguments) { statement in
            try statement.step() ? try transform(SQLiteRow(statement: statement)) : nil
        }
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The number of rows changed by INSERT, UPDATE and DELETE (triggers included) since the connection opened.
    public var totalChanges: Int { Int(sqlite3_total_changes64(handle)) }

    /// The rowid of the last row inserted.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The number of prepared statements kept for reuse.
    public var cachedStatementCount: Int { statements.count }

    /// Runs `body` with a ready statement for `sql`: the cached one, or a fresh one when the cached one is busy
    /// (a query nested in another query's row closure with the same SQL). The statement is reset afterwards so that
    /// it holds no lock and keeps no copy of the arguments.
    private func withStatement<T>(
        _ sql: String,
        _ arguments: [SQLiteValue],
        _ body: (SQLiteStatement) throws -> T
    ) throws -> T {
        let statement: SQLiteStatement
        if let cached = statements[sql], !cached.isInUse {
            statement = cached
        } else if statements[sql] == nil {
            statement = try SQLiteStatement(connection: handle, sql: sql, persistent: true)
            statements[sql] = statement
        } else {
            statement = try SQLiteStatement(connection: handle, sql: sql, persistent: false)
        }
        statement.isInUse = true
        defer {
            statement.reset()
            statement.isInUse = false
        }
        try statement.bind(arguments)
        return try body(statement)
    }
}

@available(*, unavailable, message: "use a connection only inside the read or write closure it is passed to")
extension SQLiteConnection: Sendable {}
