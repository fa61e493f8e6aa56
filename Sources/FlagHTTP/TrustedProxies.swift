/// The proxies whose `X-Forwarded-For` the engine believes, and the client address it reads from that header, by
/// the rules of `HTTPServerConfiguration.trustedProxies`. No I/O: the engine asks it once per connection whether the
/// peer is trusted, and then once per request on the connections of trusted peers only.
struct TrustedProxies: Sendable, Equatable {
    let networks: [CIDR]

    init(_ networks: [CIDR]) {
        self.networks = networks
    }

    /// Whether `address` is in one of the networks.
    func contains(_ address: IPAddress) -> Bool {
        networks.contains { $0.contains(address) }
    }

    /// The client of a request that came from `peer` with `headers`: the peer itself unless it is trusted.
    func clientAddress(peer: IPAddress, headers: HTTPHeaders) -> IPAddress {
        contains(peer) ? forwardedClient(peer: peer, headers: headers) : peer
    }

    /// What the walk over the entries has found so far.
    private enum Walk {
        /// Every entry so far is a trusted proxy.
        case allTrusted
        /// The entry that is the client, unless an entry to its right is not trusted.
        case client(IPAddress)
        /// The last entry that is not trusted is not an address: the client is the trusted proxy that wrote it,
        /// the next entry to its right, or the peer if there is none.
        case afterUnreadable
    }

    /// The client behind `peer`, a trusted proxy, from every `X-Forwarded-For` field of `headers`, in order, read as
    /// one comma-separated list.
    ///
    /// The entries are read left to right, as the fields come, to the answer of the walk from the right: the
    /// right-most entry that is not trusted decides. A client can write anything to the left of what the proxies
    /// append, but never to its right, so every answer is an address a trusted proxy saw as its TCP peer (or the
    /// left-most proxy, when all are trusted).
    func forwardedClient(peer: IPAddress, headers: HTTPHeaders) -> IPAddress {
        var walk = Walk.allTrusted
        var leftmost: IPAddress?
        var isFirst = true
        headers.forEachValue(named: "X-Forwarded-For") { value in
            HTTPHeaders.forEachListElement(value) { entry in
                let address = Self.address(ofEntry: entry)
                if isFirst {
                    leftmost = address
                    isFirst = false
                }
                if let address, contains(address) {
                    if case .afterUnreadable = walk { walk = .client(address) }
                } else {
                    walk = address.map { .client($0) } ?? .afterUnreadable
                }
            }
            return true
        }
        switch walk {
        case .client(let address): return address
        case .afterUnreadable: return peer
        case .allTrusted: return leftmost ?? peer
        }
    }

    /// The address of one `X-Forwarded-For` entry, already trimmed: `192.0.2.1`, `2001:db8::1`, or either with a
    /// port (`192.0.2.1:5000`, `[2001:db8::1]:5000`), which is dropped; nil for anything else.
    static func address(ofEntry entry: UnsafeRawBufferPointer) -> IPAddress? {
        if entry.first == ASCII.leftBracket {
            guard let close = entry.firstIndex(of: ASCII.rightBracket) else { return nil }
            let inner = UnsafeRawBufferPointer(rebasing: entry[1..<close])
            let rest = UnsafeRawBufferPointer(rebasing: entry[(close + 1)...])
            guard inner.contains(ASCII.colon), rest.isEmpty || (rest[0] == ASCII.colon && isPort(rest.dropFirst()))
            else { return nil }
            return IPAddress.parse(inner)
        }
        if let colon = entry.firstIndex(of: ASCII.colon), entry.lastIndex(of: ASCII.colon) == colon {
            guard isPort(entry[(colon + 1)...]) else { return nil }
            return IPAddress.parse(UnsafeRawBufferPointer(rebasing: entry[..<colon]))
        }
        return IPAddress.parse(entry)
    }

    private static func isPort(_ digits: Slice<UnsafeRawBufferPointer>) -> Bool {
        (1...5).contains(digits.count) && digits.allSatisfy(ASCII.isDigit)
    }
}

/// Whom a connection's requests come from, which the parser stamps on each request: the TCP peer and, when the peer
/// is a trusted proxy, the proxies whose `X-Forwarded-For` names the client.
struct RequestOrigin: Sendable {
    /// `host:port` of the peer (`HTTPRequest.remoteAddress`); empty when not from a socket.
    var remoteAddress = ""
    /// The peer's address; nil when not from a socket.
    var peer: IPAddress?
    /// `peer` as text: the client address of every request when the peer is not a trusted proxy.
    var peerText = ""
    /// Set only when the peer is a trusted proxy: each request's client is then read from its `X-Forwarded-For`.
    var proxies: TrustedProxies?

    /// The host part of `host:port` or `[host]:port`; the text itself when it has no port.
    static func host(of remoteAddress: String) -> Substring {
        if remoteAddress.hasPrefix("["), let close = remoteAddress.firstIndex(of: "]") {
            return remoteAddress[remoteAddress.index(after: remoteAddress.startIndex)..<close]
        }
        if let colon = remoteAddress.firstIndex(of: ":"), remoteAddress.lastIndex(of: ":") == colon {
            return remoteAddress[..<colon]
        }
        return remoteAddress[...]
    }
}
