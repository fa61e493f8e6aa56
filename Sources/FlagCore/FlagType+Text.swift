extension FlagType {
    /// Reads `text` as a value of this type, as people type values on a command line: `true` or `false`, a whole
    /// number, a number, the text itself for a string, JSON for a `json` flag. flagctl and the admin API's `…Text`
    /// members (`"valueText": "42"`) read values this way, so that a client need not know the flag's type.
    ///
    /// ```swift
    /// try FlagType.int.value(fromText: "42")   // .int(42)
    /// ```
    public func value(fromText text: String) throws(ValueTextError) -> JSONValue {
        switch self {
        case .bool:
            if text == "true" { return .bool(true) }
            if text == "false" { return .bool(false) }
            throw ValueTextError("'\(text)' is not a bool; use true or false")
        case .int:
            guard let number = Int64(text) else {
                throw ValueTextError("'\(text)' is not an int; use a whole number such as 42")
            }
            return .int(number)
        case .double:
            guard let number = Double(text), number.isFinite else {
                throw ValueTextError("'\(text)' is not a double; use a number such as 1.5")
            }
            return .double(number)
        case .string:
            return .string(text)
        case .json:
            do {
                return try JSONReader.parse(Array(text.utf8))
            } catch {
                throw ValueTextError("'\(text)' is not JSON (\(error)); quote it, e.g. '{\"columns\":2}'")
            }
        case .unknown(let name):
            throw ValueTextError("the flag's type '\(name)' is unknown to this build")
        }
    }
}

/// Why a text is not a value of a flag's type, and what it should look like.
public struct ValueTextError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the text, and what would be right.
    public let message: String

    init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
