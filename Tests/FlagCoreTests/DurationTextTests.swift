import Testing

@testable import FlagCore

@Suite("DurationText")
struct DurationTextTests {
    static let accepted: [(String, Int)] = [
        ("90s", 90), ("30m", 1800), ("2h", 7200), ("42d", 3_628_800), ("6w", 3_628_800),
        ("0h", 0), ("0s", 0), ("1s", 1), ("007m", 420),
        ("1h30m", 5400), ("1d12h", 129_600), ("2h15s", 7215), ("1w2d3h4m5s", 788_645), ("72h", 259_200),
        ("9223372036854775807s", Int.max),
    ]

    @Test("each unit and combinations", arguments: accepted)
    func parses(text: String, seconds: Int) throws {
        #expect(try DurationText.parse(text) == seconds)
        #expect(try DurationText.parse(text[...]) == seconds)
    }

    typealias Code = DurationText.ParseError.Code

    static let rejected: [(String, Code)] = [
        ("", .empty),
        ("-1h", .signed(at: 0)),
        ("+1h", .signed(at: 0)),
        ("1h-30m", .signed(at: 2)),
        ("0x", .unknownUnit("x", at: 1)),
        ("0x1F", .unknownUnit("x", at: 1)),
        ("2H", .unknownUnit("H", at: 1)),
        ("2hours", .unknownUnit("hours", at: 1)),
        ("90ms", .unknownUnit("ms", at: 2)),
        ("5µs", .unknownUnit("µs", at: 1)),
        ("3y", .unknownUnit("y", at: 1)),
        ("90", .missingUnit(afterNumberAt: 0)),
        ("1h30", .missingUnit(afterNumberAt: 2)),
        ("1 h", .missingUnit(afterNumberAt: 0)),
        ("1h 30m", .numberExpected(at: 2, found: " ")),
        ("h", .numberExpected(at: 0, found: "h")),
        ("😀", .numberExpected(at: 0, found: "😀")),
        ("1.5h", .fraction(at: 1)),
        ("1,5h", .fraction(at: 1)),
        ("30m1h", .unitOrder("h", at: 4)),
        ("1h1h", .unitOrder("h", at: 3)),
        ("1s1s", .unitOrder("s", at: 3)),
        ("9223372036854775808s", .overflow),
        ("99999999999999999999999h", .overflow),
        ("15250284452472w", .overflow),
        ("15250284452471w9999999d", .overflow),
    ]

    @Test("every rejection class, with the code and offset", arguments: rejected)
    func rejects(text: String, code: Code) {
        #expect(throws: DurationText.ParseError(code: code)) { try DurationText.parse(text) }
    }

    @Test("messages say what is wrong and how to write it")
    func messages() {
        func message(_ text: String) -> String {
            do {
                _ = try DurationText.parse(text)
                return ""
            } catch {
                return error.message
            }
        }
        #expect(
            message("0x").hasPrefix("unknown unit 'x' at offset 1; write a whole number and a unit (w, d, h, m, s)"))
        #expect(message("-1h").hasPrefix("a duration cannot have a sign"))
        #expect(message("").hasPrefix("empty duration"))
        #expect(message("1.5h") == "whole numbers only (offset 1): write 1h30m rather than 1.5h")
        #expect(message("99999999999999999999s") == "the duration is too long to represent in seconds")
        #expect(message("30m1h").contains("go from largest to smallest"))
    }

    @Test("short form")
    func format() {
        let cases: [(Int, String)] = [
            (0, "0s"), (1, "1s"), (90, "1m30s"), (1800, "30m"), (7200, "2h"), (5400, "1h30m"), (129_600, "1d12h"),
            (3_628_800, "6w"), (604_800, "1w"), (1_209_600, "2w"), (7_776_000, "90d"), (691_200, "8d"),
            (86_401, "1d1s"), (-3600, "-1h"), (-5400, "-1h30m"),
        ]
        for (seconds, text) in cases {
            #expect(DurationText.format(seconds) == text, "\(seconds)")
        }
        #expect(DurationText.format(Int.min).hasPrefix("-"))
    }

    @Test("format then parse gives the same number of seconds")
    func roundTrip() throws {
        var generator = SplitMix64(seed: 7)
        var samples = [0, 1, 59, 60, 3599, 3600, 86_399, 86_400, 604_799, 604_800, Int.max]
        for _ in 0..<2000 { samples.append(Int(generator.next() % 100_000_000)) }
        for seconds in samples {
            #expect(try DurationText.parse(DurationText.format(seconds)) == seconds, "\(seconds)")
        }
    }
}
