import Foundation

/// A value bound to a statement's `$1`, `$2`, … in either database.
package enum SQLValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A 64-bit integer.
    case integer(Int64)
    /// Text.
    case text(String)
    /// Bytes: a BLOB in SQLite, a `bytea` in PostgreSQL.
    case bytes([UInt8])

    /// `.null` for `nil`, else `.text`.
    package static func text(_ text: String?) -> SQLValue { text.map { .text($0) } ?? .null }

    /// `.null` for `nil`, else `.integer`.
    package static func integer(_ value: Int?) -> SQLValue { value.map { .integer(Int64($0)) } ?? .null }

    /// An `Int`.
    package static func integer(_ value: Int) -> SQLValue { .integer(Int64(value)) }

    /// A time as bound: whole microseconds since 1970, which `SQLDialect.time(_:)` reads as the column's type.
    ///
    /// Clamped to `storedTimes`, not trapped: no clock yields a time outside them, and a bad one must not fail a
    /// write or crash the server.
    package static func time(_ date: Date) -> SQLValue {
        let value = (date.timeIntervalSince1970 * 1_000_000).rounded()
        return .integer(Int64(min(max(value, Double(storedTimes.lowerBound)), Double(storedTimes.upperBound))))
    }

    /// `.null` for `nil`, else `.time`.
    package static func time(_ date: Date?) -> SQLValue { date.map { time($0) } ?? .null }

    /// The earliest and latest stored times, in microseconds since 1970: from about 4700 BC, just after
    /// PostgreSQL's earliest `timestamptz`, to about the year 20,000, up to which `SQLDialect.time(_:)` is exact.
    package static let storedTimes: ClosedRange<Int64> = -210_000_000_000_000_000...570_000_000_000_000_000
}

/// A stored time: whole microseconds since 1970, as `SQLDialect.microseconds(of:)` selects it.
package func storedDate(microseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
}

/// The current row of a result, read by column position. A getter throws for NULL or a value of another type,
/// so that a damaged or foreign row is reported rather than misread; the `optional…` getters read NULL as `nil`.
package protocol SQLRow {
    func text(_ column: Int) throws -> String
    func optionalText(_ column: Int) throws -> String?
    func int64(_ column: Int) throws -> Int64
    func optionalInt64(_ column: Int) throws -> Int64?
    func int(_ column: Int) throws -> Int
    func optionalInt(_ column: Int) throws -> Int?
    func bytes(_ column: Int) throws -> [UInt8]
    func optionalBytes(_ column: Int) throws -> [UInt8]?
}

extension SQLRow {
    /// A time column selected with `SQLDialect.microseconds(of:)`.
    package func date(_ column: Int) throws -> Date { storedDate(microseconds: try int64(column)) }

    /// A time column selected with `SQLDialect.microseconds(of:)`, or `nil` for NULL.
    package func optionalDate(_ column: Int) throws -> Date? {
        try optionalInt64(column).map(storedDate(microseconds:))
    }
}

/// One connection of a store, inside the read or the transaction that `SQLStore` opens: what each concern of the
/// store (tokens, audit, …) is written over, once for both databases.
///
/// Statements number their parameters as PostgreSQL does, `$1`, `$2`, …; each may appear more than once. Where the
/// two databases differ, a statement asks `dialect`.
package protocol SQLExecutor {
    /// Which database this is.
    var dialect: SQLDialect { get }

    /// Runs a statement and returns how many rows it inserted, updated or deleted.
    @discardableResult
    func run(_ sql: String, _ arguments: [SQLValue]) throws -> Int

    /// Runs a query and maps each row with `transform`, in the order the database returns them.
    func rows<T>(_ sql: String, _ arguments: [SQLValue], _ transform: (any SQLRow) throws -> T) throws -> [T]

    /// Tells the other servers sharing the store of `change` when the transaction commits; nothing when it rolls
    /// back, and nothing at all in a store of one process.
    func announce(_ change: StoreChange) throws
}

extension SQLExecutor {
    /// The first row of a query mapped with `transform`, or `nil` when it has none.
    package func firstRow<T>(_ sql: String, _ arguments: [SQLValue], _ transform: (any SQLRow) throws -> T) throws
        -> T?
    {
        try rows(sql, arguments, transform).first
    }
}

/// The few places where SQLite and PostgreSQL differ in what the store asks of them.
package enum SQLDialect: Sendable {
    /// Times are integer microseconds since 1970; parameters are written `?1`, `?2`, ….
    case sqlite
    /// Times are `timestamptz`; bytes are `bytea`.
    case postgres

    /// SQL for the time bound to `$parameter` (`SQLValue.time`), as the database stores it.
    package func time(_ parameter: Int) -> String {
        switch self {
        case .sqlite:
            "$\(parameter)"
        case .postgres:
            // Whole seconds and the rest apart, because PostgreSQL multiplies an interval in `double precision`:
            // one product of microseconds would be exact only up to 2^53 µs (the year 2255), seconds are exact far
            // beyond `SQLValue.storedTimes`.
            "(timestamptz 'epoch' + ($\(parameter)::int8 / 1000000) * interval '1 second' "
                + "+ ($\(parameter)::int8 % 1000000) * interval '1 microsecond')"
        }
    }

    /// SQL for the greater of two values that are not NULL.
    package func greater(_ first: String, _ second: String) -> String {
        switch self {
        case .sqlite: "max(\(first), \(second))"
        case .postgres: "greatest(\(first), \(second))"
        }
    }

    /// How many rows one `INSERT` writes: one in SQLite, whose prepared statement costs no round trip and stays
    /// cached only while its text is the same; many in PostgreSQL, where each statement is a round trip (far below
    /// its limit of 65,535 parameters).
    package var rowsPerInsert: Int {
        switch self {
        case .sqlite: 1
        case .postgres: 1000
        }
    }

    /// A list of integers bound as one parameter, for `isIn(list:)`.
    package func integerList(_ values: [Int]) -> SQLValue {
        let items = values.map(String.init).joined(separator: ",")
        switch self {
        case .sqlite: return .text("[" + items + "]")
        case .postgres: return .text("{" + items + "}")
        }
    }

    /// SQL for "is one of the integers of the list bound to `$parameter`" (`integerList(_:)`), after a column.
    package func isIn(list parameter: Int) -> String {
        switch self {
        case .sqlite: "IN (SELECT value FROM json_each($\(parameter)))"
        case .postgres: "= ANY ($\(parameter)::int8[])"
        }
    }

    /// SQL for the kind, key and body of each item's newest change in set `$1` among the changes that `condition`
    /// admits (it names `item_change`'s columns unqualified).
    package func newestChanges(where condition: String) -> String {
        switch self {
        case .sqlite:
            // Found on the narrow version index alone, then the bodies of just those rows.
            """
            SELECT change.kind, change.item_key, change.body
            FROM (
                SELECT kind, item_key, max(version) AS version FROM item_change
                WHERE set_name = $1 AND \(condition)
                GROUP BY kind, item_key
            ) AS latest
            JOIN item_change AS change
                ON change.set_name = $1 AND change.kind = latest.kind
                AND change.item_key = latest.item_key AND change.version = latest.version
            """
        case .postgres:
            """
            SELECT DISTINCT ON (kind, item_key) kind, item_key, body FROM item_change
            WHERE set_name = $1 AND \(condition)
            ORDER BY kind, item_key, version DESC
            """
        }
    }

    /// The clause after a `SELECT` that locks the rows of `table` it returns and passes over rows another
    /// transaction locked: PostgreSQL's `FOR UPDATE SKIP LOCKED`, so that servers sharing the database take
    /// different rows. SQLite has one writer at a time, which is lock enough.
    package func skipLocked(of table: String) -> String {
        switch self {
        case .sqlite: ""
        case .postgres: "FOR UPDATE OF \(table) SKIP LOCKED"
        }
    }

    /// SQL for a time column as whole microseconds since 1970, which `SQLRow.date(_:)` reads.
    package func microseconds(of column: String) -> String {
        switch self {
        case .sqlite: column
        // `extract` is `numeric`, so this is exact.
        case .postgres: "(extract(epoch FROM \(column)) * 1000000)::int8"
        }
    }
}

/// What another server sharing the store must learn of: announced by `SQLExecutor.announce(_:)`.
package enum StoreChange: Sendable, Equatable {
    /// A set reached `version` (created at 1, or appended to).
    case set(String, version: Int)
    /// A token was added or revoked.
    case tokens
}

/// A store on an SQL database: it runs a concern's statements in a read or a transaction, and turns the database's
/// errors into `StoreError`s that name `action`.
package protocol SQLStore: Sendable {
    /// Runs `body` where it reads a consistent state: a read transaction in SQLite; in PostgreSQL, a pooled
    /// connection outside a transaction (versions never change once written, so separate statements need no common
    /// snapshot, and a statement that must see one is written as one).
    func reading<T>(_ action: String, _ body: (any SQLExecutor) throws -> T) throws -> T

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func writing<T>(_ action: String, _ body: (any SQLExecutor) throws -> T) throws -> T
}

/// `sql` with PostgreSQL's parameters `$1`, `$2`, … written as SQLite's `?1`, `?2`, …, which mean the same: the
/// parameter of that number, however often and in whatever order it appears. Text in quotes is left as it is.
/// Runs on every statement of the SQLite store, hence bytes rather than `Character`s.
package func sqliteParameters(_ sql: String) -> String {
    let dollar = UInt8(ascii: "$")
    guard sql.utf8.contains(dollar) else { return sql }
    var bytes = Array(sql.utf8)
    var quote: UInt8?
    for index in bytes.indices {
        let byte = bytes[index]
        if let open = quote {
            if byte == open { quote = nil }
        } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
            quote = byte
        } else if byte == dollar, index + 1 < bytes.count,
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index + 1])
        {
            bytes[index] = UInt8(ascii: "?")
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}
