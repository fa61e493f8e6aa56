import Foundation

/// Who a flag is evaluated for: the unit that is bucketed and its string attributes.
public struct EvaluationContext: Sendable, Hashable {
    /// The bucketed unit: a user id, device id or account id. Addressable in conditions as the attribute `unitID`.
    public var unitID: String
    /// Attributes such as `country`, `appVersion`, `email`.
    public var attributes: [String: String] {
        didSet { entries = Self.entries(attributes) }
    }
    // The attributes once more, as one small array of (name key, name, value): a condition finds its attribute by
    // comparing integers in a few cache lines, where a dictionary runs SipHash on every lookup. One allocation per
    // context; `nil` above 16 attributes, where the dictionary wins.
    private var entries: [Attribute]?

    struct Attribute: Sendable {
        let key: AttributeKey
        let name: String
        let value: String
    }

    /// Creates a context.
    public init(unitID: String, attributes: [String: String] = [:]) {
        self.unitID = unitID
        self.attributes = attributes
        self.entries = Self.entries(attributes)
    }

    private static func entries(_ attributes: [String: String]) -> [Attribute]? {
        guard attributes.count <= 16 else { return nil }
        guard !attributes.isEmpty else { return [] }
        var entries: [Attribute] = []
        entries.reserveCapacity(attributes.count)
        for (name, value) in attributes {
            entries.append(Attribute(key: AttributeKey(name), name: name, value: value))
        }
        return entries
    }

    /// The attribute's value; `unitID` is the unit id.
    public subscript(attribute name: String) -> String? {
        name == "unitID" ? unitID : attribute(AttributeKey(name), name: name)
    }

    /// A named attribute from `attributes` (no `unitID` special case). `name()` is only called for names longer
    /// than 16 bytes, or above 16 attributes.
    @inline(__always)
    func attribute(_ key: AttributeKey, name: @autoclosure () -> String) -> String? {
        withAttribute(key, name: name()) { $0 }
    }

    /// Runs `body` on a named attribute, borrowed in place: no copy of the value (a retain and a release) per
    /// condition.
    @inline(__always)
    func withAttribute<R>(_ key: AttributeKey, name: @autoclosure () -> String, _ body: (String?) -> R) -> R {
        guard let entries else { return body(attributes[name()]) }
        // Indexing a buffer reads each entry in place; `for entry in entries` would copy (retain) its strings.
        return entries.withUnsafeBufferPointer { buffer in
            for index in buffer.indices where buffer[index].key == key {
                if key.isComplete || buffer[index].name == name() { return body(buffer[index].value) }
            }
            return body(nil)
        }
    }

    public static func == (lhs: EvaluationContext, rhs: EvaluationContext) -> Bool {
        lhs.unitID == rhs.unitID && lhs.attributes == rhs.attributes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(unitID)
        hasher.combine(attributes)
    }
}
