import FlagTestBasics
import Testing

@testable import FlagHTTP

@Suite("HTTP request parser rejections")
struct HTTPRequestParserRejectionTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let input: String
        let status: Int
        var testDescription: String { name }
    }

    static let host = "Host: h\r\n"

    /// An HTTP/1.1 POST with a `Host` field, then `rest`: more fields, the blank line and the body.
    static func post(_ rest: String) -> String { "POST / HTTP/1.1\r\n\(host)" + rest }

    /// A chunked POST whose body is `chunks`.
    static func chunked(_ chunks: String) -> String { post("Transfer-Encoding: chunked\r\n\r\n" + chunks) }

    static let cases: [Case] = [
        Case(
            name: "Content-Length with Transfer-Encoding",
            input: post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), status: 400),
        Case(
            name: "Transfer-Encoding before Content-Length",
            input: post("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"), status: 400),
        Case(
            name: "duplicate equal Content-Length", input: post("Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc"),
            status: 400),
        Case(
            name: "duplicate differing Content-Length",
            input: post("Content-Length: 3\r\ncontent-length: 4\r\n\r\nabcd"), status: 400),
        Case(name: "Content-Length list", input: post("Content-Length: 3, 3\r\n\r\nabc"), status: 400),
        Case(name: "negative Content-Length", input: post("Content-Length: -1\r\n\r\n"), status: 400),
        Case(name: "signed Content-Length", input: post("Content-Length: +3\r\n\r\nabc"), status: 400),
        Case(name: "hex Content-Length", input: post("Content-Length: 0x3\r\n\r\nabc"), status: 400),
        Case(name: "empty Content-Length", input: post("Content-Length:\r\n\r\n"), status: 400),
        Case(name: "huge Content-Length", input: post("Content-Length: 99999999999999999999\r\n\r\n"), status: 400),
        Case(name: "Content-Length over the body limit", input: post("Content-Length: 1048577\r\n\r\n"), status: 413),
        Case(name: "xchunked", input: post("Transfer-Encoding: xchunked\r\n\r\n"), status: 400),
        Case(name: "chunked, identity", input: post("Transfer-Encoding: chunked, identity\r\n\r\n"), status: 400),
        Case(name: "gzip, chunked", input: post("Transfer-Encoding: gzip, chunked\r\n\r\n"), status: 501),
        Case(
            name: "chunked twice in two fields",
            input: post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"), status: 400),
        Case(
            name: "chunked twice in one field", input: post("Transfer-Encoding: chunked, chunked\r\n\r\n"),
            status: 400),
        Case(
            name: "gzip, chunked, chunked", input: post("Transfer-Encoding: gzip, chunked, chunked\r\n\r\n"),
            status: 400),
        Case(
            name: "chunked then gzip in two fields",
            input: post("Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n"), status: 400),
        Case(
            name: "gzip then chunked in two fields",
            input: post("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"), status: 501),
        Case(name: "identity", input: post("Transfer-Encoding: identity\r\n\r\n"), status: 400),
        Case(name: "empty Transfer-Encoding", input: post("Transfer-Encoding: \r\n\r\n"), status: 400),
        Case(
            name: "Transfer-Encoding on HTTP/1.0",
            input: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            status: 400),
        Case(name: "chunk size overflow", input: chunked("fffffffffffffffffffff\r\n"), status: 400),
        Case(name: "chunk size over the body limit", input: chunked("ffffffff\r\n"), status: 413),
        Case(name: "chunk size not hex", input: chunked("zz\r\n"), status: 400),
        Case(name: "chunk size with junk", input: chunked("5 x\r\n"), status: 400),
        Case(name: "chunk data longer than its size", input: chunked("3\r\nhello\r\n0\r\n\r\n"), status: 400),
        Case(name: "bare LF after chunk size", input: chunked("3\nabc\r\n0\r\n\r\n"), status: 400),
        Case(name: "bare LF after chunk data", input: chunked("3\r\nabc\n0\r\n\r\n"), status: 400),
        Case(name: "bare LF in a trailer", input: chunked("0\r\nX: y\n\r\n"), status: 400),
        Case(name: "obs-fold in a trailer", input: chunked("0\r\nX: y\r\n z\r\n\r\n"), status: 400),
        Case(name: "obsolete line folding", input: "GET / HTTP/1.1\r\n\(host)X-Long: a\r\n  b\r\n\r\n", status: 400),
        Case(name: "obs-fold with a tab", input: "GET / HTTP/1.1\r\n\(host)X-Long: a\r\n\tb\r\n\r\n", status: 400),
        Case(name: "bare LF ending the request line", input: "GET / HTTP/1.1\n\(host)\r\n", status: 400),
        Case(name: "bare LF ending a header", input: "GET / HTTP/1.1\r\nHost: h\n\r\n", status: 400),
        Case(name: "bare LF ending the head", input: "GET / HTTP/1.1\r\nHost: h\r\n\n", status: 400),
        Case(name: "LF-only request", input: "GET / HTTP/1.1\nHost: h\n\n", status: 400),
        Case(name: "bare CR in a value", input: "GET / HTTP/1.1\r\n\(host)X: a\rb\r\n\r\n", status: 400),
        Case(name: "NUL in a value", input: "GET / HTTP/1.1\r\n\(host)X: a\u{0}b\r\n\r\n", status: 400),
        Case(name: "non-token method", input: "GE(T / HTTP/1.1\r\n\(host)\r\n", status: 400),
        Case(name: "method with a slash", input: "G/T / HTTP/1.1\r\n\(host)\r\n", status: 400),
        Case(name: "space before the colon", input: "GET / HTTP/1.1\r\n\(host)Content-Length : 0\r\n\r\n", status: 400),
        Case(name: "non-token header name", input: "GET / HTTP/1.1\r\n\(host)X@Y: 1\r\n\r\n", status: 400),
        Case(name: "header without colon", input: "GET / HTTP/1.1\r\n\(host)NoColon\r\n\r\n", status: 400),
        Case(name: "empty header name", input: "GET / HTTP/1.1\r\n\(host): v\r\n\r\n", status: 400),
        Case(name: "two spaces in the request line", input: "GET  / HTTP/1.1\r\n\(host)\r\n", status: 400),
        Case(name: "missing version", input: "GET /\r\n\(host)\r\n", status: 400),
        Case(name: "lowercase version", input: "GET / http/1.1\r\n\(host)\r\n", status: 400),
        Case(name: "control byte in the target", input: "GET /a\u{7}b HTTP/1.1\r\n\(host)\r\n", status: 400),
        Case(name: "relative target", input: "GET a/b HTTP/1.1\r\n\(host)\r\n", status: 400),
        Case(name: "bad percent-encoding", input: "GET /a%zz HTTP/1.1\r\n\(host)\r\n", status: 400),
        Case(name: "percent-encoding that is not UTF-8", input: "GET /a%ff HTTP/1.1\r\n\(host)\r\n", status: 400),
        Case(name: "an encoded slash", input: "GET /v1%2Fadmin%2Fwhoami HTTP/1.1\r\n\(host)\r\n", status: 400),
        Case(name: "an encoded slash, lowercase", input: "GET /v1/sets/a%2fb HTTP/1.1\r\n\(host)\r\n", status: 400),
        Case(name: "HTTP/2.0", input: "GET / HTTP/2.0\r\n\(host)\r\n", status: 505),
        Case(name: "HTTP/1.2", input: "GET / HTTP/1.2\r\n\(host)\r\n", status: 505),
        Case(name: "HTTP/2 preface", input: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", status: 505),
        Case(name: "HTTP/1.1 without Host", input: "GET / HTTP/1.1\r\n\r\n", status: 400),
        Case(name: "two Host fields", input: "GET / HTTP/1.1\r\n\(host)\(host)\r\n", status: 400),
    ]

    @Test(arguments: cases)
    func rejects(_ testCase: Case) throws {
        let result = parse(testCase.input)
        let rejection = try #require(result.rejection, "\(testCase.name) was accepted: \(result.items)")
        #expect(rejection.status == testCase.status)
        #expect(result.requests.isEmpty)
        // The same verdict arrives however the bytes are split.
        #expect(parse(testCase.input, pieceSize: 1).rejection?.status == testCase.status)
    }

    @Test func rejectsAHeadOverTheLimitWith431() {
        func request(headBytes: Int) -> String {
            let prefix = "GET / HTTP/1.1\r\nHost: h\r\nX: "
            let filler = String(repeating: "a", count: headBytes - prefix.utf8.count - 4)
            return prefix + filler + "\r\n\r\n"
        }
        #expect(request(headBytes: 16_384).utf8.count == 16_384)
        #expect(rejectionStatus(request(headBytes: 16_384)) == nil)
        #expect(rejectionStatus(request(headBytes: 16_385)) == 431)
        // Rejected as soon as the limit is passed, without waiting for the end of the head.
        let endless = "GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "a", count: 16_400)
        #expect(rejectionStatus(endless) == 431)
    }

    @Test func rejectsMoreThan100FieldsWith431() {
        func request(fields: Int) -> String {
            "GET / HTTP/1.1\r\n" + "Host: h\r\n" + (1..<fields).map { "X-\($0): v\r\n" }.joined() + "\r\n"
        }
        #expect(rejectionStatus(request(fields: 100)) == nil)
        #expect(rejectionStatus(request(fields: 101)) == 431)
    }

    @Test func rejectsALongRequestLineWith414() {
        let limit = HTTPParserLimits().maxRequestLineBytes
        func line(_ length: Int) -> String {
            let path = "/" + String(repeating: "p", count: length - "GET / HTTP/1.1".utf8.count)
            return "GET \(path) HTTP/1.1"
        }
        #expect(rejectionStatus(line(limit) + "\r\nHost: h\r\n\r\n") == nil)
        #expect(rejectionStatus(line(limit + 1) + "\r\nHost: h\r\n\r\n") == 414)
        #expect(rejectionStatus("GET /" + String(repeating: "p", count: limit + 10)) == 414)
    }

    @Test func rejectsBodiesOverTheLimitWith413() {
        let limits = HTTPParserLimits(maxBodyBytes: 10)
        let fits = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789"
        #expect(rejectionStatus(fits, limits: limits) == nil)
        #expect(rejectionStatus(fits.replacingOccurrences("10\r\n", "11\r\n") + "x", limits: limits) == 413)
        let chunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(rejectionStatus(chunked + "5\r\n01234\r\n5\r\n56789\r\n0\r\n\r\n", limits: limits) == nil)
        #expect(rejectionStatus(chunked + "5\r\n01234\r\n6\r\n567890\r\n0\r\n\r\n", limits: limits) == 413)
    }

    @Test func rejectsTooManyOrTooLargeTrailersWith431() {
        let limits = HTTPParserLimits(maxHeaderBytes: 100, maxHeaderCount: 2)
        let chunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
        #expect(rejectionStatus(chunked + "A: 1\r\nB: 2\r\n\r\n", limits: limits) == nil)
        #expect(rejectionStatus(chunked + "A: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: limits) == 431)
        #expect(
            rejectionStatus(chunked + "A: " + String(repeating: "x", count: 100) + "\r\n\r\n", limits: limits) == 431)
    }

    @Test func rejectsAnOverlongChunkExtension() {
        let limits = HTTPParserLimits(maxChunkLineBytes: 16)
        let chunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(rejectionStatus(chunked + "1;a=b\r\nx\r\n0\r\n\r\n", limits: limits) == nil)
        #expect(rejectionStatus(chunked + "1;" + String(repeating: "e", count: 20) + "\r\n", limits: limits) == 400)
    }

    @Test func rejectionCarriesACodeAndJSONBody() throws {
        let rejection = try #require(parse("GET / HTTP/1.1\r\n\r\n").rejection)
        #expect(rejection.code == "bad_request")
        let body = String(decoding: rejection.response.body, as: UTF8.self)
        #expect(body == #"{"error":{"code":"bad_request","message":"missing Host header","path":null}}"#)
        #expect(rejection.response.headers["content-type"] == "application/json; charset=utf-8")
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
