import Testing

@testable import FlagHTTP

/// Whom a connection's requests come from, and which client address the connection counts for, without sockets.
@Suite("Connection state machine: client addresses, without sockets")
struct ConnectionStateMachineClientTests {
    typealias Driver = ConnectionStateMachineTests.Driver

    static let proxy = IPAddress(ipv4: 0x0A00_0001)  // 10.0.0.1
    static let phone = IPAddress(ipv4: 0xC633_6407)  // 198.51.100.7
    static let laptop = IPAddress(ipv4: 0xCB00_7109)  // 203.0.113.9

    static func origin(_ peer: IPAddress, trusting networks: [String] = []) throws -> RequestOrigin {
        let proxies = try TrustedProxies(networks.map { try CIDR($0) })
        return RequestOrigin(
            remoteAddress: "\(peer):40000", peer: peer, peerText: peer.description,
            proxies: proxies.contains(peer) ? proxies : nil)
    }

    static func get(from client: String? = nil) -> String {
        ConnectionStateMachineTests.get("/v1/sets/s", client.map { "X-Forwarded-For: 6.6.6.6, \($0)\r\n" } ?? "")
    }

    @Test func anUntrustedPeerIsTheClientAndStaysCountedAsAccepted() throws {
        let configuration = ConnectionStateMachineTests.configuration(maxConnectionsPerAddress: 3)
        var driver = Driver(configuration, origin: try Self.origin(Self.proxy), countedAddress: Self.proxy)
        driver.receive(Self.get(from: "198.51.100.7") + Self.get())
        #expect(driver.dispatched.map(\.request.clientAddress) == ["10.0.0.1", "10.0.0.1"])
        #expect(driver.dispatched.map(\.request.remoteAddress) == ["10.0.0.1:40000", "10.0.0.1:40000"])
        #expect(driver.machine.countedAddress == Self.proxy)
        #expect(driver.counts.counts.isEmpty, "counted at accept by the socket code, not per request")
    }

    @Test func aTrustedProxysConnectionCountsForTheClientOfItsLatestRequest() throws {
        let configuration = ConnectionStateMachineTests.configuration(maxConnectionsPerAddress: 3)
        var driver = Driver(configuration, origin: try Self.origin(Self.proxy, trusting: ["10.0.0.0/8"]))
        #expect(driver.machine.countedAddress == nil, "for no one before its first request")
        driver.receive(Self.get(from: "198.51.100.7") + Self.get(from: "198.51.100.7"))
        #expect(driver.dispatched.map(\.request.clientAddress) == ["198.51.100.7", "198.51.100.7"])
        #expect(driver.dispatched.map(\.sequence) == [0, 1])
        #expect(driver.machine.countedAddress == Self.phone)
        #expect(driver.counts.counts == [Self.phone: 1])
        driver.receive(Self.get(from: "203.0.113.9"))
        #expect(driver.machine.countedAddress == Self.laptop)
        #expect(driver.counts.counts == [Self.laptop: 1])
        // Without the header the request is the proxy's own.
        driver.receive(Self.get())
        #expect(driver.dispatched.last?.request.clientAddress == "10.0.0.1")
        #expect(driver.counts.counts == [Self.proxy: 1])
        #expect(driver.dispatched.map(\.sequence) == [0, 1, 2, 3])
    }

    @Test func aRequestForAClientOverTheCapIsRefusedAndTheConnectionCloses() throws {
        let configuration = ConnectionStateMachineTests.configuration(maxConnectionsPerAddress: 3)
        var driver = Driver(configuration, origin: try Self.origin(Self.proxy, trusting: ["10.0.0.0/8"]))
        driver.receive(Self.get(from: "203.0.113.9"))
        // Three other connections of the phone are open.
        for _ in 0..<3 { _ = driver.counts.open(Self.phone) }
        driver.receive(Self.get(from: "198.51.100.7") + Self.get(from: "203.0.113.9"))
        #expect(driver.dispatched.count == 1)
        let rejection = try #require(driver.rejections.first)
        #expect(rejection.status == 503)
        #expect(rejection.code == "overloaded")
        #expect(rejection.limit == .maxConnectionsPerAddress)
        #expect(rejection.path == "/v1/sets/s")
        #expect(rejection.metricsReason == "connection_limit_per_address")
        #expect(rejection.message == "too many open connections from one address (at most 3); retry later")
        #expect(driver.machine.input == .discarding, "nothing more is read, the pipelined request included")
        // Still counted for the client it had until it closes.
        #expect(driver.machine.countedAddress == Self.laptop)
        #expect(driver.counts.counts == [Self.phone: 3, Self.laptop: 1])
        _ = driver.respond(0, "first")
        driver.flush()
        #expect(driver.machine.phase == .lingering)
        #expect(driver.text.contains("first") && driver.text.hasSuffix("rejected"))
    }

    @Test func withoutACapAProxysRequestsAreNotCountedButStillNameTheirClient() throws {
        var driver = Driver(origin: try Self.origin(Self.proxy, trusting: ["10.0.0.0/8"]))
        driver.receive(Self.get(from: "198.51.100.7") + Self.get(from: "[2001:db8::7]:443"))
        #expect(driver.dispatched.map(\.request.clientAddress) == ["198.51.100.7", "2001:db8::7"])
        #expect(driver.machine.countedAddress == nil)
        #expect(driver.counts.counts.isEmpty)
    }

    @Test func aRequestNotFromASocketHasTheHostOfItsRemoteAddress() {
        #expect(HTTPRequest(method: "GET", target: "/").clientAddress == "")
        #expect(HTTPRequest(method: "GET", target: "/", remoteAddress: "192.0.2.1:80").clientAddress == "192.0.2.1")
        #expect(HTTPRequest(method: "GET", target: "/", remoteAddress: "[::1]:80").clientAddress == "::1")
        let given = HTTPRequest(method: "GET", target: "/", remoteAddress: "[::1]:80", clientAddress: "198.51.100.7")
        #expect(given.clientAddress == "198.51.100.7")
        #expect(given.storage.client == Self.phone)
    }
}
