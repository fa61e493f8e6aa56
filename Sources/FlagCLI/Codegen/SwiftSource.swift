import FlagCore

/// Text from a flag set made safe to put into Swift source: string literals, comments and identifiers.
///
/// Descriptions, owners and values come from anyone with an editor token and end up compiled into every app, so
/// nothing from the set may end a comment, end a string or start an interpolation, and nothing invisible (bidi
/// overrides, line separators, control characters) may reach the file, where it could make the code read
/// differently from what it compiles to.
enum SwiftSource {
    /// Whether a scalar may not appear as itself in generated source: control characters (newlines and tabs
    /// included), format characters (the bidi embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069,
    /// the marks U+200E/U+200F, zero-width characters, the byte-order mark), U+2028, U+2029, surrogates, private-use
    /// and unassigned code points.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
        default: false
        }
    }

    /// Whether a scalar is an ASCII letter or digit.
    static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    /// Whether a scalar may be part of an identifier as the generator writes them: `_` or an ASCII letter or digit.
    static func isIdentifierScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || isASCIIAlphanumeric(scalar)
    }

    /// `text` as one line of comment (or message) text: every unsafe scalar becomes a space, runs of spaces
    /// shrink to one, and the ends are trimmed. A line comment ends only at a newline, and none is left.
    static func commentText(_ text: String) -> String {
        var result = ""
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) || scalar == " " {
                pendingSpace = !result.isEmpty
                continue
            }
            if pendingSpace {
                result.unicodeScalars.append(" ")
                pendingSpace = false
            }
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    /// `text` as a Swift string literal whose value is exactly `text`: `"` and `\` escaped (so `\(` stays data),
    /// and every unsafe scalar written as `\n`, `\t`, `\0` or `\u{…}`, so that the source line shows no
    /// invisible or reordering characters.
    static func stringLiteral(_ text: String) -> String {
        var literal = "\""
        var first = true
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": literal += "\\\""
            case "\\": literal += "\\\\"
            case "\n": literal += "\\n"
            case "\r": literal += "\\r"
            case "\t": literal += "\\t"
            case "\0": literal += "\\0"
            default:
                // A combining mark right after the opening quote would join it in editors; escaped it stays data.
                let combining = first && scalar.properties.generalCategory.isMark
                if isUnsafe(scalar) || combining {
                    literal += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    literal.unicodeScalars.append(scalar)
                }
            }
            first = false
        }
        return literal + "\""
    }

    /// The Swift type a flag type is read as, or `nil` for a type this build does not know.
    static func typeName(_ type: FlagType) -> String? {
        switch type {
        case .bool: "Bool"
        case .int: "Int"
        case .double: "Double"
        case .string: "String"
        case .json: "JSONValue"
        case .unknown: nil
        }
    }

    /// A value as a Swift expression of the flag type's Swift type: `true`, `42`, `0.5`, `"Pay"`, and JSON as
    /// `JSONValue` cases, `.object(["a": .int(1)])`, members sorted by their bytes.
    static func literal(_ value: JSONValue, of type: FlagType) -> String {
        switch (type, value) {
        case (.bool, .bool(let flag)): flag ? "true" : "false"
        case (.int, .int(let number)): String(number)
        case (.double, .int(let number)): double(Double(number))
        case (.double, .double(let number)): double(number)
        case (.string, .string(let text)): stringLiteral(text)
        default: json(value)
        }
    }

    /// A `JSONValue` expression.
    static func json(_ value: JSONValue) -> String {
        switch value {
        case .null: ".null"
        case .bool(let flag): ".bool(\(flag))"
        case .int(let number): ".int(\(number))"
        case .double(let number): ".double(\(double(number)))"
        case .string(let text): ".string(\(stringLiteral(text)))"
        case .array(let elements): ".array([" + elements.map(json).joined(separator: ", ") + "])"
        case .object(let members):
            members.isEmpty
                ? ".object([:])"
                : ".object(["
                    + members.keys.sorted(by: utf8Less).map { key in
                        "\(stringLiteral(key)): \(json(members[key] ?? .null))"
                    }.joined(separator: ", ") + "])"
        }
    }

    /// A Double literal that reads back as the same Double: Swift's shortest round-trip form (`0.1`, `1e+20`,
    /// `-0.0`), which always has a point or an exponent. JSON has no infinities or NaN.
    ///
    /// A subnormal number is written in hexadecimal (`0x1p-1074`), which is exact: its shortest decimal form
    /// (`5e-324`) makes the compiler warn that the literal underflows.
    static func double(_ number: Double) -> String {
        guard number.isFinite else { return "0.0" }
        guard number.isSubnormal else { return number.description }
        let sign = number.sign == .minus ? "-" : ""
        return "\(sign)0x\(String(number.significandBitPattern, radix: 16))p-1074"
    }
}

extension Unicode.GeneralCategory {
    /// Combining marks: nonspacing, spacing and enclosing.
    var isMark: Bool {
        switch self {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }
}
