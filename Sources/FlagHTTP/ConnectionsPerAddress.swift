/// Open connections per client address against `HTTPServerConfiguration.maxConnectionsPerAddress`: the accounting
/// alone, without locks or sockets. The engine keeps one behind a lock that every loop shares, and touches it when a
/// connection is accepted or closed, and when a trusted proxy's connection carries a request for another client.
struct ConnectionsPerAddress {
    /// The most connections one address may have open (at least 1).
    let limit: Int
    /// Only addresses with a connection open, so the table is never larger than the connections.
    private(set) var counts: [IPAddress: Int] = [:]

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts one more connection for `address`; false, counting nothing, if it has `limit` open already.
    mutating func open(_ address: IPAddress) -> Bool {
        let count = counts[address, default: 0]
        guard count < limit else { return false }
        counts[address] = count + 1
        return true
    }

    /// A connection counted for `address` closed.
    mutating func close(_ address: IPAddress) {
        guard let count = counts[address] else { return }
        counts[address] = count > 1 ? count - 1 : nil
    }

    /// A connection counted for `old` (nil: for no address) now serves `new`: it is counted for `new` instead if
    /// `new` has room. False if not; it then stays counted for `old`.
    mutating func move(from old: IPAddress?, to new: IPAddress) -> Bool {
        guard old != new else { return true }
        guard open(new) else { return false }
        if let old { close(old) }
        return true
    }
}
