import FlagHTTP
import FlagTestSupport
import Testing

@testable import FlagServer

/// flagserver's cap of open connections per client address, live: what a refused client is told, and what
/// `/metrics` counts.
@Suite("Connections per client address, live", .live)
struct ConnectionCapLiveTests {
    static let refusal =
        "too many open connections from one address (at most 3); retry later (raise "
        + "limits.maxConnectionsPerAddress in the server's configuration file to allow more)"

    @Test func theFourthConnectionIsRefusedNamingTheSettingAndCounted() async throws {
        let capOf3: (inout HTTPServerConfiguration) -> Void = { $0.maxConnectionsPerAddress = 3 }
        try await withLiveApp(capOf3) { harness, _, port in
            let open = try (0..<3).map { _ in try LiveClient(port: port) }
            for client in open { #expect(try client.send("GET", "/healthz").status == 200) }
            let fourth = try TestClient(port: port)
            let refused = try fourth.readResponse()
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "1")
            #expect(try refused.json("error.code") == .string("overloaded"))
            #expect(try refused.json("error.message") == .string(Self.refusal))
            #expect(fourth.isClosedByServer())
            let metrics = try open[0].send("GET", "/metrics", token: harness.admin)
            #expect(
                metrics.text.contains("flagserver_http_rejections_total{reason=\"connection_limit_per_address\"} 1\n"))
        }
    }

    @Test func behindATrustedProxyAnOFREPRequestIsRefusedInOFREPsShape() async throws {
        let loopback = try CIDR("127.0.0.1")
        let configure: (inout HTTPServerConfiguration) -> Void = {
            $0.maxConnectionsPerAddress = 3
            $0.trustedProxies = [loopback]
        }
        try await withLiveApp(configure) { harness, _, port in
            let phone = [("X-Forwarded-For", "198.51.100.7")]
            let open = try (0..<3).map { _ in try LiveClient(port: port) }
            for client in open { #expect(try client.send("GET", "/healthz", headers: phone).status == 200) }
            // Another client behind the same proxy is not held back by the phone.
            let laptop = try LiveClient(port: port)
            #expect(try laptop.send("GET", "/healthz", headers: [("X-Forwarded-For", "203.0.113.9")]).status == 200)
            let fourth = try LiveClient(port: port)
            let refused = try fourth.send(
                "POST", "/ofrep/v1/evaluate/flags/new-checkout", token: harness.sdk,
                headers: phone + [("Content-Type", "application/json")], body: #"{"context":{"targetingKey":"u"}}"#)
            #expect(refused.status == 503)
            #expect(try refused.json("errorCode") == .string("GENERAL"))
            #expect(try refused.json("errorDetails") == .string(Self.refusal))
            #expect(fourth.connection.isClosedByServer())
            let metrics = try laptop.send("GET", "/metrics", token: harness.admin)
            #expect(
                metrics.text.contains("flagserver_http_rejections_total{reason=\"connection_limit_per_address\"} 1\n"))
        }
    }
}
