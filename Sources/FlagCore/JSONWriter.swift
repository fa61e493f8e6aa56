import Foundation

/// Writes JSON bytes directly, in the order the caller gives, without an intermediate tree.
///
/// Compact output is Flagstaff's canonical form (used for ETags, digests and diffs); `pretty` adds newlines and
/// two-space indentation for files people read. Commas are placed automatically.
public struct JSONWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []
    private let pretty: Bool
    private var needsComma = false
    private var level = 0
    private var afterKey = false
    private var isEmptyContainer = false

    /// Creates a writer; `pretty` writes one member per line.
    public init(pretty: Bool = false, reservingCapacity capacity: Int = 256) {
        self.pretty = pretty
        bytes.reserveCapacity(capacity)
    }

    /// Starts an object (as a value: after `key(_:)`, in an array, or at the top).
    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    /// Ends the current object.
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    /// Starts an array.
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    /// Ends the current array.
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// Writes a member name; the next call writes its value.
    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
        needsComma = false
        afterKey = true
    }

    /// Writes a string value.
    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
        needsComma = true
    }

    /// Writes an array of strings, in the order given.
    public mutating func strings(_ values: some Sequence<String>) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    /// Writes an integer value.
    public mutating func int<I: BinaryInteger>(_ value: I) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    /// Writes a double: integral values within ±2^53 without a fraction (`50`), others in the shortest form that
    /// reads back to the same double. Non-finite values cannot be JSON and are written as `null`.
    public mutating func number(_ value: Double) {
        if value.isFinite && value == value.rounded() && abs(value) <= 9_007_199_254_740_992 {
            int(Int64(value))
        } else {
            double(value)
        }
    }

    /// Writes a double so that it reads back as a double (`1.0`, not `1`).
    public mutating func double(_ value: Double) {
        separate()
        if value.isFinite {
            bytes.append(contentsOf: value.description.utf8)
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    /// Writes `null`.
    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
        needsComma = true
    }

    /// Writes bytes that already are one canonical JSON value (e.g. a stored flag), unchanged.
    public mutating func raw(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    /// Writes `"field": {"key": item, …}` from items that already are canonical JSON, keys in byte order (the
    /// document's and the patch's `flags` and `cohorts`).
    public mutating func rawMembers(_ field: String, _ items: [String: [UInt8]]) {
        key(field)
        beginObject()
        for name in items.keys.sorted(by: utf8Less) {
            key(name)
            raw(items[name] ?? [])
        }
        endObject()
    }

    /// Writes any JSON value; object members sorted by key so that equal values give equal bytes.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .int(let number): int(number)
        case .double(let number): double(number)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for name in members.keys.sorted(by: utf8Less) {
                key(name)
                // The key came from `members`, so the lookup cannot fail.
                self.value(members[name] ?? .null)
            }
            endObject()
        }
    }

    // MARK: - Internals

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        level += 1
        needsComma = false
        isEmptyContainer = true
    }

    private mutating func close(_ bracket: UInt8) {
        level -= 1
        if pretty && !isEmptyContainer { newline() }
        bytes.append(bracket)
        needsComma = true
        isEmptyContainer = false
    }

    /// Puts the comma and, when pretty, the line break before a member or element; nothing between key and value.
    private mutating func separate() {
        isEmptyContainer = false
        if afterKey {
            afterKey = false
            return
        }
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        if pretty && level > 0 { newline() }
    }

    private mutating func newline() {
        bytes.append(0x0A)
        for _ in 0..<level { bytes.append(contentsOf: [0x20, 0x20]) }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                switch byte {
                case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
                case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
                case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
                default:
                    bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30])
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0x0F)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// Orders strings by their UTF-8 bytes: the same order on every platform and in every language's client.
public func utf8Less(_ lhs: String, _ rhs: String) -> Bool {
    // Native and small strings lend their bytes without the copy that `withUTF8` makes of its receiver: sorting a
    // set's keys calls this for every pair compared.
    let ordered = lhs.utf8.withContiguousStorageIfAvailable { a in
        rhs.utf8.withContiguousStorageIfAvailable { b in
            let common = min(a.count, b.count)
            let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
            return order != 0 ? order < 0 : a.count < b.count
        }
    }
    if let ordered = ordered ?? nil { return ordered }
    return lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
}

extension JSONValue {
    /// The canonical compact encoding of this value.
    public var canonicalBytes: [UInt8] {
        var writer = JSONWriter()
        writer.value(self)
        return writer.bytes
    }
}
