import Foundation
import Testing

@testable import FlagCore

/// `matches` runs each pattern as an anchored `(?s:.*?)(?:P)` with a step limit (see `Pattern`).
@Suite("Regular expressions: same matches as a search, bounded work")
struct PatternTests {
    /// Patterns covering anchors, flags, look-around, back-references, quotes, comments and classes.
    static let patterns = [
        "^user-[0-9]+$", "b", "xyz", "a+b", "[a-z]+@", "^a|b$", "(?m)^b", "(?<=a)b", "(?<!a)b", "(a)\\1",
        "\\bfoo\\b", "(?i)FOO", "a(?=b)", "$", "^", "\\Gb", "(?x) a b # comment\n", "\\Qa.b\\E", "é", "\\p{L}+x",
        "a{2,3}", ".", "(?s).b", "\\z", "\\Z", "x*", "(?-s).+", "(?<name>a)\\k<name>", "^$", "\\A\\w+\\z",
    ]
    static let values = [
        "", "a", "b", "ab", "ba", "aab", "user-12345", "xuser-1", "foo bar", "FOO", "a\nb", "\n", "éé", "aa",
        "abab", "a.b", "aaaa", "ab\n", "x", "😀b", "a😀b", "e\u{301}", "foo", "barfoo",
    ]

    @Test(arguments: patterns)
    func matchesWhereAnUnanchoredSearchDoes(pattern: String) throws {
        let plain = try NSRegularExpression(pattern: pattern)
        let compiled = try Pattern(pattern)
        for value in Self.values {
            let expected = plain.firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil
            #expect(compiled.search(value) == (expected ? .matched : .notMatched), "\(value.debugDescription)")
        }
    }

    /// As plain searches, before the limit, these took seconds to hours (`a*a*a*b` on 400 `a`s 16 s, `a*b` on 20,000
    /// 4 s); each now stops after about a million steps.
    @Test(arguments: [
        ("a*a*a*b", 400), ("a*a*a*a*b", 2_000), ("a*b", 20_000), ("[a-z]+@", 20_000), ("^(\\w+\\s?)*$", 40),
    ])
    func polynomialBacktrackingStopsAtTheStepLimit(pattern: String, length: Int) throws {
        let value = String(repeating: "a", count: length) + (pattern.hasSuffix("$") ? "!" : "")
        #expect(try Pattern(pattern).search(value) == .stopped)
    }

    @Test func longValuesWithLinearPatternsAreNotCut() throws {
        let long = String(repeating: "ab", count: 5_000)
        #expect(try Pattern("xyz").search(long + "xyz") == .matched)
        #expect(try Pattern("xyz").search(long) == .notMatched)
        #expect(try Pattern("@example\\.com$").search(long + "@example.com") == .matched)
        #expect(try Pattern("^(ab)+$").search(long) == .matched)
    }

    @Test func aStoppedSearchIsNoMatchInEvaluation() throws {
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: #"""
                    {"type":"bool","default":false,"rules":[{"name":"r","conditions":[
                      {"attribute":"email","op":"matches","values":["a*a*a*b"]}],"value":true}]}
                    """#))
        #expect(set.problems == [])
        func evaluate(_ email: String) -> EvaluationDetail<Bool> {
            set.evaluate(
                "f", default: true, context: EvaluationContext(unitID: "u", attributes: ["email": email]),
                at: Date(timeIntervalSince1970: 0))
        }
        #expect(evaluate("aab").variant == "r")
        let hostile = evaluate(String(repeating: "a", count: 400))
        #expect(hostile.value == false)
        #expect(hostile.variant == "default")
    }

    @Test(arguments: ["\\Qa.b", "(?x)a # comment"])
    func patternsThatDoNotEndOutsideAQuoteOrCommentAreRejected(pattern: String) throws {
        #expect(throws: Pattern.Invalid.openAtEnd) { try Pattern(pattern) }
        let escaped = pattern.replacingOccurrences(of: "\\", with: "\\\\")
        let set = try Fixtures.compile(
            Fixtures.set(
                flag: """
                    {"type":"bool","default":false,"rules":[{"name":"r","conditions":[
                      {"attribute":"email","op":"matches","values":["\(escaped)"]}],"value":true}]}
                    """))
        #expect(set.problems.map(\.path) == ["flags.f.rules[0].conditions[0].values[0]"])
        #expect(set.problems.first?.message.contains("close it with \\E or a line break") == true)
    }
}
