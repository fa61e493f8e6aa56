import FlagCore

/// One JSON value kept as its bytes: a flag or cohort as the server stores it, a flag's value, a whole document.
///
/// The encoder writes the bytes untouched and the decoder keeps them (a top-level member of a request, or a whole
/// answer, exactly as sent; a nested value in its canonical form), so that an item travels as its canonical bytes
/// and is read by its own reader (`Flag.decode`, `FlagSet.decode`) once.
public struct RawJSON: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The value's bytes.
    public let bytes: [UInt8]

    /// A value from bytes that hold one JSON value (not checked here: the caller made them).
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A value in its canonical form.
    public init(_ value: JSONValue) {
        bytes = value.canonicalBytes
    }

    /// The value, parsed.
    public func parsed() throws -> JSONValue {
        try JSONReader.parse(bytes)
    }

    /// The bytes as text, e.g. `true` or `{"type":"bool"}`.
    public var description: String { String(decoding: bytes, as: UTF8.self) }

    /// Only the admin API's decoder keeps bytes: another decoder has none to give.
    public init(from decoder: any Decoder) throws {
        guard let decoder = decoder as? WireDecoding else {
            throw DecodingError.typeMismatch(
                RawJSON.self,
                .init(codingPath: decoder.codingPath, debugDescription: "RawJSON is read by FlagAPI's WireDecoder only")
            )
        }
        bytes = try decoder.source.bytes(at: decoder.codingPath)
    }

    /// Only the admin API's encoder writes bytes as they are.
    public func encode(to encoder: any Encoder) throws {
        guard let encoder = encoder as? WireEncoding else {
            throw EncodingError.invalidValue(
                self,
                .init(
                    codingPath: encoder.codingPath, debugDescription: "RawJSON is written by FlagAPI's WireEncoder only"
                ))
        }
        encoder.node.raw = bytes
    }
}

/// An optional member written as `null` when it is `nil`, where the wire says that it is there and empty (`"sets":
/// null` for every set) instead of leaving it out. Read back, `null` and a missing member are both `nil`.
@propertyWrapper
public struct ExplicitNull<Value: Sendable & Hashable & Codable>: Sendable, Hashable, Codable {
    /// The value, `nil` for `null`.
    public var wrappedValue: Value?

    /// A member holding `wrappedValue`.
    public init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    /// Reads `null` as `nil`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    /// Writes `nil` as `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue {
            try container.encode(wrappedValue)
        } else {
            try container.encodeNil()
        }
    }
}

extension KeyedDecodingContainer {
    /// A missing `@ExplicitNull` member is `nil`, as `null` is.
    public func decode<Value>(_ type: ExplicitNull<Value>.Type, forKey key: Key) throws -> ExplicitNull<Value> {
        try decodeIfPresent(type, forKey: key) ?? ExplicitNull(wrappedValue: nil)
    }
}
