/// Byte classes from RFC 9110/9112 used by the parser and the encoder.
@usableFromInline
enum ASCII {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let comma: UInt8 = 0x2C
    static let percent: UInt8 = 0x25
    static let plus: UInt8 = 0x2B
    static let question: UInt8 = 0x3F
    static let slash: UInt8 = 0x2F
    static let zero: UInt8 = 0x30
    static let leftBracket: UInt8 = 0x5B
    static let rightBracket: UInt8 = 0x5D

    /// `tchar` of RFC 9110 §5.6.2: the bytes allowed in methods and field names.
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        // One bit per byte below 0x80 (a shift and a mask per byte: every header name is checked byte by byte):
        // `!#$%&'*+-.` and digits in the low word, letters and `^_`|~` in the high word.
        let low: UInt64 = 0x03FF_6CFA_0000_0000
        let high: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        switch byte {
        case 0..<64: return low >> UInt64(byte) & 1 == 1
        case 64..<128: return high >> UInt64(byte &- 64) & 1 == 1
        default: return false
        }
    }

    /// A byte allowed inside a field value: VCHAR, obs-text, SP and HTAB (no CR, LF, NUL or other controls).
    @inline(__always)
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    /// Whether every byte is allowed in a field value, eight bytes at a time (a token header is some 80 bytes).
    static func allFieldValueBytes(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // The "has a byte less than n" test: nonzero iff a byte is below 0x20 (a control, or a tab, which the
            // exact loop below then allows) or, after the XOR, equal to 0x7F (DEL).
            let below = (word &- ones &* 0x20) & ~word & highBits
            let delete = word ^ (ones &* 0x7F)
            let isDelete = (delete &- ones) & ~delete & highBits
            if below | isDelete != 0 { break }
            index += 8
        }
        while index < bytes.count {
            guard isFieldValueByte(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    /// A byte allowed in a request target: visible ASCII, no space and no controls.
    @inline(__always)
    static func isTargetByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F
    }

    /// A decimal digit.
    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= 0x30 && byte <= 0x39
    }

    /// Optional whitespace (OWS) of RFC 9110: SP or HTAB.
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == tab
    }

    @inlinable @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// The value of a hexadecimal digit, or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case 0x30...0x39: return Int(byte &- 0x30)
        case 0x41...0x46: return Int(byte &- 0x41 &+ 10)
        case 0x61...0x66: return Int(byte &- 0x61 &+ 10)
        default: return nil
        }
    }

    /// Whether `bytes` equals the lowercase ASCII `lowercaseLiteral`, ignoring ASCII case.
    static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercaseLiteral: StaticString) -> Bool {
        guard bytes.count == lowercaseLiteral.utf8CodeUnitCount else { return false }
        let literal = lowercaseLiteral.utf8Start
        for index in 0..<bytes.count where lowercased(bytes[index]) != literal[index] {
            return false
        }
        return true
    }
}
