import Testing

@testable import FlagHTTP

/// The client address behind trusted proxies, from `X-Forwarded-For`, without sockets.
@Suite("Trusted proxies and X-Forwarded-For")
struct TrustedProxiesTests {
    static func proxies(_ networks: String...) throws -> TrustedProxies {
        TrustedProxies(try networks.map { try CIDR($0) })
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        /// The address the connection came from: by default a load balancer.
        var peer = "10.0.0.1"
        let fields: [String]
        let client: String
        var testDescription: String { name }
    }

    /// Trusted: 10.0.0.0/8 (the load balancers) and 2001:db8:1::/48.
    static let cases: [Case] = [
        Case(
            name: "an untrusted peer is the client, its header ignored", peer: "203.0.113.5", fields: ["1.2.3.4"],
            client: "203.0.113.5"),
        Case(name: "a trusted peer without the header is the client", fields: [], client: "10.0.0.1"),
        Case(name: "a trusted peer with an empty header is the client", fields: [" , ,"], client: "10.0.0.1"),
        Case(name: "one entry", fields: ["198.51.100.7"], client: "198.51.100.7"),
        Case(
            name: "what the client sent is left of what the proxy appended", fields: ["6.6.6.6, 198.51.100.7"],
            client: "198.51.100.7"),
        Case(
            name: "trusted entries are skipped from the right", fields: ["6.6.6.6, 198.51.100.7, 10.2.0.1, 10.3.0.1"],
            client: "198.51.100.7"),
        Case(
            name: "several fields are one list, in order", fields: ["6.6.6.6", "198.51.100.7, 10.2.0.1", "10.3.0.1"],
            client: "198.51.100.7"),
        Case(
            name: "spaces and tabs around entries", fields: ["6.6.6.6 ,\t198.51.100.7\t,  10.2.0.1 "],
            client: "198.51.100.7"),
        Case(name: "every entry trusted: the left-most", fields: ["10.9.0.1, 10.2.0.1"], client: "10.9.0.1"),
        Case(name: "a port is dropped", fields: ["198.51.100.7:61000"], client: "198.51.100.7"),
        Case(name: "an IPv6 entry with brackets and a port", fields: ["[2001:db8:9::5]:443"], client: "2001:db8:9::5"),
        Case(name: "an IPv6 entry in brackets without a port", fields: ["[2001:db8:9::5]"], client: "2001:db8:9::5"),
        Case(name: "an IPv6 entry", fields: ["2001:db8:9::5"], client: "2001:db8:9::5"),
        Case(
            name: "a trusted IPv6 proxy is skipped", peer: "2001:db8:1::2", fields: ["198.51.100.7, 2001:db8:1::9"],
            client: "198.51.100.7"),
        Case(name: "an IPv4-mapped entry is its IPv4 address", fields: ["::ffff:198.51.100.7"], client: "198.51.100.7"),
        Case(
            name: "an IPv4-mapped peer in a trusted IPv4 network is trusted", peer: "::ffff:10.0.0.1",
            fields: ["198.51.100.7"], client: "198.51.100.7"),
        Case(
            name: "garbage left of the client does not matter", fields: ["i am root, 999.1.1.1, 198.51.100.7"],
            client: "198.51.100.7"),
        Case(
            name: "a name where the proxy wrote its peer: the proxy that wrote it, the peer",
            fields: ["198.51.100.7, unknown"], client: "10.0.0.1"),
        Case(
            name: "a name behind a second proxy: the proxy that wrote it", fields: ["198.51.100.7, _hidden, 10.2.0.1"],
            client: "10.2.0.1"),
        Case(
            name: "an untrusted address right of a name still decides", fields: ["_hidden, 198.51.100.7"],
            client: "198.51.100.7"),
        Case(name: "a left-most name with trusted entries after it", fields: ["unknown, 10.2.0.1"], client: "10.2.0.1"),
        Case(name: "a bad port makes the entry unreadable", fields: ["198.51.100.7:http"], client: "10.0.0.1"),
        Case(name: "an empty port after brackets is unreadable", fields: ["[2001:db8:9::5]:"], client: "10.0.0.1"),
        Case(name: "an IPv4 address in brackets is unreadable", fields: ["[198.51.100.7]"], client: "10.0.0.1"),
        Case(name: "a prefix is not an address", fields: ["198.51.100.0/24"], client: "10.0.0.1"),
        Case(
            name: "an empty element between entries is skipped", fields: ["198.51.100.7,,10.2.0.1"],
            client: "198.51.100.7"),
    ]

    @Test(arguments: cases)
    func theClientIsTheRightMostUntrustedEntry(_ testCase: Case) throws {
        let proxies = try Self.proxies("10.0.0.0/8", "2001:db8:1::/48")
        var headers: HTTPHeaders = ["Host": "flags.example"]
        for value in testCase.fields { headers.add(name: "X-Forwarded-For", value: value) }
        headers.add(name: "Accept", value: "*/*")
        let peer = try #require(IPAddress(testCase.peer))
        #expect(proxies.clientAddress(peer: peer, headers: headers).description == testCase.client)
    }

    @Test func theFieldNameIsCaseInsensitive() throws {
        let proxies = try Self.proxies("127.0.0.1")
        let headers: HTTPHeaders = ["x-FORWARDED-for": "198.51.100.7"]
        let peer = try #require(IPAddress("127.0.0.1"))
        #expect(proxies.clientAddress(peer: peer, headers: headers) == IPAddress("198.51.100.7"))
    }

    @Test func noNetworksTrustsNoOne() throws {
        let peer = try #require(IPAddress("127.0.0.1"))
        #expect(TrustedProxies([]).clientAddress(peer: peer, headers: ["X-Forwarded-For": "198.51.100.7"]) == peer)
    }

    /// Whatever a client behind the proxy writes, the answer is the address the proxy appended, or the proxy.
    @Test func aClientCannotChooseItsAddress() throws {
        let proxies = try Self.proxies("10.0.0.0/8")
        let peer = try #require(IPAddress("10.0.0.1"))
        let hostile = [
            "1.1.1.1", "10.0.0.5", "unknown", "1.1.1.1, 2.2.2.2", ", , ,", String(repeating: "9.9.9.9,", count: 500),
            "[::1]:1", "::ffff:10.0.0.9", "\u{7f}", "1.1.1.1:99999999",
        ]
        for sent in hostile {
            // The proxy appends the address it saw; the client wrote everything to its left.
            let headers: HTTPHeaders = ["X-Forwarded-For": "\(sent), 198.51.100.7"]
            #expect(proxies.clientAddress(peer: peer, headers: headers) == IPAddress("198.51.100.7"), "\(sent)")
        }
    }
}
