import FlagTestBasics
import Testing

@testable import FlagHTTP

/// Inputs found by the libFuzzer harnesses in `Fuzz/` (HTTPRequestFuzz, ChunkedBodyFuzz), minimized.
@Suite("HTTP parser fuzz findings")
struct HTTPParserFuzzFindingsTests {
    /// The verdict on every way of splitting `input` into reads: all at once, and pieces of 1 to 7 bytes.
    private func statuses(_ input: String, limits: HTTPParserLimits) -> Set<Int?> {
        Set([nil, 1, 2, 3, 5, 7].map { parse(input, pieceSize: $0, limits: limits).rejection?.status })
    }

    /// A line over a limit that ends in a bare LF: the status was 400 when the LF came in the same read as the
    /// line, and 414 or 431 when the limit was passed in an earlier read. The limit now wins either way.
    @Test func aLineOverItsLimitEndingInABareLFGetsTheLimitStatusHoweverItIsRead() {
        let limits = HTTPParserLimits(maxHeaderBytes: 200, maxRequestLineBytes: 64)
        let longLine = "GET /" + String(repeating: "a", count: 70) + "\nHost: h\r\n\r\n"
        #expect(statuses(longLine, limits: limits) == [414])
        let longField = "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 200) + "\n\r\n"
        #expect(statuses(longField, limits: limits) == [431])
        let chunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
        let longTrailer = chunked + "T: " + String(repeating: "a", count: 200) + "\n\r\n"
        #expect(statuses(longTrailer, limits: limits) == [431])
        // Short lines with a bare LF are still 400.
        #expect(statuses("GET / HTTP/1.1\nHost: h\r\n\r\n", limits: limits) == [400])
    }

    /// With a request-line limit above the head limit, the head limit is passed first byte by byte; all at once
    /// the line limit was checked first.
    @Test func theLimitPassedFirstWinsWhenBothAre() {
        let limits = HTTPParserLimits(maxHeaderBytes: 64, maxRequestLineBytes: 100)
        let endless = "GET /" + String(repeating: "a", count: 150)
        #expect(statuses(endless, limits: limits) == [431])
        #expect(statuses(endless + " HTTP/1.1\r\nHost: h\r\n\r\n", limits: limits) == [431])
        let limitsTheOtherWay = HTTPParserLimits(maxHeaderBytes: 200, maxRequestLineBytes: 64)
        #expect(statuses(endless + " HTTP/1.1\r\nHost: h\r\n\r\n", limits: limitsTheOtherWay) == [414])
    }
}
