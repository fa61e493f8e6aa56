import FlagTestBasics
import Testing

@testable import FlagHTTP

@Suite("HTTP request parser")
struct HTTPRequestParserTests {
    @Test func parsesAGetRequestWithItsParts() throws {
        let result = parse(
            "GET /v1/sets/ios%2Dprod?wait=30&x=a+b%21 HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"4\"\r\n\r\n")
        let request = try #require(result.requests.first)
        #expect(result.requests.count == 1)
        #expect(request.method == "GET")
        #expect(request.target == "/v1/sets/ios%2Dprod?wait=30&x=a+b%21")
        #expect(request.rawPath == "/v1/sets/ios%2Dprod")
        #expect(request.path == "/v1/sets/ios-prod")
        #expect(request.rawQuery == "wait=30&x=a+b%21")
        #expect(request.query("wait") == "30")
        #expect(request.query("x") == "a b!")
        #expect(request.query("missing") == nil)
        #expect(request.headers["if-none-match"] == "\"4\"")
        #expect(request.headers.count == 2)
        #expect(request.version == .http1_1)
        #expect(request.keepAlive)
        #expect(request.body.isEmpty)
    }

    /// The path is split into segments before it is decoded, so an encoded slash never separates two.
    @Test func anEncodedSlashIsNeverASeparator() throws {
        let refused = try #require(parse("GET /v1%2Fadmin%2Fwhoami HTTP/1.1\r\nHost: h\r\n\r\n").rejection)
        #expect(refused.status == 400)
        #expect(refused.message.contains("%2F"))
        // A request made in process cannot be refused: its path keeps the slash encoded, inside one segment.
        let request = HTTPRequest(method: "GET", target: "/v1%2Fadmin%2fwhoami?x=%2F")
        #expect(request.path == "/v1%2Fadmin%2Fwhoami")
        #expect(request.query("x") == "/")
        // Other escapes are decoded as before.
        #expect(HTTPRequest(method: "GET", target: "/v1/sets/ios%2Dprod").path == "/v1/sets/ios-prod")
    }

    @Test func keepsHeaderOrderAndTrimsWhitespace() throws {
        let request = try #require(
            parse("GET / HTTP/1.1\r\nHost: h\r\nX-A:  1 \t\r\nx-a: 2\r\nEmpty:\r\n\r\n").requests.first)
        #expect(request.headers.values(for: "X-A") == ["1", "2"])
        #expect(request.headers.fields.map(\.name) == ["Host", "X-A", "x-a", "Empty"])
        #expect(request.headers["empty"] == "")
    }

    @Test func parsesAContentLengthBody() {
        let result = parse("POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
        #expect(result.items == [.request(method: "POST", target: "/a", body: Array("hello".utf8))])
    }

    @Test func answersPipelinedRequestsInOrder() {
        let input =
            "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nPOST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
            + "GET /3 HTTP/1.1\r\nHost: h\r\n\r\n"
        #expect(
            parse(input).items == [
                .request(method: "GET", target: "/1", body: []),
                .request(method: "POST", target: "/2", body: Array("abc".utf8)),
                .request(method: "GET", target: "/3", body: []),
            ])
    }

    static let corpus =
        "\r\nGET /first?q=1 HTTP/1.1\r\nHost: example\r\nAccept: */*\r\n\r\n"
        + "POST /cl HTTP/1.1\r\nHost: example\r\nContent-Length: 11\r\n\r\nhello world"
        + "POST /chunked HTTP/1.1\r\nHost: example\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5;name=value\r\nhello\r\n1 ; x\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: t\r\n\r\n"
        + "GET /after-chunked HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"

    static let corpusItems: [ParsedItem] = [
        .request(method: "GET", target: "/first?q=1", body: []),
        .request(method: "POST", target: "/cl", body: Array("hello world".utf8)),
        .request(method: "POST", target: "/chunked", body: Array("hello world".utf8)),
        .request(method: "GET", target: "/after-chunked", body: []),
    ]

    @Test func parsesTheCorpusOneByteAtATime() {
        #expect(parse(Self.corpus, pieceSize: 1).items == Self.corpusItems)
        #expect(parse(Self.corpus).items == Self.corpusItems)
    }

    @Test func parsesTheCorpusSplitAtEveryByte() {
        let bytes = Array(Self.corpus.utf8)
        for split in 1..<bytes.count {
            var parser = HTTPRequestParser()
            var items: [ParsedItem] = []
            for part in [bytes[..<split], bytes[split...]] {
                parser.append(part)
                while case .request(let request)? = parser.next() {
                    items.append(.request(method: request.method, target: request.target, body: request.body))
                }
            }
            #expect(items == Self.corpusItems, "split at \(split)")
        }
    }

    @Test(arguments: [1, 2, 3, 7, 64])
    func parsesTheCorpusInPiecesOf(size: Int) {
        #expect(parse(Self.corpus, pieceSize: size).items == Self.corpusItems)
    }

    @Test func keepAliveFollowsVersionAndConnection() throws {
        let cases: [(String, Bool)] = [
            ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, CLOSE\r\n\r\n", false),
            ("GET / HTTP/1.0\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
            ("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false),
        ]
        for (input, keepAlive) in cases {
            let request = try #require(parse(input).requests.first, "\(input)")
            #expect(request.keepAlive == keepAlive, "\(input)")
        }
    }

    @Test func skipsEmptyLinesBeforeTheRequestLine() {
        #expect(
            parse("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n").items == [.request(method: "GET", target: "/", body: [])]
        )
    }

    @Test func acceptsAbsoluteFormAndAsterisk() throws {
        let absolute = try #require(parse("GET http://h:8080/a%20b?x=1 HTTP/1.1\r\nHost: h\r\n\r\n").requests.first)
        #expect(absolute.rawPath == "/a%20b")
        #expect(absolute.path == "/a b")
        #expect(absolute.rawQuery == "x=1")
        let options = try #require(parse("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n").requests.first)
        #expect(options.path == "*")
        #expect(rejectionStatus("GET * HTTP/1.1\r\nHost: h\r\n\r\n") == 400)
        #expect(rejectionStatus("CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n") == 400)
    }

    @Test func signalsExpectContinueBeforeTheBody() {
        let head = "POST /u HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"
        var parser = HTTPRequestParser()
        parser.append(Array(head.utf8))
        guard case .continueExpected? = parser.next() else {
            Issue.record("expected continueExpected")
            return
        }
        #expect(parser.next() == nil)
        parser.append(Array("ok".utf8))
        guard case .request(let request)? = parser.next() else {
            Issue.record("expected the request")
            return
        }
        #expect(request.body == Array("ok".utf8))
        // When the body arrives with the head, there is nothing to continue.
        #expect(parse(head + "ok").items == [.request(method: "POST", target: "/u", body: Array("ok".utf8))])
    }

    @Test func reportsARejectionOnceAndIgnoresLaterInput() {
        var parser = HTTPRequestParser()
        parser.append(Array("GET / HTTP/1.1\nHost: h\r\n\r\n".utf8))
        guard case .rejected(let rejection)? = parser.next() else {
            Issue.record("expected a rejection")
            return
        }
        #expect(rejection.status == 400)
        #expect(rejection.response.status == 400)
        #expect(parser.next() == nil)
        parser.append(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(parser.next() == nil)
    }

    @Test func releasesItsBufferWhenIdle() {
        var parser = HTTPRequestParser()
        parser.append(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HT".utf8))
        #expect(parser.isIdle == false)
        _ = parser.next()
        #expect(parser.isReadingHead)
        #expect(parser.bufferedByteCount == 9)
        parser.append(Array("TP/1.1\r\nHost: h\r\n\r\n".utf8))
        _ = parser.next()
        #expect(parser.isIdle)
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func feedingALargeHeadOneByteAtATimeStaysLinear() {
        let value = String(repeating: "v", count: 16_000)
        let input = "GET / HTTP/1.1\r\nHost: h\r\nX: \(value)\r\n\r\n"
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(parse(input, pieceSize: 1).requests.first?.headers["x"] == value)
        }
        #expect(elapsed < .seconds(2))
    }
}
