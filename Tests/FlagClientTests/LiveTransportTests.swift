import FlagCore
import FlagHTTP
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// The real URLSession transport against a scripted HTTP server on a local socket.
@Suite(.live) struct LiveTransportTests {
    func configuration(_ server: ScriptedHTTPServer, refresh: RefreshMode) -> FlagClient.Configuration {
        var configuration = FlagClient.Configuration(
            server: server.url, set: "ios-prod", sdkKey: "sdk-live", cacheDirectory: nil)
        configuration.refresh = refresh
        configuration.pollInterval = 1
        configuration.environment = [:]
        return configuration
    }

    @Test func streamDeliversPutAndPatchSplitAcrossWrites() async throws {
        let put = Docs.sse(
            "put", id: 1,
            String(
                decoding: Docs.bytes(version: 1, Docs.flag("new-checkout", false), Docs.flag("dark-mode", true)),
                as: UTF8.self))
        let patchText =
            "event: patch\r\nid: 2\r\ndata: "
            + Docs.patch(version: 2, base: 1, flags: [Docs.flag("new-checkout", true)]) + "\r\n\r\n"
        let patch = Array(patchText.utf8)
        let server = try ScriptedHTTPServer { request in
            guard request.path == "/v1/sets/ios-prod/stream" else {
                return .init(status: 404, headers: [:], chunks: [])
            }
            return .init(
                status: 200, headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"],
                chunks: [
                    Array(put[..<10]), Array(put[10...]), Array(": heartbeat\n".utf8),
                    Array(patch[..<(patch.count - 3)]), Array(patch[(patch.count - 3)...]),
                ],
                keepOpen: true)
        }
        defer { server.stop() }
        let client = try FlagClient(configuration: configuration(server, refresh: .stream))
        defer { client.shutdown() }
        #expect(await client.ready(timeout: .patience))
        // Generous: under Thread Sanitizer the synchronous tests beside this one can hold both threads of the
        // cooperative pool for seconds (a 5 s wait timed out there once); a pass takes milliseconds.
        try await eventually("v2", timeout: .patience) { client.state == .live(version: 2) }
        let session = client.session(unitID: "u")
        #expect(session.detail(.newCheckout).value == true)
        #expect(session.detail(.newCheckout).version == 2)
        #expect(session.value(.darkMode) == true)
        let request = try #require(server.received.first)
        #expect(request.method == "GET")
        #expect(request.headers["authorization"] == "Bearer sdk-live")
        #expect(request.headers["accept"] == "text/event-stream")
        #expect(request.headers["last-event-id"] == nil)
    }

    @Test func pollingWithETagAgainstARealSocket() async throws {
        let body = Docs.bytes(version: 3, Docs.flag("new-checkout", true))
        let server = try ScriptedHTTPServer { request in
            if request.headers["if-none-match"] == "\"3\"" {
                return .init(status: 304, headers: ["ETag": "\"3\""], chunks: [])
            }
            return .init(status: 200, headers: ["Content-Type": "application/json", "ETag": "\"3\""], chunks: [body])
        }
        defer { server.stop() }
        let client = try FlagClient(configuration: configuration(server, refresh: .poll))
        defer { client.shutdown() }
        #expect(await client.ready(timeout: .patience))
        #expect(client.session(unitID: "u").value(.newCheckout) == true)
        try await eventually("second poll", timeout: .patience) { server.received.count >= 2 }
        #expect(server.received[0].path == "/v1/sets/ios-prod")
        #expect(server.received[1].headers["if-none-match"] == "\"3\"")
        #expect(client.state == .live(version: 3))
    }
}
