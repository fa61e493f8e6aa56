import Testing

@testable import FlagCore

/// Control characters shown as visible escapes (what flagctl writes to a terminal), and found with their position
/// (what the telemetry report's reader names when it refuses one).
@Suite("Control characters")
struct ControlCharactersTests {
    /// The escape of each C0 character, written out: the four named ones and JSON's `\u` form for the rest.
    static let c0: [(UInt32, String)] = [
        (0x00, #"\u0000"#), (0x01, #"\u0001"#), (0x02, #"\u0002"#), (0x03, #"\u0003"#), (0x04, #"\u0004"#),
        (0x05, #"\u0005"#), (0x06, #"\u0006"#), (0x07, #"\u0007"#), (0x08, #"\u0008"#), (0x09, #"\t"#),
        (0x0A, #"\n"#), (0x0B, #"\u000b"#), (0x0C, #"\u000c"#), (0x0D, #"\r"#), (0x0E, #"\u000e"#),
        (0x0F, #"\u000f"#), (0x10, #"\u0010"#), (0x11, #"\u0011"#), (0x12, #"\u0012"#), (0x13, #"\u0013"#),
        (0x14, #"\u0014"#), (0x15, #"\u0015"#), (0x16, #"\u0016"#), (0x17, #"\u0017"#), (0x18, #"\u0018"#),
        (0x19, #"\u0019"#), (0x1A, #"\u001a"#), (0x1B, #"\e"#), (0x1C, #"\u001c"#), (0x1D, #"\u001d"#),
        (0x1E, #"\u001e"#), (0x1F, #"\u001f"#),
    ]

    static func text(_ value: UInt32) throws -> String {
        String(Character(try #require(Unicode.Scalar(value))))
    }

    @Test func everyC0CharacterIsEscaped() throws {
        #expect(Self.c0.count == 32)
        for (value, escape) in Self.c0 {
            let text = try Self.text(value)
            #expect(text.escapingControlCharacters() == escape, "U+\(value)")
            #expect(("a" + text + "b").escapingControlCharacters() == "a\(escape)b", "U+\(value)")
        }
    }

    @Test func delAndEveryC1CharacterAreEscapedInJSONsForm() throws {
        #expect("\u{7F}".escapingControlCharacters() == #"\u007f"#)
        #expect("\u{9B}2J".escapingControlCharacters() == #"\u009b2J"#)
        for value in UInt32(0x80)...0x9F {
            let expected = #"\u00"# + String(value, radix: 16)
            #expect(try Self.text(value).escapingControlCharacters() == expected)
        }
    }

    /// The payload an issue names: a window title set, then a screen cleared with a one-character CSI.
    @Test func aTerminalSequenceBecomesVisibleText() {
        #expect("\u{1B}]0;pwned\u{7}".escapingControlCharacters() == #"\e]0;pwned\u0007"#)
        #expect("\u{9B}2J".escapingControlCharacters() == #"\u009b2J"#)
        #expect("\u{1B}[2J\u{1B}[H".escapingControlCharacters() == #"\e[2J\e[H"#)
    }

    @Test(arguments: [
        "", "plain ASCII, with punctuation: ~!@#$%^&*()_+{}|[]\\;':\",./<>?`", "Grüße, café, naïve",
        "日本語のテキスト", "שלום עולם", "مرحبا", "😀 emoji", "👩‍👩‍👧 a family joined by zero-width joiners",
        "🇩🇪 a flag", "e\u{301} a combining accent", "\u{A0}no-break space, © and ¿ (U+00A0–U+00BF follow 0xC2 too)",
        "\u{2028}\u{2029} Unicode's own separators are not C0 or C1", "\u{FEFF}\u{200B}",
    ])
    func everythingElseIsKept(_ text: String) {
        #expect(text.escapingControlCharacters() == text)
        #expect(text.escapingControlCharacters(keepingLineBreaks: true) == text)
        #expect(text.firstControlCharacter == nil)
    }

    @Test func aLineBreakIsEscapedUnlessLinesAreKept() {
        #expect("one\ntwo".escapingControlCharacters() == #"one\ntwo"#)
        #expect("one\ntwo".escapingControlCharacters(keepingLineBreaks: true) == "one\ntwo")
        // Only the line feed is a line break kept: a carriage return would move back over the line just written.
        #expect("one\r\ntwo".escapingControlCharacters() == #"one\r\ntwo"#)
        #expect("one\r\ntwo".escapingControlCharacters(keepingLineBreaks: true) == "one\\r\ntwo")
        #expect("a\u{1B}b\nc".escapingControlCharacters(keepingLineBreaks: true) == "a\\eb\nc")
    }

    /// Whatever goes in, nothing a terminal obeys comes out, and escaping again changes nothing (a table cell is
    /// escaped when added and again as its line is written).
    @Test func theResultHasNoControlCharacterAndEscapingAgainKeepsIt() throws {
        var all = ""
        for value in UInt32(0)...0x10FF where !(0xD800...0xDFFF).contains(value) {
            all.unicodeScalars.append(try #require(Unicode.Scalar(value)))
        }
        let escaped = all.escapingControlCharacters()
        #expect(escaped.firstControlCharacter == nil)
        #expect(escaped.unicodeScalars.allSatisfy { !$0.isControlCharacter })
        #expect(escaped.escapingControlCharacters() == escaped)
        let lines = all.escapingControlCharacters(keepingLineBreaks: true)
        #expect(lines.unicodeScalars.allSatisfy { !$0.isControlCharacter || $0 == "\n" })
        #expect(lines.split(separator: "\n", omittingEmptySubsequences: false).count == 2)
    }

    /// JSON has escaped every C0 character already, and what is left (DEL, C1) gets JSON's own `\u` form: a `--json`
    /// line stays JSON, with the same value.
    @Test func aJSONLineStaysTheSameJSON() throws {
        var all = ""
        for value in UInt32(0)...0xA0 { all.unicodeScalars.append(try #require(Unicode.Scalar(value))) }
        let value = JSONValue.object([all: .string("\u{1B}]0;pwned\u{7}\u{9B}2J\u{7F} 😀" + all)])
        let line = String(decoding: value.canonicalBytes, as: UTF8.self).escapingControlCharacters()
        #expect(line.unicodeScalars.allSatisfy { !$0.isControlCharacter })
        #expect(try JSONReader.parse(Array(line.utf8)) == value)
    }

    @Test(arguments: [
        ("Sh\u{1B}op", 0x1B, 3), ("\u{0}", 0x0, 1), ("é\u{9B}2J", 0x9B, 2), ("😀\u{7F}", 0x7F, 2),
        ("e\u{301}\u{7}", 0x7, 3), ("line\nbreak\u{1B}", 0x0A, 5), ("\u{A0}\u{9F}", 0x9F, 2),
    ])
    func theFirstControlCharacterIsFoundWithItsPositionCountedInScalarsFromOne(
        _ text: String, _ value: UInt32, _ position: Int
    ) {
        let found = text.firstControlCharacter
        #expect(found?.character.value == value)
        #expect(found?.position == position)
    }

    @Test func aCodePointIsWrittenAsUnicodeWritesIt() {
        #expect(Unicode.Scalar(UInt8(0x1B)).codePointNotation == "U+001B")
        #expect(Unicode.Scalar(UInt8(0x9B)).codePointNotation == "U+009B")
        #expect(Unicode.Scalar(UInt8(0)).codePointNotation == "U+0000")
        #expect(("😀" as Unicode.Scalar).codePointNotation == "U+1F600")
    }
}
