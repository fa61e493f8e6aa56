/// An ordered list of HTTP header fields with ASCII case-insensitive lookup by name.
///
/// Order and repeated names are kept as received (or as added), because both matter on the wire.
/// ```swift
/// var headers: HTTPHeaders = ["Content-Type": "application/json"]
/// headers.add(name: "Cache-Control", value: "no-store")
/// headers["content-type"]  // "application/json"
/// ```
public struct HTTPHeaders: Sendable, Equatable {
    /// One header field as it appears on the wire.
    public struct Field: Sendable, Equatable {
        /// The field name, with the case it was sent or added with.
        public var name: String
        /// The field value, without leading or trailing whitespace.
        public var value: String

        /// A field with a name and a value.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in wire order.
    public private(set) var fields: [Field]

    /// Headers holding the given fields, in order.
    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    /// The number of fields (repeated names count once each).
    public var count: Int { fields.count }

    /// Whether there is no field at all.
    public var isEmpty: Bool { fields.isEmpty }

    /// The value of the first field with this name (ASCII case-insensitive), or nil.
    public subscript(name: String) -> String? {
        for field in fields where Self.namesEqual(field.name, name) {
            return field.value
        }
        return nil
    }

    /// The values of every field with this name, in order.
    public func values(for name: String) -> [String] {
        fields.lazy.filter { Self.namesEqual($0.name, name) }.map(\.value)
    }

    /// Whether a field with this name is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.namesEqual($0.name, name) }
    }

    /// Appends a field, keeping any existing fields with the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field with this name by a single field, added at the position of the first one (or at the end).
    public mutating func replaceOrAdd(name: String, value: String) {
        if let first = fields.firstIndex(where: { Self.namesEqual($0.name, name) }) {
            fields[first].value = value
            var index = fields.index(after: first)
            while index < fields.endIndex {
                if Self.namesEqual(fields[index].name, name) {
                    fields.remove(at: index)
                } else {
                    index += 1
                }
            }
        } else {
            add(name: name, value: value)
        }
    }

    /// Removes every field with this name.
    public mutating func remove(name: String) {
        fields.removeAll { Self.namesEqual($0.name, name) }
    }

    /// Compares two field names ASCII case-insensitively, without allocating.
    static func namesEqual(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        var lhs = lhs
        var rhs = rhs
        // Native strings are contiguous, so this is a plain byte loop (names are looked up on every request).
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                for index in 0..<left.count where left[index] != right[index] {
                    if ASCII.lowercased(left[index]) != ASCII.lowercased(right[index]) { return false }
                }
                return true
            }
        }
    }
}

extension HTTPHeaders: Sequence {
    /// Iterates the fields in wire order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// Headers from a literal, in the order written (a literal may not repeat a name; use `add` for that).
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { Field(name: $0.0, value: $0.1) })
    }
}
