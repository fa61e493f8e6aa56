import Glibc

/// An IPv4 or IPv6 address, as the engine compares, matches and counts client addresses.
///
/// An IPv4 address is kept as its IPv4-mapped IPv6 form (`::ffff:192.0.2.1`): a client that reaches a dual-stack
/// listener over IPv4 is then the same address as over an IPv4 listener, and an IPv4 network matches it either way.
/// ```swift
/// IPAddress("192.0.2.1")?.description         // "192.0.2.1"
/// IPAddress("::ffff:192.0.2.1")?.description  // "192.0.2.1"
/// IPAddress("2001:db8::1")?.isIPv4            // false
/// ```
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// The first 64 of the 128 bits, most significant first.
    let high: UInt64
    /// The last 64 bits.
    let low: UInt64

    /// The 128 bits; an IPv4 address's are `::ffff:` and its 32 bits.
    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// An IPv4 address from its 32 bits.
    init(ipv4 bits: UInt32) {
        self.init(high: 0, low: 0xffff_0000_0000 | UInt64(bits))
    }

    /// Parses an address as `inet_pton` does: dotted decimal for IPv4 (no leading zeros), RFC 4291 text for IPv6.
    /// No brackets, port, prefix or zone (`%eth0`); nil for anything else.
    public init?(_ text: some StringProtocol) {
        var text = String(text)
        guard let parsed = text.withUTF8({ Self.parse(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = parsed
    }

    /// Parses the text in `bytes`, as `init(_:)` does, without making a `String` of it.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> IPAddress? {
        // The longest text form is INET6_ADDRSTRLEN - 1 bytes (an IPv6 address ending in dotted IPv4).
        let capacity = Int(INET6_ADDRSTRLEN)
        // A NUL would end the text early for `inet_pton`, which would then read `1.2.3.4\0junk` as an address.
        guard bytes.count >= 2, bytes.count < capacity, !bytes.contains(0) else { return nil }
        let isIPv6 = bytes.contains(ASCII.colon)
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { text -> IPAddress? in
            guard let base = text.baseAddress else { return nil }
            UnsafeMutableRawBufferPointer(text).copyMemory(from: bytes)
            text[bytes.count] = 0
            if isIPv6 {
                var address = in6_addr()
                guard inet_pton(AF_INET6, base, &address) == 1 else { return nil }
                return IPAddress(in6: address)
            }
            var address = in_addr()
            guard inet_pton(AF_INET, base, &address) == 1 else { return nil }
            return IPAddress(ipv4: UInt32(bigEndian: address.s_addr))
        }
    }

    /// The address of a socket address of family `AF_INET` or `AF_INET6`; nil for any other family.
    init?(_ storage: sockaddr_storage) {
        var copy = storage
        let address = withUnsafeBytes(of: &copy) { raw -> IPAddress? in
            switch Int32(storage.ss_family) {
            case AF_INET:
                return IPAddress(ipv4: UInt32(bigEndian: raw.load(as: sockaddr_in.self).sin_addr.s_addr))
            case AF_INET6:
                return IPAddress(in6: raw.load(as: sockaddr_in6.self).sin6_addr)
            default:
                return nil
            }
        }
        guard let address else { return nil }
        self = address
    }

    private init(in6 address: in6_addr) {
        var address = address
        let (high, low) = withUnsafeBytes(of: &address) {
            (
                UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)),
                UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
        self.init(high: high, low: low)
    }

    /// Whether this is an IPv4 address (IPv4-mapped, as every IPv4 address is kept).
    public var isIPv4: Bool { high == 0 && low >> 32 == 0xffff }

    /// The address as `inet_ntop` writes it: `192.0.2.1`, `2001:db8::1`.
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        if isIPv4 {
            var address = in_addr(s_addr: UInt32(truncatingIfNeeded: low).bigEndian)
            inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
        } else {
            var bits = (high.bigEndian, low.bigEndian)
            inet_ntop(AF_INET6, &bits, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
