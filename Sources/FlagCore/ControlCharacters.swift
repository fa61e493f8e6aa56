// Control characters (Unicode's general category Cc: C0 U+0000–U+001F, DEL U+007F, C1 U+0080–U+009F) are obeyed by
// a terminal, not shown: ESC (U+001B) and CSI (U+009B) start sequences that move the cursor, rewrite the screen or
// set the window title. Strings that anyone with a public SDK key or an editor token can write reach admins'
// terminals through flagctl, so the server refuses them in telemetry and flagctl shows them as escapes. What admins
// write (descriptions, rule names, reasons) is refused with them too, when written (`controlCharacterRefusal`);
// stored text keeps being served, and flagctl escapes it.

extension Unicode.Scalar {
    /// Whether this is a control character: C0 (U+0000–U+001F), DEL (U+007F) or C1 (U+0080–U+009F).
    public var isControlCharacter: Bool {
        value < 0x20 || (0x7F...0x9F).contains(value)
    }

    /// `U+001B`: the scalar as Unicode writes it, four hexadecimal digits or more.
    public var codePointNotation: String {
        let digits = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

extension StringProtocol {
    /// Whether any UTF-8 byte could belong to a control character: a C0 or DEL byte, or 0xC2, which leads the C1
    /// characters (and U+00A0–U+00BF, which the careful look then keeps). One pass over the bytes, so that text
    /// without controls, nearly all of it, costs no more.
    private var mayHaveControlCharacters: Bool {
        utf8.contains { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 }
    }

    /// The first control character and its position, counted in Unicode scalars from 1; `nil` when there is none.
    public var firstControlCharacter: (character: Unicode.Scalar, position: Int)? {
        guard mayHaveControlCharacters else { return nil }
        for (offset, scalar) in unicodeScalars.enumerated() where scalar.isControlCharacter {
            return (scalar, offset + 1)
        }
        return nil
    }

    /// Why this text, written by a person for people to read, is refused, or `nil` when it is not: it has a control
    /// character. `multiline` text (a description) may hold line breaks (U+000A) and tabs (U+0009); every other
    /// control character is refused in it too. The reason follows the member's name, as the telemetry route's do:
    ///
    /// ```swift
    /// "ship\u{1B}[2J".controlCharacterRefusal()  // contains the control character U+001B at position 5; write …
    /// ```
    public func controlCharacterRefusal(multiline: Bool = false) -> String? {
        guard mayHaveControlCharacters else { return nil }
        for (offset, scalar) in unicodeScalars.enumerated() where scalar.isControlCharacter {
            if multiline, scalar == "\n" || scalar == "\t" { continue }
            let remedy =
                multiline
                ? "write printable text; line breaks and tabs may stay" : "write printable text on one line"
            return "contains the control character \(scalar.codePointNotation) at position \(offset + 1); \(remedy)"
        }
        return nil
    }

    /// The text with every control character written as a visible escape, so that a terminal shows it rather than
    /// obeys it: `\t`, `\n`, `\r` and `\e` (ESC) for the common four, `\u` and four hexadecimal digits for the others
    /// (`\u0000`, `\u0007`, `\u007f`, `\u009b`). Every other character, emoji and right-to-left text included, is
    /// kept.
    ///
    /// `keepingLineBreaks` keeps `\n` as a line break, for text made of lines on purpose (help, a generated file);
    /// a value that must stay on its line (a table cell, a `key: value` line) leaves it off.
    ///
    /// The `\u` form is JSON's, so a line of JSON, in which JSON has already escaped every C0 character, is the
    /// same JSON after this. A backslash stays as it is: the escapes are for people to read, not to be read back
    /// (`--json` carries the exact text).
    ///
    /// ```swift
    /// "\u{1B}]0;pwned\u{7}".escapingControlCharacters()  // \e]0;pwned\u0007
    /// ```
    public func escapingControlCharacters(keepingLineBreaks: Bool = false) -> String {
        guard mayHaveControlCharacters else { return String(self) }
        var escaped = ""
        escaped.reserveCapacity(utf8.count + 16)
        for scalar in unicodeScalars {
            guard scalar.isControlCharacter, !(keepingLineBreaks && scalar == "\n") else {
                escaped.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\t": escaped += "\\t"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\u{1B}": escaped += "\\e"
            default:
                let digits = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            }
        }
        return escaped
    }
}
