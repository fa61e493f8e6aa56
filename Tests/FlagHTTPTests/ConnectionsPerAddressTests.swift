import Testing

@testable import FlagHTTP

/// The count of open connections per client address, without sockets.
@Suite("Connections per address")
struct ConnectionsPerAddressTests {
    static let phone = IPAddress(ipv4: 0xC633_6407)  // 198.51.100.7
    static let other = IPAddress(ipv4: 0xCB00_7109)  // 203.0.113.9

    /// Opens a connection for each address in turn; whether each was counted.
    static func open(_ table: inout ConnectionsPerAddress, _ addresses: IPAddress...) -> [Bool] {
        addresses.map { table.open($0) }
    }

    @Test func theCapHoldsPerAddressAndAClosedConnectionMakesRoom() {
        var table = ConnectionsPerAddress(limit: 3)
        let phone = Self.phone
        #expect(Self.open(&table, phone, phone, phone, phone, Self.other) == [true, true, true, false, true])
        #expect(table.counts == [phone: 3, Self.other: 1])
        table.close(phone)
        #expect(Self.open(&table, phone, phone) == [true, false])
    }

    @Test func anAddressWithNothingOpenIsForgotten() {
        var table = ConnectionsPerAddress(limit: 2)
        #expect(Self.open(&table, Self.phone) == [true])
        table.close(Self.phone)
        #expect(table.counts.isEmpty)
        // A close without an open (never happens) does not go below zero.
        table.close(Self.phone)
        #expect(table.counts.isEmpty)
    }

    @Test func aConnectionMovesToItsNewClientIfThereIsRoom() {
        var table = ConnectionsPerAddress(limit: 2)
        // A proxy's connection counts for no one until its first request.
        var moved = table.move(from: nil, to: Self.phone)
        #expect(moved && table.counts == [Self.phone: 1])
        moved = table.move(from: Self.phone, to: Self.phone)
        #expect(moved && table.counts == [Self.phone: 1])
        moved = table.move(from: Self.phone, to: Self.other)
        #expect(moved && table.counts == [Self.other: 1])
        #expect(Self.open(&table, Self.phone, Self.phone) == [true, true])
        // Full: the connection stays counted for the client it had.
        moved = table.move(from: Self.other, to: Self.phone)
        #expect(!moved)
        #expect(table.counts == [Self.phone: 2, Self.other: 1])
    }
}
