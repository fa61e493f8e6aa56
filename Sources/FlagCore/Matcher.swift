import Foundation

/// A condition with its operands parsed once (numbers, versions, instants, regular expressions, cohort indexes):
/// what `Compiler` checks and `ProgramBuilder` lowers into a `ConditionRecord`.
final class Matcher: Sendable {
    enum Comparison: Sendable {
        case lt, lte, gt, gte, eq

        /// Whether an ordering (-1, 0, 1 as lhs is lower, equal, higher) satisfies the comparison.
        @inline(__always)
        func holds(_ order: Int) -> Bool {
            switch self {
            case .lt: order < 0
            case .lte: order <= 0
            case .gt: order > 0
            case .gte: order >= 0
            case .eq: order == 0
            }
        }

        @inline(__always)
        func holds(_ lhs: Double, _ rhs: Double) -> Bool {
            holds(lhs < rhs ? -1 : lhs == rhs ? 0 : 1)
        }
    }

    enum Test: Sendable {
        /// `eq`, `in`: equal to any operand.
        case equals([String])
        /// `neq`, `not_in`: equal to none.
        case equalsNone([String])
        case contains([String])
        case startsWith([String])
        case endsWith([String])
        case matches([Pattern])
        case number(Comparison, [Double])
        case semver(Comparison, [VersionOperand])
        /// `before` (`.lt`) and `after` (`.gt`), in seconds since 1970.
        case instant(Comparison, [Double])
        case exists
        case notExists
        case inCohort([Int])
    }

    /// The test, without payloads: the operands live in typed arrays below.
    enum Kind: Sendable {
        case equals, equalsNone, contains, startsWith, endsWith, matches, number, semver, instant
        case exists, notExists, inCohort
    }

    let attribute: String
    /// `unitID` is read from the context's unit, not from its attributes.
    let isUnitID: Bool
    let kind: Kind
    let comparison: Comparison
    let strings: [String]
    let numbers: [Double]
    let versions: [VersionOperand]
    let patterns: [Pattern]
    /// The cohorts of an `in_cohort` condition.
    let cohorts: [Int]

    init(attribute: String, test: Test) {
        self.attribute = attribute
        self.isUnitID = attribute == "unitID"
        var strings: [String] = []
        var numbers: [Double] = []
        var versions: [VersionOperand] = []
        var patterns: [Pattern] = []
        var cohorts: [Int] = []
        var comparison = Comparison.eq
        switch test {
        case .equals(let operands): (kind, strings) = (.equals, operands)
        case .equalsNone(let operands): (kind, strings) = (.equalsNone, operands)
        case .contains(let operands): (kind, strings) = (.contains, operands)
        case .startsWith(let operands): (kind, strings) = (.startsWith, operands)
        case .endsWith(let operands): (kind, strings) = (.endsWith, operands)
        case .matches(let operands): (kind, patterns) = (.matches, operands)
        case .number(let order, let operands): (kind, comparison, numbers) = (.number, order, operands)
        case .semver(let order, let operands): (kind, comparison, versions) = (.semver, order, operands)
        case .instant(let order, let operands): (kind, comparison, numbers) = (.instant, order, operands)
        case .exists: kind = .exists
        case .notExists: kind = .notExists
        case .inCohort(let operands): (kind, cohorts) = (.inCohort, operands)
        }
        self.comparison = comparison
        self.strings = strings
        self.numbers = numbers
        self.versions = versions
        self.patterns = patterns
        self.cohorts = cohorts
    }
}

/// A semver operand, with its plain numeric form when it has one.
struct VersionOperand: Sendable {
    let version: SemanticVersion
    let plain: PlainVersion?

    init(_ version: SemanticVersion) {
        self.version = version
        self.plain = PlainVersion(version.description)
    }
}

/// A version of the form MAJOR.MINOR.PATCH with no pre-release or build part and numbers below 10^18.
struct PlainVersion: Sendable {
    let major: UInt64
    let minor: UInt64
    let patch: UInt64

    init?(_ text: String) {
        guard let parsed = withBytes(of: text, Self.parse) else { return nil }
        (major, minor, patch) = parsed
    }

    private static func parse(_ utf8: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64, UInt64)? {
        var parts: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var index = 0
        var current: UInt64 = 0
        var digits = 0
        var leadingZero = false
        for byte in utf8 {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, index < 2 else { return nil }
                if index == 0 { parts.0 = current } else { parts.1 = current }
                index += 1
                current = 0
                digits = 0
                continue
            }
            let digit = byte &- UInt8(ascii: "0")
            // A leading zero followed by more digits is invalid SemVer; leave it to the strict parser.
            guard digit < 10, digits < 18, !(leadingZero && digits == 1) else { return nil }
            leadingZero = digits == 0 && digit == 0
            current = current * 10 + UInt64(digit)
            digits += 1
        }
        guard index == 2, digits > 0 else { return nil }
        parts.2 = current
        return parts
    }

    func compare(to other: PlainVersion) -> Int {
        if major != other.major { return major < other.major ? -1 : 1 }
        if minor != other.minor { return minor < other.minor ? -1 : 1 }
        if patch != other.patch { return patch < other.patch ? -1 : 1 }
        return 0
    }

    /// The full version, for comparing against an operand that is not plain.
    func semanticVersion(_ text: String) -> SemanticVersion {
        // `text` parsed as plain, so it is a valid SemVer version; the fallback cannot be reached.
        SemanticVersion(text) ?? SemanticVersion("0.0.0")!
    }
}

/// Runs `body` on the UTF-8 bytes of a string without copying a native string (`withUTF8` needs a mutable copy,
/// which costs a retain and release on every call).
@inline(__always)
func withBytes<R>(of string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
    return Array(string.utf8).withUnsafeBufferPointer(body)
}

/// A compiled regular expression (ICU syntax, unanchored search: `matches` is true if the pattern is found
/// anywhere in the value; anchor with `^…$` for a whole match).
///
/// ICU backtracks, so even an ordinary pattern can take polynomial time on a long value (`a*b` on 20,000 `a`s, or
/// `a*a*a*b` on 400, takes seconds; RELIABILITY.md has the figures), and OFREP clients choose the values the server
/// tests. So every test runs with
/// a step limit. ICU reports progress every 10,000 steps of its engine; an unanchored search also reports each start
/// position it tries, which would make the limit grow with the value. So the pattern runs as `(?s:.*?)(?:P)`,
/// anchored at the value's start: the same matches as searching for `P` (the lazy prefix tries each start in turn),
/// one start, and every report is 10,000 steps. A search still running after `progressLimit` reports stops and
/// counts as no match. Steps are counted, not time, so the answer does not depend on the machine or its load.
/// (Without the limit, ICU gave up on this form by itself after tens of millions of steps, silently, as if nothing
/// matched; the limit is far below that.)
final class Pattern: @unchecked Sendable {
    /// Reports (of 10,000 engine steps each) after which a search stops: about a million steps, a bound on the time
    /// one attribute can cost an evaluation (RELIABILITY.md has what it takes). A linear pattern on a
    /// 10,000-character value stays far below it.
    static let progressLimit = 100

    enum Invalid: Error {
        /// Not an ICU regular expression.
        case syntax
        /// Valid alone, but it does not stay inside a group: an unclosed `\Q` quote or a `(?x)` comment running to
        /// the pattern's end would swallow the `)` that closes the search's group.
        case openAtEnd
    }

    /// What a search found.
    enum Search: Equatable {
        case matched, notMatched
        /// The step limit stopped the search; `matches` counts this as no match.
        case stopped
    }

    /// `(?s:.*?)(?:P)`, run anchored. NSRegularExpression is immutable after creation and documented as safe to use
    /// from several threads.
    private let expression: NSRegularExpression

    init(_ source: String) throws(Invalid) {
        // The pattern alone is compiled too, once, when the set is compiled: some non-patterns read as valid once
        // wrapped (`a)|(b` becomes `(?:a)|(b)`). ICU's own message is not kept; the problem names the pattern.
        guard (try? NSRegularExpression(pattern: source)) != nil else { throw .syntax }
        guard let expression = try? NSRegularExpression(pattern: "(?s:.*?)(?:" + source + ")") else {
            throw .openAtEnd
        }
        self.expression = expression
    }

    /// Whether the pattern repeats a group that itself repeats or alternates (`(a+)+`, `(a|ab)*`, `(x*y){2,}`):
    /// ICU backtracks, so such a pattern can take exponential time on a short attribute value (`^(a+)+$` takes a
    /// second on 25 characters). Sets are evaluated on the server for OFREP clients, with attributes the clients
    /// choose, so these patterns are rejected on write. Conservative: it looks at the pattern's shape only.
    static func hasNestedRepetition(_ source: String) -> Bool {
        let bytes = Array(source.utf8)
        // For each open group: whether it contains a repetition or an alternation.
        var groups: [Bool] = []
        var index = 0
        var lastGroupRisky = false
        while index < bytes.count {
            let byte = bytes[index]
            var closedRiskyGroup = false
            switch byte {
            case UInt8(ascii: "\\"):
                index += 1  // the escaped character is a literal
            case UInt8(ascii: "["):
                // Skip a character class; `]` right after `[` or `[^` is a literal.
                index += 1
                if index < bytes.count && bytes[index] == UInt8(ascii: "^") { index += 1 }
                if index < bytes.count && bytes[index] == UInt8(ascii: "]") { index += 1 }
                while index < bytes.count && bytes[index] != UInt8(ascii: "]") {
                    if bytes[index] == UInt8(ascii: "\\") { index += 1 }
                    index += 1
                }
            case UInt8(ascii: "("):
                groups.append(false)
            case UInt8(ascii: ")"):
                closedRiskyGroup = groups.popLast() ?? false
            case UInt8(ascii: "|"):
                if !groups.isEmpty { groups[groups.count - 1] = true }
            case UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "{"):
                if lastGroupRisky { return true }
                if !groups.isEmpty { groups[groups.count - 1] = true }
            default:
                break
            }
            // A group's risk passes to its parent, and to a repetition right after it.
            if closedRiskyGroup, !groups.isEmpty { groups[groups.count - 1] = true }
            lastGroupRisky = closedRiskyGroup
            index += 1
        }
        return false
    }

    func matches(_ value: String) -> Bool {
        search(value) == .matched
    }

    func search(_ value: String) -> Search {
        var outcome = Search.notMatched
        var reports = 0
        expression.enumerateMatches(
            in: value, options: [.anchored, .reportProgress], range: NSRange(value.startIndex..., in: value)
        ) { result, _, stop in
            if result != nil {
                outcome = .matched
                stop.pointee = true
            } else {
                reports += 1
                if reports > Pattern.progressLimit {
                    outcome = .stopped
                    stop.pointee = true
                }
            }
        }
        return outcome
    }
}
