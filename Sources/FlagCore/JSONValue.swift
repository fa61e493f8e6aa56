/// A JSON value as Flagstaff stores it: flag values, `json` remote-config payloads, anything a reader keeps as is.
///
/// Integers and non-integers are distinct cases so that an `int` flag keeps every bit of a 64-bit value.
/// Canonical encoding writes object members sorted by key, so equal values always yield equal bytes.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}
