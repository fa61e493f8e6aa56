import Foundation

/// ISO-8601 instants as the wire format writes them (RFC 3339 profile), without Foundation's slow formatters.
///
/// Writes whole-second UTC, `2026-11-29T10:00:00Z`. Reads `YYYY-MM-DDTHH:MM:SS`, an optional `.fraction`, and
/// a zone `Z` or `±HH:MM` (RFC 3339 also allows lower-case `t` and `z`), or a plain date `YYYY-MM-DD` meaning
/// midnight UTC. Everything else is rejected: impossible dates (`2026-02-30`), hour 24, leap seconds (`:60`,
/// which `Date` cannot represent), a date-time without a zone, spaces, and years outside 0001–9999 (in UTC too:
/// `0001-01-01T00:00:00+01:00` is in year 0).
///
/// ```swift
/// let date = ISO8601.parse("2026-11-29T11:00:00.75+01:00")!
/// ISO8601.format(date)  // "2026-11-29T10:00:00Z"
/// ```
public enum ISO8601 {
    /// Parses an instant; nil when the text is not one of the accepted forms.
    @inlinable
    public static func parse(_ text: some StringProtocol) -> Date? {
        switch scan(text) {
        case .success(let seconds): return Date(timeIntervalSince1970: seconds)
        case .failure: return nil
        }
    }

    /// Parses an instant, or throws an error that names what is wrong and where.
    @inlinable
    public static func date(from text: some StringProtocol) throws(ParseError) -> Date {
        try Date(timeIntervalSince1970: scan(text).get())
    }

    /// Seconds since 1970; inlinable so that the generic parameter is specialized in the caller (hot path).
    @inlinable
    static func scan(_ text: some StringProtocol) -> Result<Double, ParseError> {
        if let result = text.utf8.withContiguousStorageIfAvailable({ scan(bytes: $0) }) { return result }
        return scan(copying: String(text))
    }

    /// Whole-second UTC, `YYYY-MM-DDTHH:MM:SSZ`, with fractions of a second dropped (floored).
    ///
    /// Dates outside years 0001–9999 (and non-finite ones) are clamped to that range so the result always parses.
    public static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        let total: Int
        if interval >= Double(maxSeconds) {
            total = maxSeconds
        } else if interval >= Double(minSeconds) {
            total = Int(interval.rounded(.down))
        } else {
            total = minSeconds  // also NaN, which fails both comparisons
        }
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondOfDay = total - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        return String(unsafeUninitializedCapacity: 20) { buffer in
            func put(_ value: Int, _ width: Int, at offset: Int) {
                var rest = value
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
            }
            put(year, 4, at: 0)
            buffer[4] = UInt8(ascii: "-")
            put(month, 2, at: 5)
            buffer[7] = UInt8(ascii: "-")
            put(day, 2, at: 8)
            buffer[10] = UInt8(ascii: "T")
            put(secondOfDay / 3600, 2, at: 11)
            buffer[13] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, 2, at: 14)
            buffer[16] = UInt8(ascii: ":")
            put(secondOfDay % 60, 2, at: 17)
            buffer[19] = UInt8(ascii: "Z")
            return 20
        }
    }

    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in seconds since 1970.
    static let minSeconds = daysFromCivil(year: 1, month: 1, day: 1) * 86_400
    static let maxSeconds = daysFromCivil(year: 9999, month: 12, day: 31) * 86_400 + 86_399

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (Hinnant's `civil_from_days`).
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The number of days in a month of the proleptic Gregorian calendar.
    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
