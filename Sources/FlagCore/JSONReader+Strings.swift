/// Strings: checked as UTF-8, and their escapes decoded, only where they have any.
extension JSONReader {
    func makeString(_ raw: UnsafeBufferPointer<UInt8>, at start: Int) throws -> String {
        // ASCII needs no validation (`String(validating:)` is slower than this scan on Linux); anything else must
        // be well-formed UTF-8.
        if Self.isASCII(raw) { return String(decoding: raw, as: UTF8.self) }
        guard let string = String(validating: raw, as: UTF8.self) else { throw invalidUTF8(at: start) }
        return string
    }

    /// Checks that a string's bytes are well-formed UTF-8 without keeping the string: skipping a value makes none.
    func checkUTF8(_ raw: UnsafeBufferPointer<UInt8>, at start: Int) throws {
        if Self.isASCII(raw) || String(validating: raw, as: UTF8.self) != nil { return }
        throw invalidUTF8(at: start)
    }

    private static func isASCII(_ raw: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in raw where byte >= 0x80 { return false }
        return true
    }

    private func invalidUTF8(at start: Int) -> JSONError {
        JSONError(message: "a string holds bytes that are not valid UTF-8", offset: start, in: bytes)
    }

    mutating func skipString() throws -> Bool {
        try expect(UInt8(ascii: "\""), "a string")
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                try checkUTF8(UnsafeBufferPointer(rebasing: bytes[start..<position]), at: start)
                position += 1
                return true
            }
            if byte == UInt8(ascii: "\\") {
                _ = try readEscapedString(from: start)
                return true
            }
            if byte < 0x20 { throw error("a control character must be escaped inside a string") }
            position += 1
        }
        position = start - 1
        throw error("a string is not terminated")
    }

    /// The slow path of `readString`: `position` is at the first backslash; `start` just after the opening quote.
    mutating func readEscapedString(from start: Int) throws -> String {
        var utf8 = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return try utf8.withUnsafeBufferPointer { try makeString($0, at: start) }
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { break }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &utf8)
                default:
                    position -= 2
                    throw error("invalid escape sequence in a string")
                }
            default:
                if byte < 0x20 { throw error("a control character must be escaped inside a string") }
                utf8.append(byte)
                position += 1
            }
        }
        position = start - 1
        throw error("a string is not terminated")
    }

    mutating func readHex4() throws -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    mutating func appendUnicodeEscape(to utf8: inout [UInt8]) throws {
        let escapeStart = position - 2
        var scalarValue = try readHex4()
        if (0xD800...0xDBFF).contains(scalarValue) {
            guard position + 2 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
                bytes[position + 1] == UInt8(ascii: "u")
            else {
                position = escapeStart
                throw error("a high surrogate escape must be followed by a low surrogate")
            }
            position += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else {
                position = escapeStart
                throw error("a high surrogate escape must be followed by a low surrogate")
            }
            scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalarValue) {
            position = escapeStart
            throw error("a low surrogate escape without a high surrogate before it")
        }
        guard let scalar = Unicode.Scalar(scalarValue) else {
            position = escapeStart
            throw error("invalid \\u escape")
        }
        UTF8.encode(scalar) { utf8.append($0) }
    }
}
