/// An ordered list of HTTP header fields with ASCII case-insensitive lookup by name.
///
/// Order and repeated names are kept as received (or as added), because both matter on the wire.
/// ```swift
/// var headers: HTTPHeaders = ["Content-Type": "application/json"]
/// headers.add(name: "Cache-Control", value: "no-store")
/// headers["content-type"]  // "application/json"
/// ```
public struct HTTPHeaders: Sendable {
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

    /// A parsed request's fields stay the bytes they arrived as (`HTTPRawFields`) until a `String` is asked for:
    /// a route reads two or three fields of a request, and making two strings of every field cost a tenth of the
    /// serving profile. Any change turns them into `Field`s first.
    @usableFromInline
    enum Storage: Sendable {
        case built([Field])
        case raw(HTTPRawFields)
    }

    @usableFromInline var storage: Storage

    /// Headers holding the given fields, in order.
    public init(_ fields: [Field] = []) {
        storage = .built(fields)
    }

    /// Headers over the fields a parser collected.
    init(raw: HTTPRawFields) {
        storage = .raw(raw)
    }

    /// The fields in wire order.
    public var fields: [Field] {
        switch storage {
        case .built(let fields):
            return fields
        case .raw(let raw):
            var fields: [Field] = []
            fields.reserveCapacity(raw.count)
            raw.visit { name, value in
                fields.append(
                    Field(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
                return true
            }
            return fields
        }
    }

    /// The number of fields (repeated names count once each).
    public var count: Int {
        switch storage {
        case .built(let fields): return fields.count
        case .raw(let raw): return raw.count
        }
    }

    /// Whether there is no field at all.
    public var isEmpty: Bool { count == 0 }

    /// The value of the first field with this name (ASCII case-insensitive), or nil.
    public subscript(name: String) -> String? {
        var found: String?
        forEachValue(named: name) { value in
            found = String(decoding: value, as: UTF8.self)
            return false
        }
        return found
    }

    /// The values of every field with this name, in order.
    public func values(for name: String) -> [String] {
        var values: [String] = []
        forEachValue(named: name) { value in
            values.append(String(decoding: value, as: UTF8.self))
            return true
        }
        return values
    }

    /// Whether a field with this name is present.
    public func contains(_ name: String) -> Bool {
        var found = false
        forEachValue(named: name) { _ in
            found = true
            return false
        }
        return found
    }

    /// Calls `body` with the bytes of each value of a field named `name`, in order, until it returns false; no
    /// `String` is made for a field of a parsed request.
    // Inlinable so that the application's per-request lookups (a token, an entity tag) are specialized with their
    // closure in its own module, as they were when the engine and the routes shared one.
    @inlinable
    public func forEachValue(named name: String, _ body: (UnsafeRawBufferPointer) -> Bool) {
        var name = name
        name.withUTF8 { wanted in
            let wanted = UnsafeRawBufferPointer(wanted)
            switch storage {
            case .built(let fields):
                for field in fields {
                    var field = field
                    let more = field.name.withUTF8 { fieldName -> Bool in
                        guard Self.bytesEqualIgnoringCase(UnsafeRawBufferPointer(fieldName), wanted) else {
                            return true
                        }
                        return field.value.withUTF8 { body(UnsafeRawBufferPointer($0)) }
                    }
                    if !more { return }
                }
            case .raw(let raw):
                raw.visit { fieldName, value in
                    guard Self.bytesEqualIgnoringCase(fieldName, wanted) else { return true }
                    return body(value)
                }
            }
        }
    }

    /// The fields as `Field`s, for a change.
    private mutating func makeBuilt() -> [Field] {
        let fields = self.fields
        storage = .built([])
        return fields
    }

    /// Appends a field, keeping any existing fields with the same name.
    public mutating func add(name: String, value: String) {
        var fields = makeBuilt()
        fields.append(Field(name: name, value: value))
        storage = .built(fields)
    }

    /// Replaces every field with this name by a single field, added at the position of the first one (or at the end).
    public mutating func replaceOrAdd(name: String, value: String) {
        var fields = makeBuilt()
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
            fields.append(Field(name: name, value: value))
        }
        storage = .built(fields)
    }

    /// Removes every field with this name.
    public mutating func remove(name: String) {
        var fields = makeBuilt()
        fields.removeAll { Self.namesEqual($0.name, name) }
        storage = .built(fields)
    }

    /// Compares two field names ASCII case-insensitively, without allocating.
    static func namesEqual(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        var lhs = lhs
        var rhs = rhs
        // Native strings are contiguous, so this is a plain byte loop (names are looked up on every request).
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in bytesEqualIgnoringCase(UnsafeRawBufferPointer(left), UnsafeRawBufferPointer(right))
            }
        }
    }

    /// Calls `body` with every non-empty element of a comma-separated field value (RFC 9110 §5.6.1), trimmed of
    /// whitespace, e.g. each entity tag of an `If-None-Match`.
    public static func forEachListElement(_ value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count, value[end] != ASCII.comma { end += 1 }
            var low = start
            var high = end
            while low < high, ASCII.isWhitespace(value[low]) { low += 1 }
            while high > low, ASCII.isWhitespace(value[high - 1]) { high -= 1 }
            if high > low { body(UnsafeRawBufferPointer(rebasing: value[low..<high])) }
            start = end + 1
        }
    }

    @inlinable @inline(__always)
    static func bytesEqualIgnoringCase(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
        guard left.count == right.count else { return false }
        for index in 0..<left.count where left[index] != right[index] {
            if ASCII.lowercased(left[index]) != ASCII.lowercased(right[index]) { return false }
        }
        return true
    }
}

extension HTTPHeaders: Equatable {
    /// Equal when the fields are, in order, however they are stored.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields == rhs.fields
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

/// A request's header fields as the parser validated them, in one byte array: for each field three machine words
/// (the name's length, where the value starts, the value's length), then the field line's bytes from the name to
/// the value's end.
@usableFromInline
struct HTTPRawFields: Sendable {
    @usableFromInline private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    @usableFromInline static let entryHeader = 3 * MemoryLayout<Int>.size

    /// Appends one field (its bytes already validated); `value` lies after `name` in the same line.
    mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        guard let nameStart = name.baseAddress else { return }
        let valueOffset =
            value.isEmpty ? name.count : value.baseAddress.map { nameStart.distance(to: $0) } ?? name.count
        if bytes.isEmpty { bytes.reserveCapacity(256) }
        // Appended as typed buffers: `append(contentsOf:)` copies those with one memcpy, raw ones byte by byte.
        withUnsafeBytes(of: (name.count, valueOffset, value.count)) { header in
            header.withMemoryRebound(to: UInt8.self) { bytes.append(contentsOf: $0) }
        }
        UnsafeRawBufferPointer(start: nameStart, count: valueOffset + value.count).withMemoryRebound(to: UInt8.self) {
            bytes.append(contentsOf: $0)
        }
        count += 1
    }

    /// Calls `body` with each field's name and value bytes, in order, until it returns false.
    @inlinable
    func visit(_ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool) {
        bytes.withUnsafeBytes { raw in
            let word = MemoryLayout<Int>.size
            var offset = 0
            while offset + Self.entryHeader <= raw.count {
                let nameCount = raw.loadUnaligned(fromByteOffset: offset, as: Int.self)
                let valueOffset = raw.loadUnaligned(fromByteOffset: offset + word, as: Int.self)
                let valueCount = raw.loadUnaligned(fromByteOffset: offset + 2 * word, as: Int.self)
                let line = offset + Self.entryHeader
                offset = line + valueOffset + valueCount
                let name = UnsafeRawBufferPointer(rebasing: raw[line..<(line + nameCount)])
                let value = UnsafeRawBufferPointer(rebasing: raw[(line + valueOffset)..<offset])
                if !body(name, value) { return }
            }
        }
    }
}
