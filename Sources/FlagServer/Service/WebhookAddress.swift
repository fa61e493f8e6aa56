import FlagHTTP
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a webhook may post: an `http` or `https` URL whose host resolves only to public addresses, unless the
/// server allows private ones (`--allow-private-webhooks`). Checked when the hook is made and again before each
/// attempt, after DNS, so that a name that comes to resolve to an inside address is refused then.
package struct WebhookAddress: Sendable {
    /// Why a URL is refused: what is wrong, for the admin API's 400 or the delivery's last error.
    package struct Refusal: Error, Sendable, CustomStringConvertible {
        package let message: String
        package var description: String { message }
    }

    /// The longest URL a hook may have.
    package static let maxURLLength = 2048

    /// The URL, checked for its form only: scheme, host, no credentials.
    package let url: URL
    /// The host as written, without brackets.
    package let host: String

    /// Checks the form of `text`; the addresses are checked by `resolve(allowPrivate:)`.
    package init(_ text: String) throws(Refusal) {
        guard text.utf8.count <= Self.maxURLLength else {
            throw Refusal(message: "the URL is longer than \(Self.maxURLLength) bytes")
        }
        guard let components = URLComponents(string: text), let url = components.url else {
            throw Refusal(message: "\"url\" is not a URL; give one such as https://hooks.example.com/flagstaff")
        }
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw Refusal(message: "the URL's scheme must be http or https")
        }
        guard let host = components.host, !host.isEmpty else {
            throw Refusal(message: "the URL has no host")
        }
        guard components.user == nil, components.password == nil else {
            throw Refusal(message: "the URL must not hold a user name or password; put a secret in its path instead")
        }
        self.url = url
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// The host's addresses, each checked: a Refusal names the first that is loopback, private, link-local,
    /// metadata or otherwise not public, unless `allowPrivate`. A host that does not resolve is refused too.
    package func resolve(allowPrivate: Bool) throws(Refusal) -> [IPAddress] {
        let addresses: [IPAddress]
        if let literal = IPAddress(host) {
            addresses = [literal]
        } else {
            addresses = try Self.lookUp(host)
        }
        guard !allowPrivate else { return addresses }
        for address in addresses {
            if let range = Self.refusedRanges.first(where: { $0.network.contains(address) }) {
                throw Refusal(
                    message: "\(host) resolves to \(address), in \(range.name) \(range.network); webhooks may post "
                        + "only to public addresses unless the server runs with --allow-private-webhooks")
            }
        }
        return addresses
    }

    /// The networks a hook may not reach without `--allow-private-webhooks`, each with what it is.
    static let refusedRanges: [(name: String, network: CIDR)] = [
        ("this network", "0.0.0.0/8"), ("a private network", "10.0.0.0/8"), ("shared address space", "100.64.0.0/10"),
        ("loopback", "127.0.0.0/8"), ("link-local and cloud metadata", "169.254.0.0/16"),
        ("a private network", "172.16.0.0/12"), ("IETF protocol assignments", "192.0.0.0/24"),
        ("a private network", "192.168.0.0/16"), ("benchmarking", "198.18.0.0/15"), ("multicast", "224.0.0.0/4"),
        ("reserved", "240.0.0.0/4"), ("the unspecified address", "::/128"), ("loopback", "::1/128"),
        ("NAT64", "64:ff9b::/96"), ("6to4", "2002::/16"), ("unique local (private)", "fc00::/7"),
        ("link-local", "fe80::/10"), ("multicast", "ff00::/8"),
    ].map { (name, text) in (name, Self.network(text)) }

    private static func network(_ text: String) -> CIDR {
        do {
            return try CIDR(text)
        } catch {
            preconditionFailure("the built-in network \(text) does not parse: \(error)")
        }
    }

    /// The addresses `getaddrinfo` gives for `host`.
    private static func lookUp(_ host: String) throws(Refusal) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            throw Refusal(message: "\(host) does not resolve: \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            if let address = entry.pointee.ai_addr, let parsed = Self.address(address, family: entry.pointee.ai_family)
            {
                addresses.append(parsed)
            }
            next = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw Refusal(message: "\(host) resolves to no IPv4 or IPv6 address") }
        return addresses
    }

    /// The address in a socket address of family `family`, through its text form.
    private static func address(_ pointer: UnsafeMutablePointer<sockaddr>, family: Int32) -> IPAddress? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch family {
        case AF_INET:
            var address = pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil else { return nil }
        case AF_INET6:
            var address = pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return nil }
        default:
            return nil
        }
        return IPAddress(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
