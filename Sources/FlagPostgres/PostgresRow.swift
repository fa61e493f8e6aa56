/// One row of a `PostgresResult`; its columns read by position.
public struct PostgresRow {
    let result: PostgresResult
    let row: Int32

    /// The text of column `column`, or `nil` for NULL.
    public func optionalText(_ column: Int) throws -> String? {
        try result.value(row, column).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The text of column `column`; throws for NULL.
    public func text(_ column: Int) throws -> String {
        guard let text = try optionalText(column) else { throw Self.null(column) }
        return text
    }

    /// The integer of column `column`, or `nil` for NULL.
    public func optionalInt64(_ column: Int) throws -> Int64? {
        guard let text = try optionalText(column) else { return nil }
        guard let value = Int64(text) else {
            throw PostgresError.statement("column \(column) holds \"\(text)\", not an integer", sqlState: nil)
        }
        return value
    }

    /// The integer of column `column`; throws for NULL.
    public func int64(_ column: Int) throws -> Int64 {
        guard let value = try optionalInt64(column) else { throw Self.null(column) }
        return value
    }

    /// The integer of column `column` as an `Int`, or `nil` for NULL.
    public func optionalInt(_ column: Int) throws -> Int? {
        try optionalInt64(column).map { Int($0) }
    }

    /// The integer of column `column` as an `Int`; throws for NULL.
    public func int(_ column: Int) throws -> Int {
        Int(try int64(column))
    }

    /// The boolean of column `column`; throws for NULL.
    public func bool(_ column: Int) throws -> Bool {
        try text(column) == "t"
    }

    /// The bytes of a `bytea` column, or `nil` for NULL. The text format sends them as `\x` and hex digits.
    public func optionalBytes(_ column: Int) throws -> [UInt8]? {
        guard let value = try result.value(row, column) else { return nil }
        guard value.count >= 2, value[0] == UInt8(ascii: "\\"), value[1] == UInt8(ascii: "x"),
            value.count % 2 == 0
        else {
            throw PostgresError.statement("column \(column) is not bytea in hex format", sqlState: nil)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((value.count - 2) / 2)
        var index = 2
        while index < value.count {
            guard let high = Self.hexDigit(value[index]), let low = Self.hexDigit(value[index + 1]) else {
                throw PostgresError.statement("column \(column) holds a bad hex digit", sqlState: nil)
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// The bytes of a `bytea` column; throws for NULL.
    public func bytes(_ column: Int) throws -> [UInt8] {
        guard let bytes = try optionalBytes(column) else { throw Self.null(column) }
        return bytes
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func null(_ column: Int) -> PostgresError {
        PostgresError.statement("column \(column) is NULL where a value was expected", sqlState: nil)
    }
}
