import Testing

@testable import FlagHTTP

/// Addresses and networks as the trusted-proxy setting reads them, without sockets.
@Suite("IP addresses and CIDR networks")
struct CIDRTests {
    @Test(arguments: [
        ("192.0.2.1", "192.0.2.1", true),
        ("0.0.0.0", "0.0.0.0", true),
        ("2001:db8::1", "2001:db8::1", false),
        ("2001:DB8:0:0:0:0:0:1", "2001:db8::1", false),
        ("::1", "::1", false),
        ("::", "::", false),
        // An IPv4-mapped IPv6 address is the IPv4 address: a dual-stack listener sees IPv4 clients so.
        ("::ffff:192.0.2.1", "192.0.2.1", true),
    ])
    func addressesParseAndPrintAsInetNtopDoes(_ text: String, _ printed: String, _ isIPv4: Bool) throws {
        let address = try #require(IPAddress(text))
        #expect(address.description == printed)
        #expect(address.isIPv4 == isIPv4)
    }

    @Test(arguments: [
        "", " ", "192.0.2", "192.0.2.1.5", "192.0.2.256", "192.0.2.01", "192.0.2.1:80", "[::1]", "::1%lo",
        "2001:db8::1::2", "unknown", "localhost", "1.2.3.4 ", "1.2.3.4\u{0}junk", "fe80::1/64",
    ])
    func anythingElseIsNotAnAddress(_ text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func anIPv4AddressEqualsItsMappedForm() throws {
        #expect(IPAddress("10.1.2.3") == IPAddress("::ffff:10.1.2.3"))
        #expect(IPAddress("10.1.2.3") != IPAddress("::10.1.2.3"))
    }

    @Test(arguments: [
        ("10.0.0.0/8", "10.0.0.0/8", 8),
        ("192.0.2.7", "192.0.2.7/32", 32),
        ("  172.16.0.0/12\n", "172.16.0.0/12", 12),
        ("0.0.0.0/0", "0.0.0.0/0", 0),
        ("2001:db8::/32", "2001:db8::/32", 32),
        ("::1", "::1/128", 128),
        ("::/0", "::/0", 0),
        ("::ffff:10.0.0.0/104", "10.0.0.0/8", 8),
        ("10.0.0.0/008", "10.0.0.0/8", 8),
    ])
    func networksParse(_ text: String, _ printed: String, _ prefix: Int) throws {
        let network = try CIDR(text)
        #expect(network.description == printed)
        #expect(network.prefixLength == prefix)
    }

    @Test(arguments: [
        ("10.0.0.0/8", "10.255.0.1", true),
        ("10.0.0.0/8", "::ffff:10.0.0.1", true),
        ("10.0.0.0/8", "11.0.0.1", false),
        ("10.0.0.0/8", "::a00:1", false),
        ("192.0.2.7", "192.0.2.7", true),
        ("192.0.2.7", "192.0.2.8", false),
        ("2001:db8::/32", "2001:db8:ffff::1", true),
        ("2001:db8::/32", "2001:db9::1", false),
        ("2001:db8::/32", "10.0.0.1", false),
        // An IPv4 network holds no IPv6 address, whatever its prefix; all of IPv6 holds the IPv4 ones too.
        ("0.0.0.0/0", "2001:db8::1", false),
        ("0.0.0.0/0", "203.0.113.9", true),
        ("::/0", "203.0.113.9", true),
        // A prefix that ends inside a word.
        ("2001:db8:8000::/33", "2001:db8:8000::1", true),
        ("2001:db8:8000::/33", "2001:db8:7fff::1", false),
        ("2001:db8::8/125", "2001:db8::f", true),
        ("2001:db8::8/125", "2001:db8::10", false),
    ])
    func membership(_ network: String, _ address: String, _ contained: Bool) throws {
        #expect(try CIDR(network).contains(try #require(IPAddress(address))) == contained)
    }

    @Test(arguments: [
        (
            "10.0.0.0/33",
            "\"10.0.0.0/33\" has a bad prefix length: write a whole number from 0 to 32 after the \"/\""
        ),
        (
            "2001:db8::/129",
            "\"2001:db8::/129\" has a bad prefix length: write a whole number from 0 to 128 after the \"/\""
        ),
        ("10.0.0.0/", "\"10.0.0.0/\" has a bad prefix length: write a whole number from 0 to 32 after the \"/\""),
        ("10.0.0.0/-1", "\"10.0.0.0/-1\" has a bad prefix length: write a whole number from 0 to 32 after the \"/\""),
        ("10.0.0.0/8/9", "\"10.0.0.0/8/9\" has a bad prefix length: write a whole number from 0 to 32 after the \"/\""),
        (
            "10.1.2.3/8",
            "\"10.1.2.3/8\" has address bits set beyond its prefix length: write the network 10.0.0.0/8, or "
                + "10.1.2.3/32 for the one address"
        ),
        (
            "2001:db8::1/32",
            "\"2001:db8::1/32\" has address bits set beyond its prefix length: write the network 2001:db8::/32, or "
                + "2001:db8::1/128 for the one address"
        ),
        (
            "::ffff:10.1.0.0/100",
            "\"::ffff:10.1.0.0/100\" has address bits set beyond its prefix length: write the network 0.0.0.0/4, or "
                + "10.1.0.0/32 for the one address"
        ),
        (
            "proxy.internal",
            "\"proxy.internal\" is not a network: write an IPv4 or IPv6 address with an optional prefix length, "
                + "such as 10.0.0.0/8, 2001:db8::/32 or 192.0.2.7"
        ),
        (
            "",
            "\"\" is not a network: write an IPv4 or IPv6 address with an optional prefix length, "
                + "such as 10.0.0.0/8, 2001:db8::/32 or 192.0.2.7"
        ),
        (
            "/8",
            "\"/8\" is not a network: write an IPv4 or IPv6 address with an optional prefix length, "
                + "such as 10.0.0.0/8, 2001:db8::/32 or 192.0.2.7"
        ),
    ])
    func badNetworksSayWhatToWrite(_ text: String, _ message: String) {
        #expect {
            try CIDR(text)
        } throws: { error in
            (error as? CIDR.ParseError)?.message == message
        }
    }
}
