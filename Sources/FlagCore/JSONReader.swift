/// A fast pull reader over UTF-8 JSON bytes (RFC 8259), with errors that name the line and column.
///
/// Foundation's `JSONDecoder` is too slow on Linux for a large flag set on the client's start-up path
/// (BENCHMARKS.md); this reader walks the bytes once and lets the caller build its own types as it goes, without an
/// intermediate tree.
///
/// ```swift
/// let count = try JSONReader.read(bytes) { reader in
///     var n = 0
///     try reader.readObject { reader, key in n += 1; try reader.skipValue() }
///     return n
/// }
/// ```
public struct JSONReader: ~Copyable {
    /// The kind of value that starts at the reader's position.
    public enum Kind: Sendable, Equatable {
        case object, array, string, number, bool, null

        /// The name used in messages: "an object", "a string", …
        public var described: String {
            switch self {
            case .object: "an object"
            case .array: "an array"
            case .string: "a string"
            case .number: "a number"
            case .bool: "a boolean"
            case .null: "null"
            }
        }
    }

    /// Nesting deeper than this is rejected, so hostile input cannot exhaust the stack.
    public static let maximumDepth = 512

    @usableFromInline let bytes: UnsafeBufferPointer<UInt8>
    @usableFromInline var position = 0
    @usableFromInline var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Reads one JSON document: `body` consumes the top-level value; anything but whitespace after it is an error.
    public static func read<T>(_ bytes: [UInt8], _ body: (inout JSONReader) throws -> T) throws -> T {
        try bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            let value = try body(&reader)
            reader.skipWhitespace()
            if reader.position < buffer.count {
                throw reader.error("unexpected \(reader.describeByte()) after the end of the document")
            }
            return value
        }
    }

    /// Parses a whole document into a `JSONValue`.
    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try read(bytes) { reader in try reader.readValue() }
    }

    /// The byte offset of the reader, for error messages.
    public var offset: Int { position }

    /// An error at the reader's position.
    public func error(_ message: String) -> JSONError {
        JSONError(message: message, offset: position, in: bytes)
    }

    // MARK: - Looking ahead

    /// The kind of the next value, after skipping whitespace.
    public mutating func peek() throws -> Kind {
        skipWhitespace()
        guard position < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw error("unexpected \(describeByte()), expected a value")
        }
    }

    // MARK: - Containers

    /// Reads an object, calling `body` once per member with its key; `body` must consume the member's value.
    public mutating func readObject(_ body: (inout JSONReader, String) throws -> Void) throws {
        try readMembers(naming: true) { reader, name in try body(&reader, name ?? "") }
    }

    /// The members of an object, each given to `body` positioned at its value. Their names are checked always, and
    /// made into strings only when `naming`: skipping a value must not build a string per member.
    mutating func readMembers(naming: Bool, _ body: (inout JSONReader, String?) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "an object")
        try enter()
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error("expected a member name in double quotes, found \(describeByte())")
            }
            var name: String?
            if naming { name = try readString() } else { _ = try skipString() }
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after a member name")
            try body(&self, name)
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input inside an object") }
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: "}") { break }
            if byte != UInt8(ascii: ",") {
                position -= 1
                throw error("expected ',' or '}' in an object, found \(describeByte())")
            }
        }
        depth -= 1
    }

    /// Reads an array, calling `body` once per element with its index; `body` must consume the element.
    public mutating func readArray(_ body: (inout JSONReader, Int) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "an array")
        try enter()
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return
        }
        var index = 0
        while true {
            try body(&self, index)
            index += 1
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input inside an array") }
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: "]") { break }
            if byte != UInt8(ascii: ",") {
                position -= 1
                throw error("expected ',' or ']' in an array, found \(describeByte())")
            }
        }
        depth -= 1
    }

    // MARK: - Scalars

    /// Reads `true` or `false`.
    public mutating func readBool() throws -> Bool {
        skipWhitespace()
        if matchLiteral("true") { return true }
        if matchLiteral("false") { return false }
        throw error("expected true or false, found \(describeByte())")
    }

    /// Consumes `null` if it is next and says whether it was.
    public mutating func readNull() throws -> Bool {
        skipWhitespace()
        return matchLiteral("null")
    }

    /// Reads a number: `.int` when written without fraction or exponent and within Int64, else `.double`.
    public mutating func readNumber() throws -> JSONValue {
        skipWhitespace()
        let start = position
        var isInteger = true
        if position < bytes.count && bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count, isDigit(bytes[position]) else {
            throw error("expected a digit in a number, found \(describeByte())")
        }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count && isDigit(bytes[position]) {
                position = start
                throw error("a number must not start with a leading zero")
            }
        } else {
            while position < bytes.count && isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count && bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else {
                throw error("expected a digit after the decimal point, found \(describeByte())")
            }
            while position < bytes.count && isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count && (bytes[position] | 0x20) == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < bytes.count && (bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-"))
            {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else {
                throw error("expected a digit in the exponent, found \(describeByte())")
            }
            while position < bytes.count && isDigit(bytes[position]) { position += 1 }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<position])
        if isInteger, let value = parseInt64(text) { return .int(value) }
        guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else {
            position = start
            throw error("the number is out of range")
        }
        return .double(value)
    }

    /// Reads a string, decoding escapes. Invalid UTF-8 and unpaired surrogates are errors.
    public mutating func readString() throws -> String {
        skipWhitespace()
        try expect(UInt8(ascii: "\""), "a string")
        let start = position
        // Fast path: no escapes — one validated copy of the bytes. A local index stays in a register.
        var index = start
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                position = index + 1
                return try makeString(UnsafeBufferPointer(rebasing: bytes[start..<index]), at: start)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 {
                position = index
                throw error("a control character must be escaped inside a string")
            }
            index += 1
        }
        position = index
        guard position < bytes.count else {
            position = start - 1
            throw error("a string is not terminated")
        }
        return try readEscapedString(from: start)
    }

    // MARK: - Whole values

    /// Reads any value into a `JSONValue` tree. Duplicate object keys: the last one wins.
    public mutating func readValue() throws -> JSONValue {
        switch try peek() {
        case .object:
            var members: [String: JSONValue] = [:]
            try readObject { reader, key in members[key] = try reader.readValue() }
            return .object(members)
        case .array:
            var elements: [JSONValue] = []
            try readArray { reader, _ in elements.append(try reader.readValue()) }
            return .array(elements)
        case .string: return .string(try readString())
        case .number: return try readNumber()
        case .bool: return .bool(try readBool())
        case .null:
            try expectNull()
            return .null
        }
    }

    /// Skips one value of any kind, checking that it is well-formed.
    public mutating func skipValue() throws {
        switch try peek() {
        case .object: try readMembers(naming: false) { reader, _ in try reader.skipValue() }
        case .array: try readArray { reader, _ in try reader.skipValue() }
        case .string: _ = try skipString()
        case .number: _ = try readNumber()
        case .bool: _ = try readBool()
        case .null: try expectNull()
        }
    }

    /// Returns the exact bytes of the next value (after checking it), e.g. to keep a payload without decoding it.
    public mutating func readRawValue() throws -> [UInt8] {
        skipWhitespace()
        let start = position
        try skipValue()
        return Array(bytes[start..<position])
    }
}

// MARK: - Internals

extension JSONReader {
    @inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// `null` where `peek` saw an `n`: a cut-short literal (`nul`) must fail here, at its first letter, not later
    /// as a stray letter after a value that was never consumed.
    mutating func expectNull() throws {
        guard try readNull() else { throw error("expected null, found \(describeByte())") }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else {
            throw error("expected \(what), found \(describeByte())")
        }
        position += 1
    }

    mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth {
            throw error("nesting deeper than \(Self.maximumDepth) levels")
        }
    }

    mutating func matchLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        let text = literal.utf8Start
        for index in 0..<count where bytes[position + index] != text[index] { return false }
        position += count
        return true
    }

    func describeByte() -> String {
        guard position < bytes.count else { return "end of input" }
        let byte = bytes[position]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    func parseInt64(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative { index = 1 }
        var magnitude: UInt64 = 0
        while index < text.count {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(text[index] &- UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            magnitude = sum
            index += 1
        }
        if negative {
            if magnitude == UInt64(Int64.max) + 1 { return .min }
            return magnitude <= UInt64(Int64.max) ? -Int64(magnitude) : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }
}

/// Malformed JSON, with the 1-based line and column where reading stopped.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    /// The 0-based byte offset.
    public let offset: Int
    /// The 1-based line.
    public let line: Int
    /// The 1-based column, counted in bytes.
    public let column: Int

    init(message: String, offset: Int, in bytes: UnsafeBufferPointer<UInt8>) {
        self.message = message
        self.offset = offset
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        self.line = line
        self.column = offset - lineStart + 1
    }

    /// `line 3, column 14: expected ',' or '}' in an object, found ']'`
    public var description: String { "line \(line), column \(column): \(message)" }
}
