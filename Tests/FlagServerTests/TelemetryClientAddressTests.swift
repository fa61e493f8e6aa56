import FlagTestSupport
import Testing

@testable import FlagHTTP
@testable import FlagServer

/// Client telemetry's budget per source address is spent by the client a trusted proxy names, not by the proxy.
@Suite("Telemetry: the per-address budget behind a trusted proxy")
struct TelemetryClientAddressTests {
    /// Posts an empty report of `ios-prod` as the engine hands it over when it arrives from 127.0.0.1, a trusted
    /// proxy, with `forwardedFor` as its `X-Forwarded-For` (none when nil); the status.
    static func post(_ harness: AppHarness, forwardedFor: String?) async throws -> Int {
        let header = forwardedFor.map { "X-Forwarded-For: \($0)\r\n" } ?? ""
        var parser = HTTPRequestParser()
        parser.origin = RequestOrigin(
            remoteAddress: "127.0.0.1:40000", peer: IPAddress("127.0.0.1"), peerText: "127.0.0.1",
            proxies: TrustedProxies([try CIDR("127.0.0.0/8")]))
        parser.append(
            Array(
                ("POST /v1/sets/ios-prod/telemetry HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.sdk)\r\n"
                    + "\(header)Content-Length: 2\r\n\r\n{}").utf8))
        guard case .request(let request) = parser.next() else {
            Issue.record("the parser made no request")
            return 0
        }
        let recorder = HTTPResponseRecorder()
        harness.app.handler(request, recorder.responder)
        return try #require(await recorder.waitForResponse(timeout: .patience)).status
    }

    @Test func eachClientBehindTheProxyHasItsOwnBudget() async throws {
        try await withHarness { harness in
            let perAddress = Int(ClientTelemetry.Limits().reportsPerAddressPerSecond)
            // An empty report spends its source's budget, then is refused as invalid (400); the clock stands still.
            var statuses: [Int] = []
            for _ in 0..<perAddress {
                statuses.append(try await Self.post(harness, forwardedFor: "6.6.6.6, 198.51.100.7"))
            }
            #expect(Set(statuses) == [400])
            let spent = try await Self.post(harness, forwardedFor: "198.51.100.7")
            #expect(spent == 429)
            let another = try await Self.post(harness, forwardedFor: "203.0.113.9")
            #expect(another == 400)
            let proxy = try await Self.post(harness, forwardedFor: nil)
            #expect(proxy == 400, "the proxy's own budget is apart")
        }
    }
}
