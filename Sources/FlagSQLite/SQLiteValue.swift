/// A value SQLite stores: the five storage classes, used to bind statement arguments.
///
/// ```swift
/// try db.execute("INSERT INTO item (key, body) VALUES (?, ?)", [.text(key), .blob(bytes)])
/// try db.execute("DELETE FROM item WHERE version < ?", [42])
/// ```
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// An integer value.
    public init(_ value: Int) { self = .integer(Int64(value)) }
    /// A boolean as SQLite stores it: 0 or 1.
    public init(_ value: Bool) { self = .integer(value ? 1 : 0) }
    /// An integer value, or NULL.
    public init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    /// A text value, or NULL.
    public init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    /// A blob value, or NULL.
    public init(_ value: [UInt8]?) { self = value.map { .blob($0) } ?? .null }
}

extension SQLiteValue: ExpressibleByNilLiteral {
    /// NULL.
    public init(nilLiteral: ()) { self = .null }
}

extension SQLiteValue: ExpressibleByIntegerLiteral {
    /// An integer literal.
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension SQLiteValue: ExpressibleByFloatLiteral {
    /// A floating-point literal.
    public init(floatLiteral value: Double) { self = .real(value) }
}

extension SQLiteValue: ExpressibleByStringLiteral {
    /// A text literal.
    public init(stringLiteral value: String) { self = .text(value) }
}

extension SQLiteValue: ExpressibleByBooleanLiteral {
    /// A boolean literal, stored as 0 or 1.
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}
