/// A value bound to a statement's `$n`.
public enum PostgresValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// Text (the server infers the type from the statement: a `$1::timestamptz` may be given as text).
    case text(String)
    /// An integer, sent as `int8`.
    case int(Int64)
    /// Bytes, sent as `bytea`.
    case bytes([UInt8])

    /// `.null` for `nil`, else `.text`.
    public static func text(_ text: String?) -> PostgresValue { text.map { .text($0) } ?? .null }
    /// `.null` for `nil`, else `.int`.
    public static func int(_ value: Int?) -> PostgresValue { value.map { .int(Int64($0)) } ?? .null }
    /// An `Int` as `int8`.
    public static func int(_ value: Int) -> PostgresValue { .int(Int64(value)) }
}

/// A notification received on a channel the connection listens on.
public struct PostgresNotification: Sendable, Hashable {
    /// The channel (`NOTIFY channel`).
    public var channel: String
    /// The payload, under 8,000 bytes.
    public var payload: String
    /// The server process of the session that sent it.
    public var senderPID: Int32
}
