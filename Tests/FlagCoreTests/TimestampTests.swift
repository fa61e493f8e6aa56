import Foundation
import Testing

@testable import FlagCore

@Suite("ISO8601")
struct TimestampTests {
    @Test("known instants in seconds since 1970")
    func knownInstants() {
        let cases: [(String, Double)] = [
            ("1970-01-01T00:00:00Z", 0),
            ("1970-01-01", 0),
            ("2026-11-29T10:00:00Z", 1_795_946_400),
            ("2000-03-01T00:00:00Z", 951_868_800),
            ("1969-12-31T23:59:59Z", -1),
            ("0001-01-01T00:00:00Z", -62_135_596_800),
            ("9999-12-31T23:59:59Z", 253_402_300_799),
            ("2038-01-19T03:14:08Z", 2_147_483_648),
        ]
        for (text, seconds) in cases {
            #expect(ISO8601.parse(text)?.timeIntervalSince1970 == seconds, "\(text)")
        }
    }

    @Test("format → parse → format round trips, agreeing with Foundation's ISO8601DateFormatter")
    func roundTrips() throws {
        let reference = ISO8601DateFormatter()
        reference.formatOptions = [.withInternetDateTime]
        reference.timeZone = TimeZone(identifier: "UTC")
        var generator = SplitMix64(seed: 42)
        for _ in 0..<2000 {
            // 1900–2200, whole seconds
            let seconds = Double(Int64(generator.next() % 9_467_280_000) - 2_208_988_800)
            let date = Date(timeIntervalSince1970: seconds)
            let text = ISO8601.format(date)
            #expect(text == reference.string(from: date))
            #expect(try ISO8601.date(from: text) == date)
        }
    }

    @Test("every day of years 0001–9999 maps to consecutive day numbers and back")
    func civilCalendar() {
        var expected = ISO8601.daysFromCivil(year: 1, month: 1, day: 1)
        #expect(expected == -719_162)
        var mismatches = 0
        for year in 1...9999 {
            for month in 1...12 {
                for day in 1...ISO8601.daysInMonth(year: year, month: month) {
                    let days = ISO8601.daysFromCivil(year: year, month: month, day: day)
                    let back = ISO8601.civil(fromDays: days)
                    if days != expected || back != (year, month, day) { mismatches += 1 }
                    expected += 1
                }
            }
        }
        #expect(mismatches == 0)
        #expect(ISO8601.daysFromCivil(year: 1970, month: 1, day: 1) == 0)
    }

    @Test("leap years: 2000 and 2024 have Feb 29; 1900, 2023, 2100 do not")
    func leapYears() throws {
        #expect(ISO8601.parse("2000-02-29") != nil)
        #expect(ISO8601.parse("2024-02-29T12:00:00Z") != nil)
        #expect(ISO8601.format(try #require(ISO8601.parse("2024-02-29T23:59:59Z")) + 1) == "2024-03-01T00:00:00Z")
        for text in ["1900-02-29", "2023-02-29", "2100-02-29T00:00:00Z"] {
            #expect(ISO8601.parse(text) == nil, "\(text)")
        }
        #expect(ISO8601.format(try #require(ISO8601.parse("2023-02-28T23:59:59Z")) + 1) == "2023-03-01T00:00:00Z")
    }

    @Test("offsets convert to UTC, across day and year boundaries")
    func offsets() {
        let cases = [
            ("2026-11-29T11:00:00+01:00", "2026-11-29T10:00:00Z"),
            ("2026-11-29T04:30:00-05:30", "2026-11-29T10:00:00Z"),
            ("2026-01-01T00:30:00+01:00", "2025-12-31T23:30:00Z"),
            ("2025-12-31T23:30:00-01:00", "2026-01-01T00:30:00Z"),
            ("2026-11-29T10:00:00-00:00", "2026-11-29T10:00:00Z"),
            ("2026-11-29T10:00:00+23:59", "2026-11-28T10:01:00Z"),
            ("2026-11-29t10:00:00z", "2026-11-29T10:00:00Z"),
        ]
        for (text, utc) in cases {
            #expect(ISO8601.parse(text).map(ISO8601.format) == utc, "\(text)")
        }
    }

    @Test("fractions are kept when parsing and floored when formatting")
    func fractions() throws {
        #expect(ISO8601.parse("2026-11-29T10:00:00.5Z")?.timeIntervalSince1970 == 1_795_946_400.5)
        #expect(ISO8601.parse("1970-01-01T00:00:00.25Z")?.timeIntervalSince1970 == 0.25)
        // `Date` counts from 2001 in a Double, so near 1970 only about 0.1 µs survives.
        let nano = try #require(ISO8601.parse("1970-01-01T00:00:00.000000001Z"))
        #expect(abs(nano.timeIntervalSince1970 - 1e-9) < 1e-6)
        let long = try #require(ISO8601.parse("1970-01-01T00:00:00.1234567890123Z"))
        #expect(abs(long.timeIntervalSince1970 - 0.123456789) < 1e-6)
        let micro = try #require(ISO8601.parse("2026-11-29T10:00:00.000250Z"))
        #expect(abs(micro.timeIntervalSince1970 - 1_795_946_400.00025) < 1e-6)
        #expect(ISO8601.format(try ISO8601.date(from: "2026-11-29T10:00:00.999Z")) == "2026-11-29T10:00:00Z")
        #expect(ISO8601.format(try ISO8601.date(from: "2026-11-29T11:00:00.75+01:00")) == "2026-11-29T10:00:00Z")
        // Before 1970 flooring goes down, not toward zero.
        #expect(ISO8601.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59Z")
        #expect(ISO8601.format(try ISO8601.date(from: "1969-12-31T23:59:59.5Z")) == "1969-12-31T23:59:59Z")
    }

    @Test("format pads years and clamps outside 0001–9999")
    func formatRange() {
        #expect(ISO8601.format(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: -1e15)) == "0001-01-01T00:00:00Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1e15)) == "9999-12-31T23:59:59Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: .nan)) == "0001-01-01T00:00:00Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: .infinity)) == "9999-12-31T23:59:59Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: 253_402_300_799.9)) == "9999-12-31T23:59:59Z")
    }

    @Test("substrings parse in place")
    func substrings() {
        let line = "at=2026-11-29T10:00:00Z;"
        let slice = line.dropFirst(3).dropLast()
        #expect(ISO8601.parse(slice)?.timeIntervalSince1970 == 1_795_946_400)
    }

    typealias Code = ISO8601.ParseError.Code

    static let rejections: [(String, Code)] = [
        ("", .expected(.digit, at: 0)),
        ("2026", .expected(.hyphen, at: 4)),
        ("2026-1-29", .expected(.digit, at: 6)),
        ("26-11-29", .expected(.digit, at: 2)),
        ("2026/11/29", .expected(.hyphen, at: 4)),
        ("0000-01-01", .outOfRange(.year, value: 0)),
        ("2026-13-01", .outOfRange(.month, value: 13)),
        ("2026-00-01", .outOfRange(.month, value: 0)),
        ("2026-02-30", .noSuchDay(year: 2026, month: 2, day: 30)),
        ("2026-04-31", .noSuchDay(year: 2026, month: 4, day: 31)),
        ("2026-01-00", .noSuchDay(year: 2026, month: 1, day: 0)),
        ("2026-01-32T00:00:00Z", .noSuchDay(year: 2026, month: 1, day: 32)),
        ("2026-11-29T24:00:00Z", .outOfRange(.hour, value: 24)),
        ("2026-11-29T10:60:00Z", .outOfRange(.minute, value: 60)),
        ("2026-11-29T23:59:60Z", .outOfRange(.second, value: 60)),
        ("2026-11-29T10:00:00", .missingZone),
        ("2026-11-29T10:00:00.5", .missingZone),
        ("2026-11-29T10:00Z", .expected(.colon, at: 16)),
        ("2026-11-29 10:00:00Z", .expected(.timeSeparator, at: 10)),
        ("2026-11-29Z", .expected(.timeSeparator, at: 10)),
        ("2026-11-29T", .expected(.digit, at: 11)),
        ("2026-11-29T10:00:00.Z", .expected(.fractionDigit, at: 20)),
        ("2026-11-29T10:00:00,5Z", .expected(.zone, at: 19)),
        ("2026-11-29T10:00:00+0100", .expected(.colon, at: 22)),
        ("2026-11-29T10:00:00+01", .expected(.colon, at: 22)),
        ("2026-11-29T10:00:00+24:00", .outOfRange(.offsetHour, value: 24)),
        ("2026-11-29T10:00:00+01:60", .outOfRange(.offsetMinute, value: 60)),
        ("2026-11-29T10:00:00 Z", .expected(.zone, at: 19)),
        ("2026-11-29T10:00:00ZZ", .trailing(at: 20)),
        ("2026-11-29T10:00:00Z ", .trailing(at: 20)),
        (" 2026-11-29T10:00:00Z", .expected(.digit, at: 0)),
        ("２０２６-11-29", .expected(.digit, at: 0)),
        ("2026-11-29T10:00:00UTC", .expected(.zone, at: 19)),
    ]

    @Test("every rejection class, with the code and offset", arguments: rejections)
    func rejects(text: String, code: Code) {
        #expect(ISO8601.parse(text) == nil)
        #expect(throws: ISO8601.ParseError(code: code)) { try ISO8601.date(from: text) }
    }

    @Test("messages name the fault without repeating the input")
    func messages() {
        func message(_ text: String) -> String {
            do {
                _ = try ISO8601.date(from: text)
                return ""
            } catch {
                return error.message
            }
        }
        #expect(message("2026-13-01") == "month 13 is out of range 01–12")
        #expect(message("2026-02-30") == "day 30 does not exist in month 2 of year 2026")
        #expect(message("2026-11-29T10:00:00").hasPrefix("a date-time needs a zone"))
        #expect(message("2026-11-29T24:00:00Z") == "hour 24 is out of range 00–23")
        #expect(message("2026/11/29").hasPrefix("'-' expected at offset 4"))
        #expect(message("2026-11-29T10:00:00Zjunk").hasPrefix("unexpected text at offset 20"))
    }
}
