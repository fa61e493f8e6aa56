/// Durations as people type them on the command line: `90s`, `30m`, `2h`, `42d`, `6w`, and combinations from
/// the largest unit to the smallest such as `1h30m` or `1d12h`.
///
/// Whole numbers only, no sign, no spaces, lower-case units `w` (7 days), `d`, `h`, `m`, `s`, each at most once.
/// `0s` and `0h` are valid (a rollout step at the start). Used by `--for 2h`, `--lifetime 6w` and
/// `--steps "0h:1,24h:5,72h:100"`.
///
/// ```swift
/// try DurationText.parse("1h30m")  // 5400
/// DurationText.format(129_600)     // "1d12h"
/// ```
public enum DurationText {
    /// The units from largest to smallest, with their length in seconds.
    private static let units: [(symbol: UInt8, seconds: Int)] = [
        (UInt8(ascii: "w"), 604_800), (UInt8(ascii: "d"), 86_400), (UInt8(ascii: "h"), 3600),
        (UInt8(ascii: "m"), 60), (UInt8(ascii: "s"), 1),
    ]

    /// The number of seconds a duration text stands for, or an error naming what is wrong and where.
    public static func parse(_ text: some StringProtocol) throws(ParseError) -> Int {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw ParseError(code: .empty) }
        var position = 0
        var total = 0
        var previousUnit = -1  // index into `units`; each next unit must have a larger index
        while position < bytes.count {
            let numberStart = position
            var value = 0
            while position < bytes.count, bytes[position] &- UInt8(ascii: "0") < 10 {
                let digit = Int(bytes[position] &- UInt8(ascii: "0"))
                let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(digit)
                guard !overflow1 && !overflow2 else { throw ParseError(code: .overflow) }
                value = sum
                position += 1
            }
            if position == numberStart {
                if bytes[position] == UInt8(ascii: "-") || bytes[position] == UInt8(ascii: "+") {
                    throw ParseError(code: .signed(at: position))
                }
                throw ParseError(code: .numberExpected(at: position, found: token(bytes, from: position)))
            }
            guard position < bytes.count else { throw ParseError(code: .missingUnit(afterNumberAt: numberStart)) }
            if bytes[position] == UInt8(ascii: ".") || bytes[position] == UInt8(ascii: ",") {
                throw ParseError(code: .fraction(at: position))
            }
            let unitStart = position
            while position < bytes.count && isUnitByte(bytes[position]) { position += 1 }
            guard position - unitStart == 1, let unit = units.firstIndex(where: { $0.symbol == bytes[unitStart] })
            else {
                if position == unitStart {
                    throw ParseError(code: .missingUnit(afterNumberAt: numberStart))
                }
                throw ParseError(code: .unknownUnit(token(bytes, from: unitStart), at: unitStart))
            }
            guard unit > previousUnit else {
                throw ParseError(code: .unitOrder(token(bytes, from: unitStart), at: unitStart))
            }
            previousUnit = unit
            let (seconds, overflow1) = value.multipliedReportingOverflow(by: units[unit].seconds)
            let (sum, overflow2) = total.addingReportingOverflow(seconds)
            guard !overflow1 && !overflow2 else { throw ParseError(code: .overflow) }
            total = sum
        }
        return total
    }

    /// The short form of a number of seconds: whole weeks as `6w`, else days, hours, minutes and seconds with the
    /// zero parts left out (`1d12h`, `1h30m`, `90d`); `0s` for zero; negative values get a leading `-`.
    public static func format(_ seconds: Int) -> String {
        if seconds == 0 { return "0s" }
        var rest = seconds.magnitude
        var text = seconds < 0 ? "-" : ""
        let week = UInt(units[0].seconds)
        if rest % week == 0 { return text + "\(rest / week)w" }
        for (symbol, length) in units.dropFirst() where rest >= UInt(length) {
            text += "\(rest / UInt(length))"
            text.unicodeScalars.append(Unicode.Scalar(symbol))
            rest %= UInt(length)
        }
        return text
    }

    /// Letters, and any non-ASCII byte, so that `2hours` or `5µs` report the whole unit they misspell.
    private static func isUnitByte(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") || byte >= 0x80
    }

    /// The run of unit bytes at `start` (or the single character there) as text, for messages.
    private static func token(_ bytes: [UInt8], from start: Int) -> String {
        var end = start
        while end < bytes.count && isUnitByte(bytes[end]) { end += 1 }
        if end == start {
            // One character, however many UTF-8 bytes it takes.
            end = start + 1
            while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
        }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}

extension DurationText {
    /// Why a text is not a duration, with the UTF-8 offset at fault.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// Internal rather than private so that tests can assert the exact class of rejection.
        enum Code: Sendable, Hashable {
            case empty
            case signed(at: Int)
            case numberExpected(at: Int, found: String)
            case missingUnit(afterNumberAt: Int)
            case fraction(at: Int)
            case unknownUnit(String, at: Int)
            case unitOrder(String, at: Int)
            case overflow
        }

        let code: Code

        /// What is wrong, where, and how to write it instead.
        public var message: String {
            let help = "write a whole number and a unit (w, d, h, m, s), e.g. 90s, 2h, 1h30m, 6w"
            switch code {
            case .empty:
                return "empty duration; \(help)"
            case .signed(let offset):
                return "a duration cannot have a sign (offset \(offset)); \(help)"
            case .numberExpected(let offset, let found):
                return "a number expected at offset \(offset), found '\(found)'; \(help)"
            case .missingUnit(let offset):
                return "the number at offset \(offset) has no unit; \(help)"
            case .fraction(let offset):
                return "whole numbers only (offset \(offset)): write 1h30m rather than 1.5h"
            case .unknownUnit(let unit, let offset):
                return "unknown unit '\(unit)' at offset \(offset); \(help)"
            case .unitOrder(let unit, let offset):
                return "unit '\(unit)' at offset \(offset) repeats or follows a smaller unit; "
                    + "go from largest to smallest, each unit once, e.g. 1d12h"
            case .overflow:
                return "the duration is too long to represent in seconds"
            }
        }

        /// The message.
        public var description: String { message }
    }
}
