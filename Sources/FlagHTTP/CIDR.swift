/// An IPv4 or IPv6 network in CIDR notation: `10.0.0.0/8`, `2001:db8::/32`, or one address alone (`192.0.2.7`,
/// the same as `192.0.2.7/32`).
///
/// ```swift
/// let proxies = try CIDR("10.0.0.0/8")
/// proxies.contains(IPAddress("10.1.2.3")!)  // true
/// try CIDR("10.1.2.3/8")                    // throws: bits set beyond the prefix; did you mean 10.0.0.0/8?
/// ```
public struct CIDR: Hashable, Sendable, CustomStringConvertible {
    /// The network's first address.
    public let network: IPAddress
    /// The prefix over the 128-bit form every address is kept in: an IPv4 network's is 96 more than its own.
    let bits: Int
    private let maskHigh: UInt64
    private let maskLow: UInt64

    /// Parses `ADDRESS/PREFIX` or `ADDRESS`; surrounding whitespace is ignored.
    ///
    /// Throws when the address is not one (`init?(_:)` of `IPAddress`), the prefix is not a whole number in the
    /// address's range (0–32 for IPv4, 0–128 for IPv6), or the address has bits set beyond the prefix
    /// (`10.1.2.3/8`): such a text is most often a typo, and reading it as `10.0.0.0/8` would trust far more than
    /// the one host its writer may have meant.
    public init(_ text: String) throws(ParseError) {
        let trimmed = text.trimmingASCIIWhitespace()
        let parts = trimmed.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let addressText = parts.first, let address = IPAddress(addressText) else {
            throw ParseError(.notAnAddress, text)
        }
        // The prefix counts in the family the text is written in: `::ffff:10.0.0.0/104` is `10.0.0.0/8`.
        let width = addressText.contains(":") ? 128 : 32
        var prefix = width
        if parts.count == 2 {
            let prefixText = parts[1]
            guard !prefixText.isEmpty, prefixText.utf8.count <= 3, prefixText.utf8.allSatisfy(ASCII.isDigit),
                let parsed = Int(prefixText), parsed <= width
            else { throw ParseError(.badPrefix(width: width), text) }
            prefix = parsed
        }
        bits = prefix + 128 - width
        (maskHigh, maskLow) = Self.mask(bits)
        guard address.high & ~maskHigh == 0, address.low & ~maskLow == 0 else {
            let network = IPAddress(high: address.high & maskHigh, low: address.low & maskLow)
            throw ParseError(
                .hostBitsSet(network: Self.text(network, bits: bits), host: Self.text(address, bits: 128)), text)
        }
        network = address
    }

    /// The leading bits the network's addresses share, in its family's terms: 0–32 for IPv4, 0–128 for IPv6.
    public var prefixLength: Int { Self.familyPrefix(network, bits: bits) }

    /// Whether `address` is in this network. An IPv4 network holds IPv4 addresses only; an IPv6 network that
    /// covers `::ffff:0:0/96` holds IPv4 addresses too.
    @inline(__always)
    public func contains(_ address: IPAddress) -> Bool {
        address.high & maskHigh == network.high && address.low & maskLow == network.low
    }

    /// `network/prefix`, e.g. `10.0.0.0/8`.
    public var description: String { Self.text(network, bits: bits) }

    private static func familyPrefix(_ address: IPAddress, bits: Int) -> Int {
        address.isIPv4 && bits >= 96 ? bits - 96 : bits
    }

    private static func text(_ address: IPAddress, bits: Int) -> String {
        "\(address)/\(familyPrefix(address, bits: bits))"
    }

    /// The first `bits` of 128 set, as two words. Shifts by 64 or more give zero (Swift's smart shifts).
    private static func mask(_ bits: Int) -> (high: UInt64, low: UInt64) {
        (bits >= 64 ? .max : ~0 << (64 - bits), bits <= 64 ? 0 : ~0 << (128 - bits))
    }

    /// Why a text is not a network, and what to write instead.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        fileprivate enum Code: Equatable {
            case notAnAddress
            case badPrefix(width: Int)
            case hostBitsSet(network: String, host: String)
        }

        private let code: Code
        /// What is wrong with the text and how to write it.
        public let message: String

        fileprivate init(_ code: Code, _ text: String) {
            self.code = code
            switch code {
            case .notAnAddress:
                message =
                    "\"\(text)\" is not a network: write an IPv4 or IPv6 address with an optional prefix length, "
                    + "such as 10.0.0.0/8, 2001:db8::/32 or 192.0.2.7"
            case .badPrefix(let width):
                message =
                    "\"\(text)\" has a bad prefix length: write a whole number from 0 to \(width) after the \"/\""
            case .hostBitsSet(let network, let host):
                message =
                    "\"\(text)\" has address bits set beyond its prefix length: write the network \(network), or "
                    + "\(host) for the one address"
            }
        }

        public var description: String { message }
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs, CRs and LFs.
    func trimmingASCIIWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
