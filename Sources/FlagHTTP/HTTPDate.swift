import Glibc

/// The HTTP date format (IMF-fixdate, RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`, without Foundation.
public enum HTTPDate {
    private static let weekdays: [StaticString] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months: [StaticString] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// Formats whole seconds since 1970-01-01T00:00:00Z as an IMF-fixdate.
    public static func format(secondsSince1970: Int64) -> String {
        var bytes: [UInt8] = []
        append(secondsSince1970: secondsSince1970, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the IMF-fixdate for `secondsSince1970` to `bytes`.
    static func append(secondsSince1970 seconds: Int64, to bytes: inout [UInt8]) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civilDate(daysSince1970: days)
        let weekday = Int(((days % 7) + 7) % 7)
        appendStatic(weekdays[weekday], to: &bytes)
        bytes.append(contentsOf: [ASCII.comma, ASCII.space])
        appendDigits(day, width: 2, to: &bytes)
        bytes.append(ASCII.space)
        appendStatic(months[month - 1], to: &bytes)
        bytes.append(ASCII.space)
        appendDigits(Int(year), width: 4, to: &bytes)
        bytes.append(ASCII.space)
        appendDigits(secondOfDay / 3600, width: 2, to: &bytes)
        bytes.append(ASCII.colon)
        appendDigits(secondOfDay / 60 % 60, width: 2, to: &bytes)
        bytes.append(ASCII.colon)
        appendDigits(secondOfDay % 60, width: 2, to: &bytes)
        appendStatic(" GMT", to: &bytes)
    }

    /// Gregorian date from days since the epoch (Howard Hinnant's `civil_from_days`).
    private static func civilDate(daysSince1970: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = daysSince1970 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func appendDigits(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var remainder = max(0, value)
        while divisor > 0 {
            bytes.append(ASCII.zero + UInt8(remainder / divisor % 10))
            remainder %= divisor * 10
            divisor /= 10
        }
    }
}

/// Appends the bytes of a static ASCII string.
@inline(__always)
func appendStatic(_ text: StaticString, to bytes: inout [UInt8]) {
    bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
}

/// Appends a non-negative integer in decimal without going through `String`.
func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
    let value = max(0, value)
    var divisor = 1
    while divisor <= value / 10 { divisor *= 10 }
    var remainder = value
    repeat {
        bytes.append(ASCII.zero + UInt8(remainder / divisor))
        remainder %= divisor
        divisor /= 10
    } while divisor > 0
}

/// The `Date: …\r\n` header line, reformatted at most once per second (one cache per event loop).
struct HTTPDateCache {
    private(set) var line: [UInt8] = []
    /// The wall-clock second `line` shows (what a head encoded with it is valid for).
    private(set) var second: Int64 = .min

    /// Refreshes the cached line if the wall-clock second changed.
    mutating func update(secondsSince1970: Int64) {
        guard secondsSince1970 != second else { return }
        second = secondsSince1970
        var bytes: [UInt8] = []
        bytes.reserveCapacity(37)
        appendStatic("Date: ", to: &bytes)
        HTTPDate.append(secondsSince1970: secondsSince1970, to: &bytes)
        appendStatic("\r\n", to: &bytes)
        line = bytes
    }

    /// The current wall-clock second from the system clock.
    static func wallClockSeconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }
}
