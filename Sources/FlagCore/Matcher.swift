import Foundation

/// A condition with its operands parsed once (numbers, versions, instants, regular expressions, cohort indexes).
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
        case semver(Comparison, [SemanticVersion])
        /// `before` (`.lt`) and `after` (`.gt`), in seconds since 1970.
        case instant(Comparison, [Double])
        case exists
        case notExists
        case inCohort([Int])
    }

    let attribute: String
    let test: Test
    /// `unitID` is read from the context's unit, not from its attributes.
    let isUnitID: Bool

    init(attribute: String, test: Test) {
        self.attribute = attribute
        self.test = test
        self.isUnitID = attribute == "unitID"
    }

    /// Whether the condition holds. A missing attribute makes every operator false except `not_exists`
    /// (and `in_cohort`, which looks at the unit, not at an attribute).
    func matches(_ context: EvaluationContext, in set: CompiledFlagSet) -> Bool {
        if case .inCohort(let cohorts) = test {
            for cohort in cohorts where set.matches(cohort: cohort, context) { return true }
            return false
        }
        guard let value = isUnitID ? context.unitID : context.attribute(attribute) else {
            if case .notExists = test { return true }
            return false
        }
        switch test {
        case .equals(let operands):
            for operand in operands where operand == value { return true }
            return false
        case .equalsNone(let operands):
            for operand in operands where operand == value { return false }
            return true
        case .contains(let operands):
            for operand in operands where utf8Contains(value, operand) { return true }
            return false
        case .startsWith(let operands):
            for operand in operands where utf8HasPrefix(value, operand) { return true }
            return false
        case .endsWith(let operands):
            for operand in operands where utf8HasSuffix(value, operand) { return true }
            return false
        case .matches(let patterns):
            for pattern in patterns where pattern.matches(value) { return true }
            return false
        case .number(let comparison, let operands):
            guard let number = Double(value), number.isFinite else { return false }
            for operand in operands where comparison.holds(number, operand) { return true }
            return false
        case .semver(let comparison, let operands):
            guard let version = SemanticVersion(value) else { return false }
            for operand in operands where comparison.holds(SemanticVersion.compare(version, operand)) { return true }
            return false
        case .instant(let comparison, let operands):
            guard let instant = ISO8601.parse(value)?.timeIntervalSince1970 else { return false }
            for operand in operands where comparison.holds(instant, operand) { return true }
            return false
        case .exists: return true
        case .notExists: return false
        case .inCohort: return false
        }
    }
}

// String tests compare UTF-8 bytes, as clients in other languages do, without Unicode canonical equivalence:
// Swift's `hasSuffix` and `contains` are grapheme-aware and several times slower on the hot path.

@inline(__always)
func utf8HasPrefix(_ value: String, _ prefix: String) -> Bool {
    value.utf8.starts(with: prefix.utf8)
}

@inline(__always)
func utf8HasSuffix(_ value: String, _ suffix: String) -> Bool {
    let valueCount = value.utf8.count
    let suffixCount = suffix.utf8.count
    guard suffixCount <= valueCount else { return false }
    return value.utf8.dropFirst(valueCount - suffixCount).elementsEqual(suffix.utf8)
}

func utf8Contains(_ value: String, _ needle: String) -> Bool {
    let haystack = Array(value.utf8)
    let pattern = Array(needle.utf8)
    guard !pattern.isEmpty else { return true }
    guard pattern.count <= haystack.count else { return false }
    for start in 0...(haystack.count - pattern.count) where haystack[start] == pattern[0] {
        if haystack[start..<(start + pattern.count)].elementsEqual(pattern) { return true }
    }
    return false
}

/// A compiled regular expression (ICU syntax, unanchored search: `matches` is true if the pattern is found
/// anywhere in the value; anchor with `^…$` for a whole match).
final class Pattern: @unchecked Sendable {
    // NSRegularExpression is immutable after creation and documented as safe to use from several threads.
    let expression: NSRegularExpression

    init(_ source: String) throws {
        expression = try NSRegularExpression(pattern: source)
    }

    func matches(_ value: String) -> Bool {
        expression.firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil
    }
}
