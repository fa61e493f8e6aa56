import FlagCore
import Foundation

/// A ``FlagKey`` of any value type, so that keys of different types fit in one list: the keys an app declares, which
/// the debug menu (`FlagDebugModel`, in the `FlagDebugMenu` product) lists beside the set's flags.
///
/// ```swift
/// let declared: [AnyFlagKey] = [AnyFlagKey(.newCheckout), AnyFlagKey(.maxItems), AnyFlagKey(.checkoutTheme)]
/// ```
public struct AnyFlagKey: Sendable {
    /// The flag's key in the set, e.g. `new-checkout`.
    public let name: String
    /// The flag type the key expects in the set.
    package let type: FlagType
    /// The compiled-in default as JSON; `nil` for a `Decodable` default that does not encode.
    package let defaultJSON: JSONValue?
    /// The compiled-in default as text; `nil` for a flag no key of the app declares.
    package let defaultText: String?
    /// For a key read as a `CaseIterable` enum, the raw values of its cases; `nil` for every other key.
    package let cases: [String]?
    /// The key's value type, for messages: `Bool`, `Theme`, `Banner`.
    package let valueType: String
    /// Whether a value of the flag reads as the key's type (an enum's case, a `Decodable` value that decodes).
    package let reads: @Sendable (JSONValue) -> Bool

    /// Wraps `key`.
    public init<Value>(_ key: FlagKey<Value>) {
        name = key.name
        type = key.type
        valueType = String(describing: Value.self)
        let rawValues = key.cases?.rawValues ?? []
        cases = rawValues.isEmpty ? nil : rawValues
        reads = { key.convert($0) != nil }
        // A `Decodable` key, the only one that is not primitive, keeps no JSON of its default (`defaultJSON` is
        // `.null`); most such types are `Codable`.
        if key.isPrimitive {
            defaultJSON = key.defaultJSON
        } else if let encodable = key.defaultValue as? any Encodable {
            defaultJSON = Self.json(encoding: encodable)
        } else {
            defaultJSON = nil
        }
        defaultText = defaultJSON.map(Self.text) ?? String(describing: key.defaultValue)
    }

    /// A key for a flag of the set that the app did not declare: no compiled-in default, any value of `type`.
    package init(name: String, type: FlagType) {
        self.name = name
        self.type = type
        defaultJSON = nil
        defaultText = nil
        cases = nil
        valueType = type.name
        reads = { $0.conforms(to: type) }
    }

    /// A value as a person reads and types it: a string as it is, anything else as JSON.
    package static func text(_ value: JSONValue) -> String {
        if case .string(let string) = value { return string }
        var writer = JSONWriter()
        writer.value(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private static func json(encoding value: any Encodable) -> JSONValue? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return try JSONReader.parse(Array(try encoder.encode(value)))
        } catch {
            // Shown as `String(describing:)` instead: the default is only displayed.
            return nil
        }
    }
}
