import FlagTestBasics
import Glibc
import Testing

@testable import FlagHTTP

@Suite("HTTP server rejections and limits, live", .live)
struct HTTPServerRejectionLiveTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let input: String
        let status: Int
        let code: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "headers over 16 KiB",
            input: "GET / HTTP/1.1\r\nHost: t\r\nX: " + String(repeating: "a", count: 17_000)
                + "\r\n\r\n", status: 431, code: "header_fields_too_large"),
        Case(
            name: "101 header fields",
            input: "GET / HTTP/1.1\r\nHost: t\r\n" + (1...100).map { "X-\($0): v\r\n" }.joined()
                + "\r\n", status: 431, code: "header_fields_too_large"),
        Case(
            name: "body over 1 MiB", input: "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\nabc",
            status: 413,
            code: "payload_too_large"),
        Case(
            name: "Content-Length and Transfer-Encoding",
            input: "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400, code: "bad_request"),
        Case(
            name: "duplicate Content-Length",
            input: "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
                + "Content-Length: 3\r\n\r\nabc", status: 400, code: "bad_request"),
        Case(
            name: "invalid Content-Length", input: "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3x\r\n\r\nabc",
            status: 400, code: "bad_request"),
        Case(
            name: "gzip, chunked", input: "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            status: 501, code: "not_implemented"),
        Case(
            name: "chunk size overflow",
            input: "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "ffffffffffffffffffff\r\n", status: 400, code: "bad_request"),
        Case(
            name: "obs-fold", input: "GET / HTTP/1.1\r\nHost: t\r\nX: a\r\n b\r\n\r\n", status: 400, code: "bad_request"
        ),
        Case(name: "bare LF", input: "GET / HTTP/1.1\nHost: t\n\n", status: 400, code: "bad_request"),
        Case(name: "non-token method", input: "G{T / HTTP/1.1\r\nHost: t\r\n\r\n", status: 400, code: "bad_request"),
        Case(
            name: "request line too long", input: "GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n",
            status: 414, code: "uri_too_long"),
    ]

    @Test(arguments: cases)
    func rejectsAndCloses(_ testCase: Case) throws {
        try withServer(handler: basicHandler) { server, port in
            let client = try TestClient(port: port)
            client.send(testCase.input)
            let response = try client.readResponse()
            #expect(response.status == testCase.status)
            #expect(response.header("Connection") == "close")
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            #expect(response.text.hasPrefix(#"{"error":{"code":"\#(testCase.code)","message":""#))
            #expect(response.text.hasSuffix(#"","path":null}}"#))
            #expect(client.isClosedByServer())
            #expect(server.metrics.rejections[testCase.code] == 1)
        }
    }

    @Test func answersEarlierPipelinedRequestsBeforeTheRejection() throws {
        try withServer(handler: basicHandler) { _, port in
            let client = try TestClient(port: port)
            client.send("GET /late HTTP/1.1\r\nHost: t\r\n\r\nGET /bad HTTP/1.1\r\nHost: t\r\nX: a\r\n b\r\n\r\n")
            #expect(try client.readResponse().text == "late")
            #expect(try client.readResponse().status == 400)
            #expect(client.isClosedByServer())
        }
    }

    @Test func closesAConnectionThatSendsNoCompleteHeadInTime() throws {
        let configure: (inout HTTPServerConfiguration) -> Void = { $0.headerReadTimeout = .milliseconds(200) }
        try withServer(configure, handler: basicHandler) { server, port in
            let clock = ContinuousClock()
            let start = clock.now
            let silent = try TestClient(port: port)
            let partial = try TestClient(port: port)
            partial.send("GET / HTTP/1.1\r\nHost: t\r\n")
            // Trickling bytes does not extend the deadline: it runs from the first byte of the head.
            for _ in 0..<3 {
                usleep(50_000)
                partial.send("X: y\r\n")
            }
            #expect(partial.isClosedByServer())
            #expect(silent.isClosedByServer())
            let elapsed = clock.now - start
            #expect(elapsed >= .milliseconds(190))
            #expect(elapsed < .seconds(2))
            #expect(server.metrics.rejections["header_timeout"] == 2)
        }
    }

    @Test func closesAnIdleKeepAliveConnection() throws {
        let configure: (inout HTTPServerConfiguration) -> Void = { $0.idleTimeout = .milliseconds(300) }
        try withServer(configure, handler: basicHandler) { server, port in
            let client = try TestClient(port: port)
            // Timed from before the request: the idle timer starts after the answer is written, which is later, so
            // that a busy machine slow to resume this thread after the answer cannot make the wait look short.
            let clock = ContinuousClock()
            let start = clock.now
            client.send("GET /one HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            #expect(client.isClosedByServer())
            #expect(clock.now - start >= .milliseconds(250))
            #expect(server.metrics.rejections["idle_timeout"] == 1)
            #expect(waitUntil { server.metrics.openConnections == 0 })
        }
    }

    @Test func refusesConnectionsOverTheCapWith503() throws {
        let twoConnections: (inout HTTPServerConfiguration) -> Void = { $0.maxConnections = 2 }
        try withServer(twoConnections, handler: basicHandler) { server, port in
            let first = try TestClient(port: port)
            let second = try TestClient(port: port)
            for client in [first, second] {
                client.send("GET /ok HTTP/1.1\r\nHost: t\r\n\r\n")
                #expect(try client.readResponse().status == 200)
            }
            let third = try TestClient(port: port)
            let refused = try third.readResponse()
            #expect(refused.status == 503)
            #expect(refused.header("Connection") == "close")
            #expect(refused.text.hasPrefix(#"{"error":{"code":"overloaded","#))
            #expect(third.isClosedByServer())
            #expect(server.metrics.rejections["connection_limit"] == 1)
            // Capacity comes back when a connection closes.
            first.send("GET /bye HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            _ = first.readUntilClose()
            #expect(waitUntil { server.metrics.openConnections == 1 })
            let fourth = try TestClient(port: port)
            fourth.send("GET /again HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try fourth.readResponse().text == "/again")
        }
    }
}
