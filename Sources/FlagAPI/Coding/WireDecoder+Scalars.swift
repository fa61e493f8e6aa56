import FlagCore
import Foundation

/// Reads one scalar: strictly from JSON (an integral number may be written `5.0`), by its text from a query.
struct SingleReader: SingleValueDecodingContainer {
    let source: WireSource
    let codingPath: [any CodingKey]

    private func mismatch<T>(_ type: T.Type, _ expected: String) -> DecodingError {
        let found: String
        if case .text(let text) = source {
            found = "not \"\(text)\""
        } else {
            found = "found \(source.described)"
        }
        return .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "must be \(expected), \(found)"))
    }

    private func value() throws -> WireSource { try source.parsed() }

    func decodeNil() -> Bool { source.isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        switch try value() {
        case .json(.bool(let flag)): return flag
        case .text("true"), .text("1"), .text(""): return true
        case .text("false"), .text("0"): return false
        default: throw mismatch(type, "true or false")
        }
    }

    func decode(_ type: String.Type) throws -> String {
        switch try value() {
        case .json(.string(let text)), .text(let text): return text
        default: throw mismatch(type, "a string")
        }
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch try value() {
        case .json(.int(let number)): return Double(number)
        case .json(.double(let number)): return number
        case .text(let text):
            guard let number = Double(text), number.isFinite else { throw mismatch(type, "a number") }
            return number
        default: throw mismatch(type, "a number")
        }
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    private func integer<Integer: FixedWidthInteger>(_ type: Integer.Type) throws -> Integer {
        let found: Integer?
        switch try value() {
        case .json(.int(let number)): found = Integer(exactly: number)
        case .json(.double(let number)) where number.rounded() == number && abs(number) < 1e15:
            found = Integer(exactly: number)
        case .text(let text): found = Integer(text)
        default: found = nil
        }
        guard let found else { throw mismatch(type, "an integer") }
        return found
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try WireDecoder.decode(type, source, path: codingPath)
    }
}
