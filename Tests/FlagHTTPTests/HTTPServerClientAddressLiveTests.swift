import FlagTestBasics
import Testing

@testable import FlagHTTP

/// Answers every request with its client address.
private let clientHandler: HTTPHandler = { request, responder in
    responder.respond(HTTPResponse(status: 200, body: Array(request.clientAddress.utf8)))
}

/// The client address behind trusted proxies and the cap of connections per client address, on real sockets.
@Suite("HTTP server: client addresses and connections per address, live", .live)
struct HTTPServerClientAddressLiveTests {
    static func capOf3(trustingLoopback: Bool) throws -> (inout HTTPServerConfiguration) -> Void {
        let proxies = trustingLoopback ? [try CIDR("127.0.0.0/8")] : []
        return { configuration in
            configuration.maxConnectionsPerAddress = 3
            configuration.trustedProxies = proxies
        }
    }

    /// A request on `client` as from behind a proxy that appended `forwardedFor`; the response.
    static func get(_ client: TestClient, forwardedFor: String? = nil) throws -> TestResponse {
        let header = forwardedFor.map { "X-Forwarded-For: \($0)\r\n" } ?? ""
        client.send("GET /who HTTP/1.1\r\nHost: t\r\n\(header)\r\n")
        return try client.readResponse()
    }

    @Test func theFourthConnectionFromOneAddressIsRefusedUntilOneCloses() throws {
        try withServer(try Self.capOf3(trustingLoopback: false), handler: clientHandler) { server, port in
            let open = try (0..<3).map { _ in try TestClient(port: port) }
            for client in open { #expect(try Self.get(client).text == "127.0.0.1") }
            let fourth = try TestClient(port: port)
            let refused = try fourth.readResponse()
            #expect(refused.status == 503)
            #expect(refused.header("Connection") == "close")
            #expect(refused.header("Retry-After") == "1")
            #expect(
                refused.text == #"{"error":{"code":"overloaded","message":"too many open connections from one "#
                    + #"address (at most 3); retry later","path":null}}"#)
            #expect(fourth.isClosedByServer())
            #expect(server.metrics.rejections["connection_limit_per_address"] == 1)
            #expect(server.metrics.rejections["connection_limit"] == nil)
            // The open ones still serve, and a closed one makes room.
            #expect(try Self.get(open[2]).status == 200)
            open[0].send("GET /bye HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            _ = open[0].readUntilClose()
            #expect(waitUntil { server.metrics.openConnections == 2 })
            let fifth = try TestClient(port: port)
            #expect(try Self.get(fifth).status == 200)
        }
    }

    @Test func anUntrustedPeersForwardedForIsIgnored() throws {
        try withServer(try Self.capOf3(trustingLoopback: false), handler: clientHandler) { server, port in
            let clients = try (0..<3).map { _ in try TestClient(port: port) }
            for (index, client) in clients.enumerated() {
                #expect(try Self.get(client, forwardedFor: "198.51.100.\(index)").text == "127.0.0.1")
            }
            let fourth = try TestClient(port: port)
            fourth.send("GET /who HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n")
            #expect(try fourth.readResponse().status == 503)
            #expect(server.metrics.rejections["connection_limit_per_address"] == 1)
        }
    }

    @Test func behindATrustedProxyConnectionsCountPerForwardedClient() throws {
        try withServer(try Self.capOf3(trustingLoopback: true), handler: clientHandler) { server, port in
            // More connections from the proxy's own address than the cap: none counts before its first request.
            let phone = try (0..<3).map { _ in try TestClient(port: port) }
            let laptop = try TestClient(port: port)
            let fourthPhone = try TestClient(port: port)
            for client in phone {
                #expect(try Self.get(client, forwardedFor: "6.6.6.6, 198.51.100.7").text == "198.51.100.7")
            }
            #expect(try Self.get(laptop, forwardedFor: "203.0.113.9").text == "203.0.113.9")
            let refused = try Self.get(fourthPhone, forwardedFor: "198.51.100.7")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "1")
            #expect(refused.text.contains("too many open connections from one address (at most 3)"))
            #expect(fourthPhone.isClosedByServer())
            #expect(server.metrics.rejections["connection_limit_per_address"] == 1)
            // A connection moves with its client: the laptop's becomes a phone's, and the phone is full.
            let moved = try Self.get(laptop, forwardedFor: "198.51.100.7")
            #expect(moved.status == 503)
            #expect(server.metrics.rejections["connection_limit_per_address"] == 2)
            // The phone's connections serve other clients as they come, and one the phone no longer uses frees a
            // place for it.
            #expect(try Self.get(phone[0], forwardedFor: "192.0.2.44").text == "192.0.2.44")
            let again = try TestClient(port: port)
            #expect(try Self.get(again, forwardedFor: "198.51.100.7").text == "198.51.100.7")
        }
    }

    @Test func withoutTheHeaderATrustedProxysRequestIsItsOwn() throws {
        try withServer(try Self.capOf3(trustingLoopback: true), handler: clientHandler) { _, port in
            let client = try TestClient(port: port)
            #expect(try Self.get(client).text == "127.0.0.1")
            #expect(try Self.get(client, forwardedFor: "unknown").text == "127.0.0.1")
            #expect(try Self.get(client, forwardedFor: "[2001:db8::7]:5000").text == "2001:db8::7")
            #expect(try Self.get(client, forwardedFor: "198.51.100.7, 127.0.0.1").text == "198.51.100.7")
        }
    }

    @Test func zeroTurnsTheCapOff() throws {
        let uncapped: (inout HTTPServerConfiguration) -> Void = { $0.maxConnectionsPerAddress = 0 }
        try withServer(uncapped, handler: clientHandler) { server, port in
            let clients = try (0..<8).map { _ in try TestClient(port: port) }
            for client in clients { #expect(try Self.get(client).status == 200) }
            #expect(server.metrics.rejections.isEmpty)
        }
    }

    @Test func theDefaultCapIsGenerous() {
        #expect(HTTPServerConfiguration().maxConnectionsPerAddress == 512)
        #expect(HTTPServerConfiguration().trustedProxies.isEmpty)
    }
}
