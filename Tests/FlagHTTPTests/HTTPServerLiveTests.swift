import Dispatch
import FlagTestBasics
import Glibc
import Synchronization
import Testing

@testable import FlagHTTP

/// Answers `/echo…` with the path, `/late` from another thread after 50 ms, `/json` with a JSON body.
let basicHandler: HTTPHandler = { request, responder in
    switch request.path {
    case "/late":
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
            responder.respond(HTTPResponse(status: 200, body: Array("late".utf8)))
        }
    case "/remote":
        responder.respond(HTTPResponse(status: 200, body: Array(request.remoteAddress.utf8)))
    case "/body":
        responder.respond(HTTPResponse(status: 200, body: request.body))
    case "/not-modified":
        responder.respond(HTTPResponse(status: 304, headers: ["ETag": "\"4\""]))
    default:
        responder.respond(
            HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: Array(request.path.utf8)))
    }
}

@Suite("HTTP server, live on port 0", .live)
struct HTTPServerLiveTests {
    @Test func servesKeepAliveRequestsOnOneConnection() throws {
        try withServer(handler: basicHandler) { _, port in
            let client = try TestClient(port: port)
            for path in ["/a", "/b", "/c"] {
                client.send("GET \(path) HTTP/1.1\r\nHost: test\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 200)
                #expect(response.text == path)
                #expect(response.header("Content-Length") == "\(path.utf8.count)")
                #expect(response.header("Content-Type") == "text/plain")
                #expect(response.header("Date")?.hasSuffix(" GMT") == true)
                #expect(response.header("Connection") == nil)
            }
        }
    }

    @Test func answersPipelinedRequestsInOrderEvenWhenOneIsAnsweredLate() throws {
        try withServer(handler: basicHandler) { _, port in
            let client = try TestClient(port: port)
            client.send(
                "GET /first HTTP/1.1\r\nHost: t\r\n\r\nGET /late HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "GET /third HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nfour"
                    + "POST /body HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "3;x=y\r\nchu\r\n4\r\nnked\r\n0\r\nTrailer: t\r\n\r\n"
                    + "GET /after-chunked HTTP/1.1\r\nHost: t\r\n\r\n")
            let bodies = try (0..<6).map { _ in try client.readResponse().text }
            #expect(bodies == ["/first", "late", "/third", "four", "chunked", "/after-chunked"])
        }
    }

    @Test func writesResponsesWithoutABodyWhereTheProtocolSaysSo() throws {
        try withServer(handler: basicHandler) { _, port in
            let client = try TestClient(port: port)
            client.send(
                "GET /not-modified HTTP/1.1\r\nHost: t\r\n\r\nHEAD /head HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
            let notModified = try client.readResponse()
            #expect(notModified.status == 304)
            #expect(notModified.header("Content-Length") == nil)
            #expect(notModified.header("ETag") == "\"4\"")
            let head = try client.readResponse(headRequest: true)
            #expect(head.header("Content-Length") == "5")
            #expect(try client.readResponse().text == "/x")
        }
    }

    @Test func closesAfterConnectionCloseAndAfterHTTP10() throws {
        try withServer(handler: basicHandler) { _, port in
            let client = try TestClient(port: port)
            client.send(
                "GET /bye HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\nGET /ignored HTTP/1.1\r\nHost: t\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.header("Connection") == "close")
            #expect(client.isClosedByServer())

            let old = try TestClient(port: port)
            old.send("GET /old HTTP/1.0\r\n\r\n")
            #expect(try old.readResponse().header("Connection") == "close")
            #expect(old.isClosedByServer())

            let kept = try TestClient(port: port)
            kept.send("GET /kept HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try kept.readResponse().header("Connection") == "keep-alive")
            kept.send("GET /again HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try kept.readResponse().text == "/again")
        }
    }

    @Test func reportsTheRemoteAddress() throws {
        try withServer(handler: basicHandler) { _, port in
            let client = try TestClient(port: port)
            client.send("GET /remote HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().text == "127.0.0.1:\(client.localPort)")
        }
    }

    @Test func sendsContinueBeforeReadingAnExpectedBody() throws {
        try withServer(handler: basicHandler) { _, port in
            let client = try TestClient(port: port)
            client.send("POST /body HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
            #expect(try client.readResponse().status == 100)
            client.send("abc")
            #expect(try client.readResponse().text == "abc")
        }
    }

    @Test func writesALargeBodyToASlowReaderCompletely() throws {
        var pattern = [UInt8](repeating: 0, count: 6 * 1024 * 1024)
        pattern.withUnsafeMutableBufferPointer { bytes in
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 31) }
        }
        let body = pattern
        let handler: HTTPHandler = { _, responder in responder.respond(HTTPResponse(status: 200, body: body)) }
        try withServer(handler: handler) {
            _, port in
            let client = try TestClient(port: port)
            client.send("GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
            usleep(100_000)  // let the socket buffers fill so the server has to wait for EPOLLOUT
            let response = try client.readResponse()
            #expect(response.body.count == body.count)
            #expect(response.body == body)
        }
    }

    @Test func servesManyConnectionsAcrossLoops() throws {
        try withServer(handler: basicHandler) { server, port in
            let clients = try (0..<40).map { _ in try TestClient(port: port) }
            for (index, client) in clients.enumerated() { client.send("GET /\(index) HTTP/1.1\r\nHost: t\r\n\r\n") }
            for (index, client) in clients.enumerated() { #expect(try client.readResponse().text == "/\(index)") }
            #expect(server.metrics.openConnections == 40)
            #expect(server.metrics.requests == 40)
            // SO_REUSEPORT spreads connections over both loops (all 40 on one loop: probability 2^-39).
            #expect(server.requestsPerLoop.count == 2)
            #expect(server.requestsPerLoop.allSatisfy { $0 > 0 })
        }
    }
}
