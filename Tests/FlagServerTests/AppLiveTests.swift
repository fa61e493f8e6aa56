import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

@Suite("flagserver live on port 0", .live)
struct AppLiveTests {
    /// One loop holds the long-poll and the stream while the write, answered on the store queue, wakes both from
    /// another thread.
    @Test func documentsLongPollsAndStreamsOverRealSockets() throws {
        try withTemporaryDirectory { directory in
            // The unsigned wire format; SigningRouteTests has the signed one.
            let harness = try AppHarness(directory: directory, signed: false)
            try harness.withLive({ $0.loopCount = 1 }) { live in
                let port = live.port
                let auth = "Authorization: Bearer \(harness.sdk)\r\n"

                let reader = try live.client()
                let document = try reader.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
                #expect(document.status == 200)
                #expect(document.header("ETag") == "\"1\"")
                #expect(document.header("Date") != nil)
                #expect(document.body == (try? harness.app.service.servedDocument("ios-prod"))?.bytes)
                let notModified = try reader.send(
                    "GET", "/v1/sets/ios-prod", token: harness.sdk, headers: [("If-None-Match", "\"1\"")])
                #expect(notModified.status == 304)

                let poll = try TestClient(port: port)
                poll.send("GET /v1/sets/ios-prod?wait=10 HTTP/1.1\r\nHost: t\r\n\(auth)If-None-Match: \"1\"\r\n\r\n")
                let stream = try TestClient(port: port)
                stream.send("GET /v1/sets/ios-prod/stream HTTP/1.1\r\nHost: t\r\n\(auth)\r\n")
                let head = try stream.readHead()
                #expect(head.status == 200)
                #expect(head.header("Content-Type") == "text/event-stream; charset=utf-8")
                #expect(head.header("X-Accel-Buffering") == "no")
                let put = Array("event: put\nid: 1\ndata: ".utf8) + document.body + [0x0A, 0x0A]
                #expect(stream.read(count: put.count) == put)
                #expect(waitUntil { harness.app.service.registry.subscriberCounts()["ios-prod"] == 2 })

                #expect(try harness.killOverSocket("new-checkout", port: port, reason: "live").status == 200)

                let woken = try poll.readResponse()
                #expect(woken.status == 200)
                #expect(woken.header("ETag") == "\"2\"")
                let state = try #require(harness.app.service.state("ios-prod"))
                #expect(woken.body == (try harness.app.service.servedDocument("ios-prod")).bytes)
                let patch = SetUpdate(
                    state: state, base: 1, changed: [.flag("new-checkout"): state.items[.flag("new-checkout")]]
                ).patchEvent
                #expect(stream.read(count: patch.count) == patch)

                // The kill's connection was closed on this side; the server counts it until it reads that close.
                #expect(waitUntil { live.server.metrics.openConnections == 3 })
                let metrics = try live.client().send("GET", "/metrics", token: harness.admin)
                #expect(metrics.status == 200)
                #expect(metrics.text.contains("flagserver_open_streams 1\n"))
                #expect(metrics.text.contains("flagserver_open_connections 4\n"))

                harness.app.shutdown()
                #expect(stream.isClosedByServer())
            }
        }
    }
}
