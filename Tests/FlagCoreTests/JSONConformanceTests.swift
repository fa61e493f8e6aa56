import Foundation
import Testing
@testable import FlagCore

/// The JSONTestSuite parsing corpus (`JSONSuite/`, see its README): y_ must parse, n_ must be rejected, i_ as
/// recorded below. Each file is a parameter, so a failure names the case.
@Suite("JSON conformance (JSONTestSuite)")
struct JSONConformanceTests {
    static let directory = Bundle.module.url(forResource: "JSONSuite", withExtension: nil)

    /// The case names with `prefix`, sorted; empty when the resource is missing (`corpusIsComplete` then fails).
    static func cases(_ prefix: String) -> [String] {
        guard let directory,
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return [] }
        return names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.sorted()
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        let url = try #require(directory?.appendingPathComponent(name))
        return Array(try Data(contentsOf: url))
    }

    /// What this reader does with each implementation-defined case: `true` accepted, `false` rejected.
    ///
    /// Accepted: integers beyond Int64 (read as the nearest double) and exponents that underflow (read as 0), as a
    /// double-based reader would; nesting up to `JSONReader.maximumDepth` (512). Rejected: numbers that overflow a
    /// double (no infinities in JSON), every unpaired or inverted surrogate escape (a String cannot hold one),
    /// every byte sequence that is not UTF-8 (invalid, overlong, surrogates, UTF-16), and a byte-order mark.
    static let implementationDefined: [String: Bool] = [
        "i_number_double_huge_neg_exp.json": true,
        "i_number_huge_exp.json": false,
        "i_number_neg_int_huge_exp.json": false,
        "i_number_pos_double_huge_exp.json": false,
        "i_number_real_neg_overflow.json": false,
        "i_number_real_pos_overflow.json": false,
        "i_number_real_underflow.json": true,
        "i_number_too_big_neg_int.json": true,
        "i_number_too_big_pos_int.json": true,
        "i_number_very_big_negative_int.json": true,
        "i_object_key_lone_2nd_surrogate.json": false,
        "i_string_1st_surrogate_but_2nd_missing.json": false,
        "i_string_1st_valid_surrogate_2nd_invalid.json": false,
        "i_string_UTF-16LE_with_BOM.json": false,
        "i_string_UTF-8_invalid_sequence.json": false,
        "i_string_UTF8_surrogate_U+D800.json": false,
        "i_string_incomplete_surrogate_and_escape_valid.json": false,
        "i_string_incomplete_surrogate_pair.json": false,
        "i_string_incomplete_surrogates_escape_valid.json": false,
        "i_string_invalid_lonely_surrogate.json": false,
        "i_string_invalid_surrogate.json": false,
        "i_string_invalid_utf-8.json": false,
        "i_string_inverted_surrogates_U+1D11E.json": false,
        "i_string_iso_latin_1.json": false,
        "i_string_lone_second_surrogate.json": false,
        "i_string_lone_utf8_continuation_byte.json": false,
        "i_string_not_in_unicode_range.json": false,
        "i_string_overlong_sequence_2_bytes.json": false,
        "i_string_overlong_sequence_6_bytes.json": false,
        "i_string_overlong_sequence_6_bytes_null.json": false,
        "i_string_truncated-utf-8.json": false,
        "i_string_utf16BE_no_BOM.json": false,
        "i_string_utf16LE_no_BOM.json": false,
        "i_structure_500_nested_arrays.json": true,
        "i_structure_UTF-8_BOM_empty_object.json": false,
    ]

    @Test func corpusIsComplete() {
        #expect(Self.cases("y_").count == 96)
        #expect(Self.cases("n_").count == 193)
        #expect(Self.cases("i_").count == 35)
        #expect(Set(Self.cases("i_")) == Set(Self.implementationDefined.keys))
    }

    @Test(arguments: cases("y_"))
    func acceptsValidDocument(_ name: String) throws {
        let bytes = try Self.bytes(name)
        #expect(throws: Never.self) { try JSONReader.parse(bytes) }
        // The validating skipper (used for unknown fields) agrees, and the raw bytes it returns are the value's.
        let raw = try JSONReader.read(bytes) { reader in try reader.readRawValue() }
        #expect(try JSONReader.parse(raw) == JSONReader.parse(bytes))
    }

    @Test(arguments: cases("n_"))
    func rejectsInvalidDocument(_ name: String) throws {
        let bytes = try Self.bytes(name)
        let error = try #require(Self.failure { try JSONReader.parse(bytes) }, "\(name) was accepted")
        #expect((0...bytes.count).contains(error.offset))
        #expect(error.line >= 1 && error.column >= 1)
        #expect(Self.failure { try JSONReader.read(bytes) { reader in try reader.skipValue() } } != nil)
    }

    @Test(arguments: cases("i_"))
    func implementationDefinedOutcomeIsAsRecorded(_ name: String) throws {
        let bytes = try Self.bytes(name)
        let accepted = Self.failure { try JSONReader.parse(bytes) } == nil
        #expect(accepted == Self.implementationDefined[name], "\(name): accepted = \(accepted)")
        let skipped = Self.failure { try JSONReader.read(bytes) { reader in try reader.skipValue() } } == nil
        #expect(skipped == accepted, "parse and skipValue disagree on \(name)")
    }

    /// parse → canonical bytes → parse gives the same value, and canonical bytes are a fixed point.
    @Test(arguments: cases("y_") + implementationDefined.filter(\.value).keys.sorted())
    func canonicalBytesRoundTrip(_ name: String) throws {
        let value = try JSONReader.parse(try Self.bytes(name))
        let canonical = value.canonicalBytes
        let again = try JSONReader.parse(canonical)
        #expect(again == value)
        #expect(Self.identical(again, value), "\(name): \(String(decoding: canonical, as: UTF8.self))")
        #expect(again.canonicalBytes == canonical)
    }

    /// Foundation's `JSONSerialization` as an oracle: the same numbers and the same strings, scalar for scalar.
    @Test(arguments: cases("y_"))
    func agreesWithFoundation(_ name: String) throws {
        let bytes = try Self.bytes(name)
        let ours = try JSONReader.parse(bytes)
        let theirs = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        #expect(Self.agrees(ours, theirs), "\(name): ours \(ours), Foundation \(theirs)")
    }
}

// MARK: - Exact values and edges the suite does not pin down

extension JSONConformanceTests {
    @Test(arguments: [
        ("y_number_negative_zero.json", JSONValue.array([.int(0)])),
        ("y_number_real_capital_e.json", .array([.double(1e22)])),
        ("y_number_double_close_to_zero.json", .array([.double(-1e-78)])),
        ("y_number_fraction_exponent_exact.json", .array([.double(1250)])),
        ("y_string_surrogates_U+1D11E_MUSICAL_SYMBOL_G_CLEF.json", .array([.string("\u{1D11E}")])),
        ("y_string_last_surrogates_1_and_2.json", .array([.string("\u{10FFFF}")])),
        ("y_string_allowed_escapes.json", .array([.string("\"\\/\u{8}\u{C}\n\r\t")])),
        ("y_object_escaped_null_in_key.json", .object(["foo\u{0}bar": .int(42)])),
        ("y_object_duplicated_key.json", .object(["a": .string("c")])),
        ("y_structure_lonely_negative_real.json", .double(-0.1)),
        ("i_number_too_big_pos_int.json", .array([.double(1e20)])),
        ("i_number_real_underflow.json", .array([.double(0)])),
    ])
    func exactValue(_ name: String, _ expected: JSONValue) throws {
        let value = try JSONReader.parse(try Self.bytes(name))
        #expect(Self.identical(value, expected), "\(name): \(value)")
    }

    @Test func nestingLimitIsExactlyTheMaximumDepth() throws {
        let depth = JSONReader.maximumDepth
        let deepest = Array("[".utf8) * depth + Array("]".utf8) * depth
        #expect(throws: Never.self) { try JSONReader.parse(deepest) }
        let tooDeep = Array(#"{"":"#.utf8) + deepest + Array("}".utf8)
        let error = try #require(Self.failure { try JSONReader.parse(tooDeep) })
        #expect(error.message.contains("nesting deeper than 512 levels"))
        #expect(error.column == 4 + depth + 1)
    }

    /// The four RFC 8259 whitespace bytes are skipped everywhere; no other byte is whitespace.
    @Test func onlyTheFourWhitespaceBytesAreWhitespace() throws {
        let space = " \t\r\n"
        let text = "\(space){\(space)\"a\"\(space):\(space)[\(space)1\(space),\(space)2\(space)]\(space)}\(space)"
        let value = try JSONReader.parse(Array(text.utf8))
        #expect(value == .object(["a": .array([.int(1), .int(2)])]))
        for byte: UInt8 in [0x0B, 0x0C, 0x00, 0x85, 0xA0] {
            #expect(Self.failure { try JSONReader.parse([byte, UInt8(ascii: "1")]) } != nil, "byte \(byte)")
            #expect(Self.failure { try JSONReader.parse([UInt8(ascii: "["), byte, UInt8(ascii: "]")]) } != nil)
        }
    }

    /// A literal cut short is reported at its first letter as the literal it started, not as a stray letter.
    @Test(arguments: [("[nul]", "expected null"), ("nul", "expected null"), ("[tru]", "expected true or false")])
    func truncatedLiteralNamesTheLiteral(_ text: String, _ message: String) throws {
        let error = try #require(Self.failure { try JSONReader.parse(Array(text.utf8)) })
        #expect(error.message.contains(message), "\(error)")
        #expect(error.column == (text.hasPrefix("[") ? 2 : 1))
    }
}

// MARK: - Helpers

extension Array {
    /// The array repeated `count` times.
    fileprivate static func * (lhs: Array, count: Int) -> Array { Array((0..<count).map { _ in lhs }.joined()) }
}

extension JSONConformanceTests {
    static func failure(_ body: () throws -> Any) -> JSONError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error as? JSONError
        }
    }

    /// Equality without Swift's leniencies: strings compared scalar by scalar (no canonical equivalence), doubles
    /// bit for bit (so -0.0 differs from 0.0), ints and doubles never equal.
    static func identical(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { identical($0, $1) }
        case (.object(let a), .object(let b)):
            let aKeys = a.keys.map { Array($0.unicodeScalars) }.sorted { $0.lexicographicallyPrecedes($1) }
            let bKeys = b.keys.map { Array($0.unicodeScalars) }.sorted { $0.lexicographicallyPrecedes($1) }
            return aKeys == bKeys && a.allSatisfy { key, value in b[key].map { identical(value, $0) } ?? false }
        default: return false
        }
    }

    /// Whether our value equals what `JSONSerialization` made of the same bytes.
    static func agrees(_ ours: JSONValue, _ theirs: Any) -> Bool {
        switch ours {
        case .null: return theirs is NSNull
        case .bool(let flag): return (theirs as? NSNumber)?.boolValue == flag
        case .int(let int):
            guard let number = theirs as? NSNumber else { return false }
            return number.int64Value == int && number.doubleValue == Double(int)
        case .double(let double):
            // Foundation keeps long mantissas as NSDecimalNumber, whose `doubleValue` is off by a few ulps
            // (-1e-78 reads as -1.0000000000000005e-78); its exact decimal text, correctly rounded, is the oracle.
            if let decimal = theirs as? NSDecimalNumber { return Double(decimal.stringValue) == double }
            return (theirs as? NSNumber)?.doubleValue == double
        case .string(let text):
            guard let string = theirs as? String else { return false }
            return string.unicodeScalars.elementsEqual(text.unicodeScalars)
        case .array(let elements):
            guard let array = theirs as? [Any], array.count == elements.count else { return false }
            return zip(elements, array).allSatisfy { agrees($0, $1) }
        case .object(let members):
            guard let object = theirs as? [String: Any], object.count == members.count else { return false }
            return members.allSatisfy { key, value in object[key].map { agrees(value, $0) } ?? false }
        }
    }
}
