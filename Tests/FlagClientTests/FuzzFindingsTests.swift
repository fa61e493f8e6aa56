import Testing

@testable import FlagClient

/// Inputs found by the libFuzzer harnesses in `Fuzz/` (SSEParserFuzz), minimized.
@Suite struct FuzzFindingsTests {
    /// Empty `data` lines each added a line feed to the event without counting it against the limit, so a stream
    /// of them grew one event past `maximumLineLength` without bound.
    @Test func emptyDataLinesCannotGrowAnEventPastTheLimit() {
        var parser = SSEParser(maximumLineLength: 8)
        let items = parser.feed(Array(("data:012\n" + String(repeating: "data\n", count: 1000) + "\n").utf8))
        #expect(items == [.event(SSEEvent(type: "message", data: "012\n\n\n\n\n", id: nil))])
    }
}

/// OverridesFuzz: the env-file parser worked on Characters, which Unicode joins across the syntax.
@Suite struct OverridesFuzzFindingsTests {
    @Test func aCombiningMarkAfterTheEqualsSignIsPartOfTheValue() {
        // "=\u{301}" is one Character, so no '=' was found and the line was reported as a problem.
        let (overrides, problems) = OverridesParser.parseFile("k=\u{301}\nj= \u{301}x\n", name: "f.env")
        #expect(problems.isEmpty)
        #expect(overrides["k"] == RawOverride(text: "\u{301}", source: "f.env:1"))
        // " \u{301}" is one Character too, so the space was not trimmed.
        #expect(overrides["j"] == RawOverride(text: "\u{301}x", source: "f.env:2"))
    }

    @Test func aCommentStaysACommentWhateverFollowsTheHash() {
        let (overrides, problems) = OverridesParser.parseFile("#\u{301}k=1\n", name: "f.env")
        #expect(overrides.isEmpty && problems.isEmpty)
    }

    @Test func onlyASCIICapitalsAreLowerCasedInVariableNames() {
        // Unicode lower-cases the Kelvin sign to "k", so FLAG_\u{212A} overrode the flag "k".
        #expect(OverridesParser.flagKey(forVariable: "FLAG_\u{212A}") == nil)
        #expect(OverridesParser.flagKey(forName: "FLAG_\u{212A}") == nil)
        #expect(OverridesParser.flagKey(forVariable: "FLAG_K") == "k")
        let (overrides, problems) = OverridesParser.parseEnvironment(["FLAG_\u{212A}": "1"])
        #expect(overrides.isEmpty && problems.count == 1)
    }
}
