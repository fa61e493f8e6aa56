import Foundation
import Testing

@testable import FlagCore

@Suite("JSON reader and writer")
struct JSONReaderTests {
    private func parse(_ text: String) throws -> JSONValue { try JSONReader.parse(Array(text.utf8)) }

    private func failure(_ text: String) -> JSONError? {
        do {
            _ = try parse(text)
            return nil
        } catch let error as JSONError {
            return error
        } catch {
            return nil
        }
    }

    @Test func readsEveryKindOfValue() throws {
        let value = try parse(
            #" {"a": [1, -2, 3.5, 1e3, true, false, null, "x\n\"y\" \u00e9 \ud83d\ude00"], "b": {}} "#)
        #expect(
            value
                == .object([
                    "a": .array([
                        .int(1), .int(-2), .double(3.5), .double(1000), .bool(true), .bool(false), .null,
                        .string("x\n\"y\" é 😀"),
                    ]),
                    "b": .object([:]),
                ]))
    }

    @Test func integersKeepAllSixtyFourBits() throws {
        #expect(try parse("9223372036854775807") == .int(.max))
        #expect(try parse("-9223372036854775808") == .int(.min))
        #expect(try parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
    }

    @Test(arguments: [
        ("{\"a\": 1,}", 1, 9, "expected a member name"),
        ("[1, 2", 1, 6, "unexpected end of input inside an array"),
        ("{\n  \"a\": tru\n}", 2, 8, "expected true or false"),
        ("[01]", 1, 2, "leading zero"),
        ("\"abc", 1, 1, "not terminated"),
        ("[\"a\tb\"]", 1, 4, "control character"),
        ("{} x", 1, 4, "after the end of the document"),
        ("[\"\\ud800\"]", 1, 3, "high surrogate"),
        ("[\"\\x\"]", 1, 3, "invalid escape"),
        ("[1e400]", 1, 2, "out of range"),
        ("", 1, 1, "unexpected end of input"),
    ])
    func malformedInputNamesLineAndColumn(text: String, line: Int, column: Int, message: String) throws {
        let error = try #require(failure(text))
        #expect(error.line == line)
        #expect(error.column == column)
        #expect(error.message.contains(message), "\(error)")
    }

    @Test func invalidUTF8IsRejected() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        #expect(throws: JSONError.self) { try JSONReader.parse(bytes) }
    }

    @Test func deepNestingIsRejectedNotCrashing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let error = failure(deep)
        #expect(error?.message.contains("nesting deeper") == true)
    }

    @Test func writerIsCanonical() throws {
        let value = try parse(#"{"b": [1, 2.5, "q\"\\\u0001"], "a": {"z": null, "y": true}}"#)
        let bytes = value.canonicalBytes
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"a":{"y":true,"z":null},"b":[1,2.5,"q\"\\\u0001"]}"#)
        #expect(try JSONReader.parse(bytes) == value)
    }

    @Test func doublesRoundTripAsDoubles() throws {
        for number in [1.0, 0.1, -2.5e-8, 1e21, 123_456_789.123] {
            let bytes = JSONValue.double(number).canonicalBytes
            #expect(try JSONReader.parse(bytes) == .double(number))
        }
    }

    @Test func prettyOutputReadsBackTheSame() throws {
        let value = try parse(#"{"a": [1, {"b": []}, {}], "c": "d"}"#)
        var writer = JSONWriter(pretty: true)
        writer.value(value)
        let text = String(decoding: writer.bytes, as: UTF8.self)
        #expect(text == "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    },\n    {}\n  ],\n  \"c\": \"d\"\n}")
        #expect(try JSONReader.parse(writer.bytes) == value)
    }
}
