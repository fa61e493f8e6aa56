import FlagCore

/// A flag-set document with its layout (`FlagSet.Layout`: the header and the byte range of each flag and of the
/// cohorts), so that a flag can be decoded alone. The layout is scanned when a document is cached, and stored beside
/// it in a compact binary form, so that a launch reads the ranges without scanning 1 MB of JSON.
struct DocumentIndex: Sendable {
    let bytes: [UInt8]
    private(set) var layout = FlagSet.Layout()

    var schema: Int { layout.schema }
    var name: String { layout.name }
    var version: Int { layout.version }

    /// The raw JSON of the cohorts object (`{}` when absent).
    var cohorts: [UInt8] { layout.cohortsRange.map { Array(bytes[$0]) } ?? Array("{}".utf8) }

    /// The raw JSON of one flag, if the document has it.
    func flag(_ key: String) -> [UInt8]? { layout.flagRanges[key].map { Array(bytes[$0]) } }

    /// Scans `bytes`. Throws `JSONError` when the document is not a JSON object.
    init(scanning bytes: [UInt8]) throws {
        self.bytes = bytes
        self.layout = try FlagSet.Layout.scan(bytes)
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    // MARK: - Binary form

    private static let magic = Array("FIDX1".utf8)

    /// The ranges in a compact form: magic, schema, version, name, cohorts range, then (key, start, end) per flag.
    func encoded() -> [UInt8] {
        var out = Self.magic
        out.reserveCapacity(layout.flagRanges.count * 32 + 64)
        func int(_ value: Int) {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { out.append(contentsOf: $0) }
        }
        func string(_ value: String) {
            let utf8 = Array(value.utf8)
            int(utf8.count)
            out += utf8
        }
        int(layout.schema)
        int(layout.version)
        string(layout.name)
        int(layout.cohortsRange?.lowerBound ?? 0)
        int(layout.cohortsRange?.upperBound ?? 0)
        int(layout.flagRanges.count)
        for (key, range) in layout.flagRanges {
            string(key)
            int(range.lowerBound)
            int(range.upperBound)
        }
        return out
    }

    /// Reads the binary form made by `encoded()` for `bytes`; `nil` when it is malformed or does not fit the
    /// document (then the document is scanned instead).
    init?(bytes: [UInt8], encodedIndex index: [UInt8]) {
        var position = 0
        func int() -> Int? {
            guard position + 4 <= index.count else { return nil }
            var value: UInt32 = 0
            for shift in 0..<4 { value |= UInt32(index[position + shift]) << (8 * shift) }
            position += 4
            return Int(value)
        }
        func string() -> String? {
            guard let count = int(), position + count <= index.count else { return nil }
            defer { position += count }
            return String(decoding: index[position..<(position + count)], as: UTF8.self)
        }
        func range() -> Range<Int>? {
            guard let start = int(), let end = int(), start <= end, end <= bytes.count else { return nil }
            return start..<end
        }
        guard index.starts(with: Self.magic) else { return nil }
        position = Self.magic.count
        self.init(bytes: bytes)
        guard let schema = int(), let version = int(), let name = string(), let cohorts = range(), let count = int()
        else { return nil }
        layout = FlagSet.Layout(
            schema: schema, name: name, version: version, cohortsRange: cohorts.isEmpty ? nil : cohorts)
        layout.flagRanges.reserveCapacity(count)
        for _ in 0..<count {
            guard let key = string(), let range = range() else { return nil }
            layout.flagRanges[key] = range
        }
        guard position == index.count else { return nil }
    }
}
