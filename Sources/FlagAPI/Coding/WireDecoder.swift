import FlagCore
import Foundation

/// Reads the admin API's JSON into a `Decodable` value: FlagCore's `JSONReader` parses, and this decoder hands the
/// parsed members to a synthesized `init(from:)`.
///
/// Unknown members are ignored. A member of the wrong kind, or a required one that is missing, is a
/// `WireFormatError` naming its path (`tokens[2].name`). A `Date` is read from an ISO-8601 string; `RawJSON` keeps a
/// value's bytes. A request's members may also come from the query string (`?limit=5`), whose text is read as the
/// type asked for: `5` as an integer, `true`, `1` or nothing as `true`.
///
/// ```swift
/// let answer = try WireDecoder.decode(SettingsAnswer.self, from: bytes, format: "settings answer")
/// ```
public enum WireDecoder {
    /// Reads a whole JSON document.
    /// - Throws: `WireFormatError` in `format`, naming the first member at fault.
    public static func decode<Value: Decodable>(
        _ type: Value.Type, from bytes: [UInt8], format: String
    ) throws(WireFormatError) -> Value {
        try run(format) { try decode(type, .raw(bytes), path: []) }
    }

    /// Reads a request: the members of its JSON object body (an empty body has none), then for a member the body
    /// lacks (or sends as `null`), the query parameter of that name. The body's top-level members are parsed only
    /// when read, and a `RawJSON` member is never parsed here: a large document is read once, by its reader.
    /// - Throws: `WireFormatError` in the format `body`, naming the member at fault.
    public static func decodeRequest<Value: Decodable>(
        _ type: Value.Type, body: [UInt8], query: [String: String]
    ) throws(WireFormatError) -> Value {
        let format = "body"
        var members: [String: [UInt8]] = [:]
        if !body.allSatisfy(isWhitespace) {
            var isObject = true
            do {
                try JSONReader.read(body) { reader in
                    guard try reader.peek() == .object else {
                        isObject = false
                        try reader.skipValue()
                        return
                    }
                    try reader.readObject { reader, name in members[name] = try reader.readRawValue() }
                }
            } catch {
                throw WireFormatError(format: format, field: nil, message: "is not valid JSON: \(error)")
            }
            guard isObject else { throw WireFormatError(format: format, field: nil, message: "must be a JSON object") }
        }
        return try run(format) { try decode(type, .members(body: members, query: query), path: []) }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// Runs a decoding, turning what it throws into a `WireFormatError` with the member's path.
    private static func run<Value>(_ format: String, _ body: () throws -> Value) throws(WireFormatError) -> Value {
        do {
            return try body()
        } catch let error as WireFormatError {
            throw WireFormatError(format: format, field: error.field, message: error.message)
        } catch let error as JSONError {
            throw WireFormatError(format: format, field: nil, message: "is not valid JSON: \(error)")
        } catch let error as DecodingError {
            let (path, message): ([any CodingKey], String) =
                switch error {
                case .keyNotFound(let key, let context): (context.codingPath + [key], context.debugDescription)
                case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                    (context.codingPath, context.debugDescription)
                @unknown default: ([], "\(error)")
                }
            throw WireFormatError(format: format, field: path.isEmpty ? nil : memberPath(path), message: message)
        } catch {
            throw WireFormatError(format: format, field: nil, message: "cannot be read: \(error)")
        }
    }

    /// `a.b[1].c`, as `WireFormatError` names a member.
    public static func memberPath(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue, key is IndexKey {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ source: WireSource, path: [any CodingKey]) throws
        -> Value
    {
        if type == Date.self {
            let text = try SingleReader(source: source, codingPath: path).decode(String.self)
            guard let date = ISO8601.parse(text) else {
                throw DecodingError.typeMismatch(
                    Date.self,
                    .init(codingPath: path, debugDescription: "must be an ISO-8601 time such as 2026-12-01T09:00:00Z"))
            }
            if let date = date as? Value { return date }
        }
        return try Value(from: WireDecoding(source: source, codingPath: path))
    }
}

/// Where a value being read comes from.
enum WireSource {
    /// A parsed value.
    case json(JSONValue)
    /// The exact bytes of a value, parsed when something other than `RawJSON` reads it.
    case raw([UInt8])
    /// A query parameter's text, read as the type asked for.
    case text(String)
    /// The top level of a request: its body's members by name, and its query parameters.
    case members(body: [String: [UInt8]], query: [String: String])

    /// The source with raw bytes parsed.
    func parsed() throws -> WireSource {
        guard case .raw(let bytes) = self else { return self }
        return .json(try JSONReader.parse(bytes))
    }

    /// Whether the value is `null`.
    var isNull: Bool {
        switch self {
        case .json(.null): true
        case .raw(let bytes): bytes == Array("null".utf8)
        default: false
        }
    }

    /// The canonical bytes of the value, for `RawJSON`.
    func bytes(at path: [any CodingKey]) throws -> [UInt8] {
        switch self {
        case .json(let value): return value.canonicalBytes
        case .raw(let bytes): return bytes
        case .text, .members:
            throw DecodingError.typeMismatch(
                RawJSON.self, .init(codingPath: path, debugDescription: "must be JSON in the body, not in the query"))
        }
    }

    /// `an object`, `a string`, … for messages.
    var described: String {
        switch self {
        case .json(let value):
            return switch value {
            case .null: "null"
            case .bool: "a boolean"
            case .int, .double: "a number"
            case .string: "a string"
            case .array: "an array"
            case .object: "an object"
            }
        case .raw(let bytes):
            do {
                return WireSource.json(try JSONReader.parse(bytes)).described
            } catch {
                return "not JSON"
            }
        case .text: return "a string"
        case .members: return "an object"
        }
    }
}

/// The `Decoder` handed to `init(from:)`.
struct WireDecoding: Decoder {
    let source: WireSource
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch try source.parsed() {
        case .json(.object(let members)):
            return KeyedDecodingContainer(KeyedReader(members: .json(members), codingPath: codingPath))
        case .members(let body, let query):
            return KeyedDecodingContainer(KeyedReader(members: .request(body, query), codingPath: codingPath))
        case let other:
            throw DecodingError.typeMismatch(
                [String: JSONValue].self,
                .init(codingPath: codingPath, debugDescription: "must be an object, found \(other.described)"))
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .json(.array(let elements)) = try source.parsed() else {
            throw DecodingError.typeMismatch(
                [JSONValue].self,
                .init(codingPath: codingPath, debugDescription: "must be an array, found \(source.described)"))
        }
        return UnkeyedReader(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleReader(source: source, codingPath: codingPath)
    }
}

private struct KeyedReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    enum Members {
        case json([String: JSONValue])
        case request([String: [UInt8]], [String: String])
    }

    let members: Members
    let codingPath: [any CodingKey]

    var allKeys: [Key] {
        switch members {
        case .json(let members): members.keys.compactMap { Key(stringValue: $0) }
        case .request(let body, let query): Set(body.keys).union(query.keys).compactMap { Key(stringValue: $0) }
        }
    }

    /// The member's value: in a request, the body's unless it is missing or `null`, then the query's.
    private func child(_ key: Key) -> WireSource? {
        let name = key.stringValue
        switch members {
        case .json(let members):
            return members[name].map(WireSource.json)
        case .request(let body, let query):
            let member = body[name].map(WireSource.raw)
            if member == nil || member?.isNull == true, let text = query[name] { return .text(text) }
            return member
        }
    }

    private func require(_ key: Key) throws -> WireSource {
        guard let value = child(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "is required"))
        }
        return value
    }

    private func single(_ key: Key) throws -> SingleReader {
        SingleReader(source: try require(key), codingPath: codingPath + [key])
    }

    func contains(_ key: Key) -> Bool { child(key) != nil }
    func decodeNil(forKey key: Key) throws -> Bool { try require(key).isNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try single(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try single(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try single(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try single(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try single(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try single(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try single(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try single(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try single(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try single(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try single(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try single(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try single(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try single(key).decode(type) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try WireDecoder.decode(type, try require(key), path: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try WireDecoding(source: try require(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try WireDecoding(source: try require(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    /// The wire has no `super`: a subclass reads the same members.
    func superDecoder() throws -> any Decoder {
        switch members {
        case .json(let members): WireDecoding(source: .json(.object(members)), codingPath: codingPath)
        case .request(let body, let query):
            WireDecoding(source: .members(body: body, query: query), codingPath: codingPath)
        }
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        WireDecoding(source: try require(key), codingPath: codingPath + [key])
    }
}

private struct UnkeyedReader: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> (WireSource, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                JSONValue.self, .init(codingPath: codingPath, debugDescription: "has too few elements"))
        }
        defer { currentIndex += 1 }
        return (.json(elements[currentIndex]), codingPath + [IndexKey(currentIndex)])
    }

    private mutating func single() throws -> SingleReader {
        let (source, path) = try next()
        return SingleReader(source: source, codingPath: path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try single().decode(type) }
    mutating func decode(_ type: String.Type) throws -> String { try single().decode(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try single().decode(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try single().decode(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try single().decode(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try single().decode(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try single().decode(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try single().decode(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try single().decode(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try single().decode(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try single().decode(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try single().decode(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try single().decode(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try single().decode(type) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (source, path) = try next()
        return try WireDecoder.decode(type, source, path: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let (source, path) = try next()
        return try WireDecoding(source: source, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (source, path) = try next()
        return try WireDecoding(source: source, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (source, path) = try next()
        return WireDecoding(source: source, codingPath: path)
    }
}
