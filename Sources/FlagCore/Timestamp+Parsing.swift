extension ISO8601 {
    /// Why a text is not an accepted ISO-8601 instant, with the UTF-8 offset or the field at fault.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// Internal rather than private so that tests can assert the exact class of rejection.
        enum Code: Sendable, Hashable {
            case expected(Token, at: Int)
            case outOfRange(Field, value: Int)
            case noSuchDay(year: Int, month: Int, day: Int)
            /// The text's fields are in range, but its offset moves the UTC instant outside years 0001–9999.
            case instantOutOfRange
            case missingZone
            case trailing(at: Int)
        }

        /// What the parser looked for.
        enum Token: Sendable, Hashable {
            case digit, hyphen, colon, timeSeparator, fractionDigit, zone
        }

        /// A date or time component.
        enum Field: String, Sendable, Hashable {
            case year, month, hour, minute, second
            case offsetHour = "offset hour"
            case offsetMinute = "offset minute"
        }

        let code: Code

        /// What is wrong and where; the text itself is not repeated.
        public var message: String {
            let forms = "expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)"
            switch code {
            case .expected(let token, let offset):
                return "\(token.name) expected at offset \(offset) of the timestamp; \(forms)"
            case .outOfRange(let field, let value):
                return "\(field.rawValue) \(value) is out of range \(field.range)"
            case .noSuchDay(let year, let month, let day):
                return "day \(day) does not exist in month \(month) of year \(year)"
            case .instantOutOfRange:
                return "the offset moves the instant outside years 0001–9999 in UTC"
            case .missingZone:
                return "a date-time needs a zone: append Z for UTC or an offset like +01:00"
            case .trailing(let offset):
                return "unexpected text at offset \(offset) after the timestamp; \(forms)"
            }
        }

        /// The message.
        public var description: String { message }
    }

    /// The slow path for text without contiguous UTF-8 storage.
    @usableFromInline
    static func scan(copying text: String) -> Result<Double, ParseError> {
        var copy = text
        return copy.withUTF8 { scan(bytes: $0) }
    }

    /// Seconds since 1970 of the instant in `bytes`.
    @usableFromInline
    static func scan(bytes: UnsafeBufferPointer<UInt8>) -> Result<Double, ParseError> {
        var reader = Reader(bytes: bytes)
        do throws(ParseError) {
            let year = try reader.number(digits: 4)
            try reader.expect(UInt8(ascii: "-"), .hyphen)
            let month = try reader.number(digits: 2)
            try reader.expect(UInt8(ascii: "-"), .hyphen)
            let day = try reader.number(digits: 2)
            guard year >= 1 else { throw ParseError(code: .outOfRange(.year, value: year)) }
            guard (1...12).contains(month) else { throw ParseError(code: .outOfRange(.month, value: month)) }
            guard day >= 1 && day <= daysInMonth(year: year, month: month) else {
                throw ParseError(code: .noSuchDay(year: year, month: month, day: day))
            }
            let days = daysFromCivil(year: year, month: month, day: day)
            if reader.atEnd { return .success(Double(days * 86_400)) }

            guard reader.skip(UInt8(ascii: "T")) || reader.skip(UInt8(ascii: "t")) else {
                throw ParseError(code: .expected(.timeSeparator, at: reader.position))
            }
            let hour = try reader.number(digits: 2, field: .hour, max: 23)
            try reader.expect(UInt8(ascii: ":"), .colon)
            let minute = try reader.number(digits: 2, field: .minute, max: 59)
            try reader.expect(UInt8(ascii: ":"), .colon)
            let second = try reader.number(digits: 2, field: .second, max: 59)
            let fraction = try reader.fraction()
            let offset = try reader.zone()
            guard reader.atEnd else { throw ParseError(code: .trailing(at: reader.position)) }
            let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
            // `format` clamps to this range, so an instant outside it would not survive a write and a read.
            guard (minSeconds...maxSeconds).contains(seconds) else { throw ParseError(code: .instantOutOfRange) }
            return .success(Double(seconds) + fraction)
        } catch {
            return .failure(error)
        }
    }

    /// A cursor over the UTF-8 bytes with typed-throwing steps.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        var atEnd: Bool { position == bytes.count }

        mutating func skip(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        mutating func expect(_ byte: UInt8, _ token: ParseError.Token) throws(ParseError) {
            guard skip(byte) else { throw ParseError(code: .expected(token, at: position)) }
        }

        mutating func digit(_ token: ParseError.Token = .digit) throws(ParseError) -> Int {
            guard position < bytes.count, bytes[position] &- UInt8(ascii: "0") < 10 else {
                throw ParseError(code: .expected(token, at: position))
            }
            position += 1
            return Int(bytes[position - 1] &- UInt8(ascii: "0"))
        }

        mutating func number(digits: Int) throws(ParseError) -> Int {
            var value = 0
            for _ in 0..<digits { value = value * 10 + (try digit()) }
            return value
        }

        mutating func number(digits: Int, field: ParseError.Field, max: Int) throws(ParseError) -> Int {
            let value = try number(digits: digits)
            guard value <= max else { throw ParseError(code: .outOfRange(field, value: value)) }
            return value
        }

        /// An optional `.digits`; digits past nanoseconds are read and dropped.
        mutating func fraction() throws(ParseError) -> Double {
            guard skip(UInt8(ascii: ".")) else { return 0 }
            var nanoseconds = try digit(.fractionDigit)
            var scale = 100_000_000
            nanoseconds *= scale
            while position < bytes.count, bytes[position] &- UInt8(ascii: "0") < 10 {
                scale /= 10
                nanoseconds += Int(bytes[position] &- UInt8(ascii: "0")) * scale
                position += 1
            }
            return Double(nanoseconds) / 1e9
        }

        /// The zone's offset east of UTC in seconds.
        mutating func zone() throws(ParseError) -> Int {
            if skip(UInt8(ascii: "Z")) || skip(UInt8(ascii: "z")) { return 0 }
            let sign: Int
            if skip(UInt8(ascii: "+")) {
                sign = 1
            } else if skip(UInt8(ascii: "-")) {
                sign = -1
            } else if atEnd {
                throw ParseError(code: .missingZone)
            } else {
                throw ParseError(code: .expected(.zone, at: position))
            }
            let hours = try number(digits: 2, field: .offsetHour, max: 23)
            try expect(UInt8(ascii: ":"), .colon)
            let minutes = try number(digits: 2, field: .offsetMinute, max: 59)
            return sign * (hours * 3600 + minutes * 60)
        }
    }
}

extension ISO8601.ParseError.Token {
    fileprivate var name: String {
        switch self {
        case .digit: return "a digit"
        case .hyphen: return "'-'"
        case .colon: return "':'"
        case .timeSeparator: return "'T' (or the end, for a plain date)"
        case .fractionDigit: return "a digit after '.'"
        case .zone: return "'Z' or an offset like +01:00"
        }
    }
}

extension ISO8601.ParseError.Field {
    fileprivate var range: String {
        switch self {
        case .year: return "0001–9999"
        case .month: return "01–12"
        case .hour, .offsetHour: return "00–23"
        case .minute, .second, .offsetMinute: return "00–59"
        }
    }
}
