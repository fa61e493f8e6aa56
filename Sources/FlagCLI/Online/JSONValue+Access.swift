import FlagCore
import Foundation

extension JSONValue {
    /// The member `name` of an object; `null` for anything else, so that lookups chain.
    subscript(name: String) -> JSONValue {
        if case .object(let members) = self { return members[name] ?? .null }
        return .null
    }

    /// The text of a string.
    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The number, when it is an integer (or a double without a fraction).
    var int: Int? {
        switch self {
        case .int(let number): return Int(exactly: number)
        case .double(let number): return Int(exactly: number)
        default: return nil
        }
    }

    /// The number as a double.
    var double: Double? {
        switch self {
        case .int(let number): return Double(number)
        case .double(let number): return number
        default: return nil
        }
    }

    /// The flag of a bool.
    var bool: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// The elements of an array.
    var array: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The members of an object.
    var object: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The time of an ISO-8601 string.
    var date: Date? { string.flatMap { ISO8601.parse($0) } }
}
