import Testing

@testable import FlagHTTP

@Suite("HTTP response encoding, dates and headers")
struct HTTPResponseEncoderTests {
    static let date = Array("Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n".utf8)

    static func encode(
        _ response: HTTPResponse, head: Bool = false, version: HTTPVersion = .http1_1, close: Bool = false
    ) -> String {
        let context = HTTPResponseEncoder.Context(isHeadRequest: head, version: version, close: close)
        let (bytes, body) = HTTPResponseEncoder.encode(response, context, date: date)
        return String(decoding: bytes + (body ?? []), as: UTF8.self)
    }

    @Test func writesStatusHeadersDateLengthAndBodyInOneBuffer() {
        let response = HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: Array("hi".utf8))
        #expect(
            Self.encode(response)
                == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
                + "Content-Length: 2\r\n\r\nhi")
    }

    @Test func omitsTheBodyAndLengthWhereTheProtocolSaysSo() {
        let notModified = HTTPResponse(status: 304, headers: ["ETag": "\"7\""], body: Array("x".utf8))
        #expect(Self.encode(notModified) == "HTTP/1.1 304 Not Modified\r\nETag: \"7\"\r\n\(dateLine)\r\n")
        #expect(Self.encode(HTTPResponse(status: 204)) == "HTTP/1.1 204 No Content\r\n\(dateLine)\r\n")
        let head = Self.encode(HTTPResponse(status: 200, body: Array("hello".utf8)), head: true)
        #expect(head == "HTTP/1.1 200 OK\r\n\(dateLine)Content-Length: 5\r\n\r\n")
    }

    private var dateLine: String { String(decoding: Self.date, as: UTF8.self) }

    @Test func addsConnectionHeadersForCloseAndHTTP10KeepAlive() {
        #expect(Self.encode(HTTPResponse(status: 200), close: true).contains("\r\nConnection: close\r\n"))
        #expect(Self.encode(HTTPResponse(status: 200), version: .http1_0).contains("\r\nConnection: keep-alive\r\n"))
        #expect(!Self.encode(HTTPResponse(status: 200)).contains("Connection"))
    }

    @Test func replacesFramingHeadersAndKeepsAGivenDate() {
        let response = HTTPResponse(
            status: 200,
            headers: [
                "Content-Length": "99", "Transfer-Encoding": "chunked", "Connection": "keep-alive",
                "Date": "Mon, 01 Jan 2001 00:00:00 GMT",
            ],
            body: Array("ab".utf8))
        #expect(
            Self.encode(response)
                == "HTTP/1.1 200 OK\r\nDate: Mon, 01 Jan 2001 00:00:00 GMT\r\nContent-Length: 2\r\n\r\nab")
    }

    @Test func cannotBeSplitByHeaderInjection() {
        let response = HTTPResponse(status: 200, headers: ["X-Echo": "a\r\nSet-Cookie: evil", "Bad Name": "v"])
        let text = Self.encode(response)
        #expect(text.contains("X-Echo: a  Set-Cookie: evil\r\n"))
        #expect(!text.contains("Bad Name"))
    }

    @Test func writesLargeBodiesAsTheirOwnChunk() {
        let body = [UInt8](repeating: 0x62, count: HTTPResponseEncoder.inlineBodyLimit + 1)
        let context = HTTPResponseEncoder.Context(isHeadRequest: false, version: .http1_1, close: false)
        let (head, separate) = HTTPResponseEncoder.encode(
            HTTPResponse(status: 200, body: body), context, date: Self.date)
        #expect(separate == body)
        #expect(String(decoding: head, as: UTF8.self).hasSuffix("Content-Length: \(body.count)\r\n\r\n"))
    }

    @Test func mapsAnImpossibleStatusTo500AndNamesUnknownOnes() {
        #expect(Self.encode(HTTPResponse(status: 42)).hasPrefix("HTTP/1.1 500 Internal Server Error\r\n"))
        #expect(Self.encode(HTTPResponse(status: 299)).hasPrefix("HTTP/1.1 299 Unknown\r\n"))
    }

    @Test func detectsAHandlerAskingToClose() {
        #expect(HTTPResponseEncoder.requestsClose(HTTPResponse(status: 200, headers: ["connection": "Close"])))
        #expect(!HTTPResponseEncoder.requestsClose(HTTPResponse(status: 200, headers: ["Connection": "keep-alive"])))
    }

    @Test func streamHeadsHaveNoLengthAndClose() {
        let head = HTTPResponseEncoder.encodeStreamHead(
            HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"]), version: .http1_1,
            date: Self.date)
        #expect(
            String(decoding: head, as: UTF8.self)
                == "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\(dateLine)Connection: close\r\n\r\n")
    }

    @Test func jsonErrorsEscapeTheirText() {
        let response = HTTPResponse.jsonError(status: 422, code: "invalid", message: "bad \"x\"\n", path: "$.flags")
        #expect(
            String(decoding: response.body, as: UTF8.self)
                == #"{"error":{"code":"invalid","message":"bad \"x\"\n","path":"$.flags"}}"#)
    }

    @Test(arguments: [
        (Int64(0), "Thu, 01 Jan 1970 00:00:00 GMT"),
        (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (1_798_761_600, "Fri, 01 Jan 2027 00:00:00 GMT"),
        (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
    ])
    func formatsHTTPDates(seconds: Int64, expected: String) {
        #expect(HTTPDate.format(secondsSince1970: seconds) == expected)
    }

    @Test func cachesTheDateLinePerSecond() {
        var cache = HTTPDateCache()
        cache.update(secondsSince1970: 784_111_777)
        #expect(cache.line == Self.date)
        cache.update(secondsSince1970: 784_111_778)
        #expect(String(decoding: cache.line, as: UTF8.self) == "Date: Sun, 06 Nov 1994 08:49:38 GMT\r\n")
    }

    @Test func headersLookUpCaseInsensitivelyAndKeepOrder() {
        var headers: HTTPHeaders = ["Content-Type": "a", "X-Tag": "1"]
        headers.add(name: "x-tag", value: "2")
        #expect(headers["CONTENT-TYPE"] == "a")
        #expect(headers.values(for: "X-TAG") == ["1", "2"])
        headers.replaceOrAdd(name: "X-Tag", value: "3")
        #expect(headers.fields.map(\.value) == ["a", "3"])
        headers.remove(name: "content-type")
        #expect(headers.count == 1)
        #expect(!headers.contains("Content-Type"))
        #expect(HTTPHeaders.namesEqual("Ab", "aB"))
        #expect(!HTTPHeaders.namesEqual("Ab", "aBc"))
    }
}
