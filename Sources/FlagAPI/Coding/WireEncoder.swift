import FlagCore
import Foundation

/// Writes an `Encodable` value as the admin API's JSON: FlagCore's `JSONWriter` is the wire, and this encoder only
/// turns a synthesized `encode(to:)` into its calls.
///
/// The bytes are canonical, as `JSONValue.canonicalBytes` writes them: members sorted by their UTF-8 bytes, so that
/// an answer with a dictionary is the same bytes on every run. `nil` optionals are left out, unless the property is
/// `@ExplicitNull`; a `Date` is written as `ISO8601.format` writes it; `RawJSON` as its bytes, untouched.
///
/// ```swift
/// let bytes = try WireEncoder.encode(SettingsAnswer(set: "ios-prod", compatibility: "warn", reviews: "off"))
/// // {"compatibility":"warn","set":"ios-prod"}
/// ```
public enum WireEncoder {
    /// The compact canonical JSON of `value`.
    public static func encode<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let node = try node(of: value)
        var writer = JSONWriter(reservingCapacity: node.sizeEstimate)
        node.write(to: &writer)
        return writer.bytes
    }

    /// `value` as a `JSONValue` (raw members parsed), for a query string or a test.
    public static func jsonValue<Value: Encodable>(_ value: Value) throws -> JSONValue {
        try JSONReader.parse(encode(value))
    }

    static func node<Value: Encodable>(of value: Value) throws -> EncodedNode {
        let node = EncodedNode()
        try node.store(value, path: [])
        return node
    }
}

/// One value while an answer is encoded: a class, so that a container handed out by the encoder can fill it in
/// after the encoder has returned it. Exactly one of the stored forms is set once encoding is done; none is `null`.
final class EncodedNode {
    var scalar: JSONValue?
    var raw: [UInt8]?
    var members: [String: EncodedNode]?
    var elements: [EncodedNode]?

    /// Stores `value`, by its own `encode(to:)` except for the types the wire writes in its own way.
    func store<Value: Encodable>(_ value: Value, path: [any CodingKey]) throws {
        if let date = value as? Date {
            scalar = .string(ISO8601.format(date))
        } else {
            try value.encode(to: WireEncoding(node: self, codingPath: path))
        }
    }

    /// The bytes the writer will need, roughly, so that it reserves them once.
    var sizeEstimate: Int {
        if let raw { return raw.count + 8 }
        if let members { return members.reduce(2) { $0 + $1.key.utf8.count + 4 + $1.value.sizeEstimate } }
        if let elements { return elements.reduce(2) { $0 + 1 + $1.sizeEstimate } }
        return 16
    }

    func write(to writer: inout JSONWriter) {
        if let raw {
            writer.raw(raw)
        } else if let members {
            writer.beginObject()
            for name in members.keys.sorted(by: utf8Less) {
                writer.key(name)
                members[name]?.write(to: &writer)
            }
            writer.endObject()
        } else if let elements {
            writer.beginArray()
            for element in elements { element.write(to: &writer) }
            writer.endArray()
        } else {
            writer.value(scalar ?? .null)
        }
    }

    /// The node of the member `key`, made when first asked for.
    func member(_ key: String) -> EncodedNode {
        if let existing = members?[key] { return existing }
        let child = EncodedNode()
        if members == nil { members = [:] }
        members?[key] = child
        return child
    }

    /// A new node at the end of the array.
    func appendElement() -> EncodedNode {
        let child = EncodedNode()
        if elements == nil { elements = [] }
        elements?.append(child)
        return child
    }
}

/// The `Encoder` handed to `encode(to:)`: every container writes into `node`.
struct WireEncoding: Encoder {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.members == nil { node.members = [:] }
        return KeyedEncodingContainer(KeyedWriter(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.elements == nil { node.elements = [] }
        return UnkeyedWriter(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleWriter(node: node, codingPath: codingPath)
    }
}

private struct KeyedWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    private func set(_ value: JSONValue, _ key: Key) { node.member(key.stringValue).scalar = value }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.integer(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try node.member(key.stringValue).store(value, path: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        WireEncoding(node: node.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        WireEncoding(node: node.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    /// A subclass's members go into the same object: the wire has no `super`.
    mutating func superEncoder() -> any Encoder { WireEncoding(node: node, codingPath: codingPath) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        WireEncoding(node: node.member(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedWriter: UnkeyedEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    var count: Int { node.elements?.count ?? 0 }

    private var nextPath: [any CodingKey] { codingPath + [IndexKey(count)] }

    mutating func encodeNil() throws { node.appendElement().scalar = .null }
    mutating func encode(_ value: Bool) throws { node.appendElement().scalar = .bool(value) }
    mutating func encode(_ value: String) throws { node.appendElement().scalar = .string(value) }
    mutating func encode(_ value: Double) throws { node.appendElement().scalar = .double(value) }
    mutating func encode(_ value: Float) throws { node.appendElement().scalar = .double(Double(value)) }
    mutating func encode(_ value: Int) throws { node.appendElement().scalar = .integer(value) }
    mutating func encode(_ value: Int8) throws { node.appendElement().scalar = .integer(value) }
    mutating func encode(_ value: Int16) throws { node.appendElement().scalar = .integer(value) }
    mutating func encode(_ value: Int32) throws { node.appendElement().scalar = .integer(value) }
    mutating func encode(_ value: Int64) throws { node.appendElement().scalar = .integer(value) }
    mutating func encode(_ value: UInt) throws { node.appendElement().scalar = .integer(value) }
    mutating func encode(_ value: UInt8) throws { node.appendElement().scalar = .integer(value) }
    mutating func encode(_ value: UInt16) throws { node.appendElement().scalar = .integer(value) }
    mutating func encode(_ value: UInt32) throws { node.appendElement().scalar = .integer(value) }
    mutating func encode(_ value: UInt64) throws { node.appendElement().scalar = .integer(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = nextPath
        try node.appendElement().store(value, path: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        let path = nextPath
        return WireEncoding(node: node.appendElement(), codingPath: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        return WireEncoding(node: node.appendElement(), codingPath: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let path = nextPath
        return WireEncoding(node: node.appendElement(), codingPath: path)
    }
}

private struct SingleWriter: SingleValueEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.scalar = .null }
    mutating func encode(_ value: Bool) throws { node.scalar = .bool(value) }
    mutating func encode(_ value: String) throws { node.scalar = .string(value) }
    mutating func encode(_ value: Double) throws { node.scalar = .double(value) }
    mutating func encode(_ value: Float) throws { node.scalar = .double(Double(value)) }
    mutating func encode(_ value: Int) throws { node.scalar = .integer(value) }
    mutating func encode(_ value: Int8) throws { node.scalar = .integer(value) }
    mutating func encode(_ value: Int16) throws { node.scalar = .integer(value) }
    mutating func encode(_ value: Int32) throws { node.scalar = .integer(value) }
    mutating func encode(_ value: Int64) throws { node.scalar = .integer(value) }
    mutating func encode(_ value: UInt) throws { node.scalar = .integer(value) }
    mutating func encode(_ value: UInt8) throws { node.scalar = .integer(value) }
    mutating func encode(_ value: UInt16) throws { node.scalar = .integer(value) }
    mutating func encode(_ value: UInt32) throws { node.scalar = .integer(value) }
    mutating func encode(_ value: UInt64) throws { node.scalar = .integer(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try node.store(value, path: codingPath) }
}

/// An array index as a coding key, `[3]` in a member path.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }

    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

extension JSONValue {
    /// An integer as the wire holds it: a 64-bit integer, or a double beyond that range.
    static func integer<Integer: BinaryInteger>(_ value: Integer) -> JSONValue {
        Int64(exactly: value).map(JSONValue.int) ?? .double(Double(value))
    }
}
