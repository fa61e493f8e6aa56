import Testing

@testable import FlagClient

/// Inputs found by the libFuzzer harnesses in `Fuzz/` (SSEParserFuzz, OverridesFuzz), minimized.
@Suite struct FuzzFindingsTests {
    /// Empty `data` lines each added a line feed to the event without counting it against the limit, so a stream
    /// of them grew one event past `maximumLineLength` without bound.
    @Test func emptyDataLinesCannotGrowAnEventPastTheLimit() {
        var parser = SSEParser(maximumLineLength: 8)
        let items = parser.feed(Array(("data:012\n" + String(repeating: "data\n", count: 1000) + "\n").utf8))
        #expect(items == [.event(SSEEvent(type: "message", data: "012\n\n\n\n\n", id: nil))])
    }
}
