import Dispatch
import FlagLock
import FlagTestBasics
import Glibc
import Synchronization
import Testing

@testable import FlagHTTP

/// Holds what handlers hand out (streams, responders) so a test can drive them from its own thread.
/// (`Locked`, not `Mutex`: ThreadSanitizer cannot see a contended `Mutex` hand-off on Linux; see `Locked`.)
final class Captured: Sendable {
    let streams = Locked<[HTTPStream]>([])
    let responders = Locked<[HTTPResponder]>([])
    let closed = Atomic<Int>(0)
}

@Suite("HTTP server streams, long-polls and shutdown, live", .live)
struct HTTPServerStreamLiveTests {
    /// `/stream` starts an event stream; `/wait` parks the responder (a long-poll). Both count `onClose`.
    static func handler(_ captured: Captured) -> HTTPHandler {
        { request, responder in
            responder.onClose { captured.closed.add(1, ordering: .relaxed) }
            switch request.path {
            case "/stream":
                let stream = responder.startStream(
                    HTTPResponse(
                        status: 200, headers: ["Content-Type": "text/event-stream"], body: Array(": hi\n\n".utf8)))
                captured.streams.withLock { $0.append(stream) }
            case "/wait":
                captured.responders.withLock { $0.append(responder) }
            default:
                responder.respond(HTTPResponse(status: 200, body: Array(request.path.utf8)))
            }
        }
    }

    /// A server on port 0 with `loops` loops, for a test that shuts it down itself; its port.
    static func started(_ captured: Captured, loops: Int) throws -> (server: HTTPServer, port: Int) {
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(port: 0, loopCount: loops), handler: handler(captured))
        return (server, try server.start())
    }

    /// Shuts `server` down with `deadline`; how long that took.
    static func shutdown(_ server: HTTPServer, deadline: Duration) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        server.shutdown(deadline: deadline)
        return clock.now - start
    }

    @Test func streamsWritesFromAnotherThreadAndReportsTheClientLeaving() throws {
        let captured = Captured()
        try withServer(handler: Self.handler(captured)) { server, port in
            let client = try TestClient(port: port)
            client.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
            let head = try client.readHead()
            #expect(head.status == 200)
            #expect(head.header("Content-Type") == "text/event-stream")
            #expect(head.header("Content-Length") == nil)
            #expect(head.header("Connection") == "close")
            #expect(client.read(count: 6) == Array(": hi\n\n".utf8))
            #expect(waitUntil { captured.streams.withLock { $0.count } == 1 })
            let stream = try #require(captured.streams.withLock { $0.first })
            #expect(server.metrics.openStreams == 1)

            let event = Array("event: patch\ndata: {}\n\n".utf8)
            let writer = DispatchQueue(label: "writer")
            writer.sync { stream.write(event) }
            #expect(client.read(count: event.count) == event)
            writer.sync { for _ in 0..<3 { stream.write(event) } }
            #expect(client.read(count: event.count * 3) == Array([event, event, event].joined()))

            #expect(captured.closed.load(ordering: .relaxed) == 0)
            Glibc.shutdown(client.fd, Int32(SHUT_RDWR))
            #expect(waitUntil { captured.closed.load(ordering: .relaxed) == 1 })
            #expect(stream.isOpen == false)
            #expect(waitUntil { server.metrics.openStreams == 0 && server.metrics.openConnections == 0 })
            stream.write(event)  // dropped silently
        }
    }

    @Test func finishingAStreamClosesTheConnectionWithoutOnClose() throws {
        let captured = Captured()
        try withServer(handler: Self.handler(captured)) { _, port in
            let client = try TestClient(port: port)
            client.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
            _ = try client.readHead()
            #expect(waitUntil { captured.streams.withLock { $0.count } == 1 })
            let stream = try #require(captured.streams.withLock { $0.first })
            DispatchQueue.global().async {
                stream.write(Array("data: last\n\n".utf8))
                stream.finish()
            }
            #expect(client.readUntilClose() == Array(": hi\n\ndata: last\n\n".utf8))
            #expect(client.sawClose)
            #expect(stream.isOpen == false)
            usleep(20_000)
            #expect(captured.closed.load(ordering: .relaxed) == 0)
        }
    }

    @Test func reportsALongPollClientLeavingAndDropsItsLateResponse() throws {
        let captured = Captured()
        try withServer(handler: Self.handler(captured)) { server, port in
            let client = try TestClient(port: port)
            client.send("GET /wait HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(waitUntil { captured.responders.withLock { $0.count } == 1 })
            Glibc.shutdown(client.fd, Int32(SHUT_RDWR))
            #expect(waitUntil { captured.closed.load(ordering: .relaxed) == 1 })
            let responder = try #require(captured.responders.withLock { $0.first })
            responder.respond(HTTPResponse(status: 304))  // the connection is gone: dropped silently
            let before = captured.closed.load(ordering: .relaxed)
            responder.onClose { captured.closed.add(1, ordering: .relaxed) }  // already closed: runs at once
            let after = captured.closed.load(ordering: .relaxed)
            #expect(after == before + 1)
            #expect(waitUntil { server.metrics.openConnections == 0 })
        }
    }

    @Test func closesASlowReaderAtTheOutputCap() throws {
        let captured = Captured()
        let smallOutput: (inout HTTPServerConfiguration) -> Void = { $0.maxPendingOutputBytes = 512 * 1024 }
        try withServer(smallOutput, handler: Self.handler(captured)) { server, port in
            let client = try TestClient(port: port)
            client.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
            _ = try client.readHead()
            #expect(waitUntil { captured.streams.withLock { $0.count } == 1 })
            let stream = try #require(captured.streams.withLock { $0.first })
            let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
            // The client never reads: the kernel buffers fill, then the engine's queue, then it gives up.
            var writes = 0
            while stream.isOpen && writes < 2_000 {
                stream.write(chunk)
                writes += 1
                if writes % 16 == 0 { usleep(1_000) }
            }
            #expect(waitUntil { !stream.isOpen })
            #expect(waitUntil { captured.closed.load(ordering: .relaxed) == 1 })
            #expect(server.metrics.rejections["slow_reader"] == 1)
            #expect(writes < 2_000)
        }
    }

    @Test func fansOneEventOutToManyStreamsQuickly() throws {
        let captured = Captured()
        try withServer(handler: Self.handler(captured)) { _, port in
            let clients = try (0..<200).map { _ in try TestClient(port: port) }
            for client in clients { client.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n") }
            for client in clients { _ = try client.readHead() }
            #expect(waitUntil { captured.streams.withLock { $0.count } == 200 })
            let streams = captured.streams.withLock { $0 }
            let event = Array(("data: " + String(repeating: "x", count: 192) + "\n\n").utf8)
            for stream in streams { stream.write(event) }
            for client in clients {
                #expect(client.read(count: 6 + event.count).suffix(event.count) == event[...])
            }
        }
    }

    @Test func shutdownLetsAnInFlightRequestFinishAndClosesStreams() throws {
        let captured = Captured()
        let (server, port) = try Self.started(captured, loops: 2)
        let waiting = try TestClient(port: port)
        waiting.send("GET /wait HTTP/1.1\r\nHost: t\r\n\r\n")
        let streaming = try TestClient(port: port)
        streaming.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try streaming.readHead()
        let idle = try TestClient(port: port)
        idle.send("GET /idle HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try idle.readResponse()
        #expect(waitUntil { captured.responders.withLock { $0.count } == 1 })

        let responder = try #require(captured.responders.withLock { $0.first })
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(150)) {
            responder.respond(HTTPResponse(status: 200, body: Array("finished".utf8)))
        }
        let took = Self.shutdown(server, deadline: .seconds(3))
        #expect(took >= .milliseconds(100))
        #expect(took < .seconds(2))

        let response = try waiting.readResponse()
        #expect(response.text == "finished")
        #expect(response.header("Connection") == "close")
        #expect(waiting.isClosedByServer())
        #expect(idle.isClosedByServer())
        #expect(streaming.read(count: 6) == Array(": hi\n\n".utf8))
        #expect(streaming.isClosedByServer())
        #expect(captured.closed.load(ordering: .relaxed) == 1)  // the stream; the long-poll was answered
        #expect(throws: TestClientError.self) { try TestClient(port: port) }
        #expect(server.metrics.openConnections == 0)
    }

    @Test func shutdownClosesWhatIsStillOpenAtTheDeadline() throws {
        let captured = Captured()
        let (server, port) = try Self.started(captured, loops: 1)
        let waiting = try TestClient(port: port)
        waiting.send("GET /wait HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(waitUntil { captured.responders.withLock { $0.count } == 1 })
        #expect(Self.shutdown(server, deadline: .milliseconds(200)) >= .milliseconds(190))
        #expect(waiting.isClosedByServer())
        #expect(captured.closed.load(ordering: .relaxed) == 1)
    }
}
