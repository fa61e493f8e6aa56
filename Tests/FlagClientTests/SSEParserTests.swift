import Testing

@testable import FlagClient

@Suite struct SSEParserTests {
    static let stream =
        ": hello\nevent: put\nid: 3\nsignature: v1; key=k; sig=s\ndata: {\"a\":\ndata: 1}\n\n"
        + ": heartbeat\nretry: 2500\n"
        + "event: patch\nid: 4\ndata: {}\n\ndata: plain\n\n"

    static let expected: [SSEItem] = [
        .comment("hello"),
        .event(SSEEvent(type: "put", data: "{\"a\":\n1}", id: "3", signature: "v1; key=k; sig=s")),
        .comment("heartbeat"),
        .retry(2500),
        .event(SSEEvent(type: "patch", data: "{}", id: "4")),
        .event(SSEEvent(type: "message", data: "plain", id: "4")),
    ]

    /// A signature belongs to its event: the next event has none unless it brings its own, and an event without
    /// data drops its signature with it.
    @Test func aSignatureIsAFieldOfOneEvent() {
        var parser = SSEParser()
        let text =
            "event: patch\nsignature: first\ndata: 1\n\ndata: 2\n\nsignature: orphan\n\n"
            + "data: 3\nsignature: after data\n\n"
        #expect(
            parser.feed(Array(text.utf8)) == [
                .event(SSEEvent(type: "patch", data: "1", id: nil, signature: "first")),
                .event(SSEEvent(type: "message", data: "2", id: nil)),
                .event(SSEEvent(type: "message", data: "3", id: nil, signature: "after data")),
            ])
    }

    @Test(arguments: ["\n", "\r\n", "\r"])
    func lineEndings(_ ending: String) {
        var parser = SSEParser()
        let text = Self.stream.replacingOccurrences(of: "\n", with: ending)
        #expect(parser.feed(Array(text.utf8)) == Self.expected)
        #expect(parser.lastID == "4")
    }

    @Test(arguments: ["\n", "\r\n", "\r"])
    func splitAtEveryByte(_ ending: String) {
        let bytes = Array(Self.stream.replacingOccurrences(of: "\n", with: ending).utf8)
        for cut in 0...bytes.count {
            var parser = SSEParser()
            let items = parser.feed(bytes[..<cut]) + parser.feed(bytes[cut...])
            #expect(items == Self.expected, "cut at \(cut)")
        }
        var parser = SSEParser()
        var items: [SSEItem] = []
        for byte in bytes { items += parser.feed([byte]) }
        #expect(items == Self.expected)
    }

    @Test func multiByteCharacterSplitAcrossChunks() {
        let bytes = Array("data: grüße 😀\n\n".utf8)
        var parser = SSEParser()
        var items: [SSEItem] = []
        for byte in bytes { items += parser.feed([byte]) }
        #expect(items == [.event(SSEEvent(type: "message", data: "grüße 😀", id: nil))])
    }

    @Test func fieldsWithoutSpaceOrValue() {
        var parser = SSEParser()
        let items = parser.feed(Array("event:put\ndata\nid:7\n\n".utf8))
        #expect(items == [.event(SSEEvent(type: "put", data: "", id: "7"))])
    }

    @Test func eventWithoutDataIsNotDispatchedButItsIDCounts() {
        var parser = SSEParser()
        #expect(parser.feed(Array("event: put\nid: 9\n\n".utf8)).isEmpty)
        #expect(parser.lastID == "9")
        #expect(parser.feed(Array("data: x\n\n".utf8)) == [.event(SSEEvent(type: "message", data: "x", id: "9"))])
    }

    @Test func invalidRetryAndUnknownFieldsAreIgnored() {
        var parser = SSEParser()
        #expect(parser.feed(Array("retry: 1s\nretry:\nfoo: bar\nretry: 10\n".utf8)) == [.retry(10)])
    }

    @Test func byteOrderMarkAtStartIsSkipped() {
        var parser = SSEParser()
        let items = parser.feed([0xEF, 0xBB, 0xBF] + Array("data: x\n\n".utf8))
        #expect(items == [.event(SSEEvent(type: "message", data: "x", id: nil))])
    }

    @Test func incompleteEventIsHeldUntilTheBlankLine() {
        var parser = SSEParser()
        #expect(parser.feed(Array("data: a\n".utf8)).isEmpty)
        #expect(parser.feed(Array("\n".utf8)) == [.event(SSEEvent(type: "message", data: "a", id: nil))])
    }

    @Test func overlongLinesAreCut() {
        var parser = SSEParser(maximumLineLength: 8)
        let items = parser.feed(Array("data: 0123456789abcdef\n\n".utf8))
        #expect(items == [.event(SSEEvent(type: "message", data: "01", id: nil))])
    }
}
