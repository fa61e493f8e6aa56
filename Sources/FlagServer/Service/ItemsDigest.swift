import FlagCore

/// The digest of a version's items, stored with the version and checked when the server loads the set: the sum,
/// modulo 2^256, of each item's SHA-256 over its kind, key and canonical bytes.
///
/// A sum changes by exactly the hashes of the items a write adds and removes, so the next version's digest costs
/// the change and not the set; and it does not depend on the order of the items. Earlier releases stored the
/// SHA-256 of the whole document, which a write had to assemble; `FlagService` still accepts such a stored digest.
struct ItemsDigest: Sendable, Equatable {
    /// The sum's four 64-bit words, least significant first.
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    /// The digest of no items.
    init() {}

    /// The digest of `items`.
    init<S: Sequence>(_ items: S) where S.Element == (key: ItemKey, value: [UInt8]) {
        for (item, bytes) in items { add(item, bytes) }
    }

    /// The 32 bytes stored with a version, least significant first.
    var bytes: [UInt8] {
        [words.0, words.1, words.2, words.3].flatMap { word in
            (0..<8).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) }
        }
    }

    mutating func add(_ item: ItemKey, _ bytes: [UInt8]) {
        let (a, b, c, d) = Self.hash(item, bytes)
        var carry: Bool
        (words.0, carry) = words.0.addingReportingOverflow(a)
        (words.1, carry) = Self.add(words.1, b, carry)
        (words.2, carry) = Self.add(words.2, c, carry)
        (words.3, _) = Self.add(words.3, d, carry)
    }

    mutating func remove(_ item: ItemKey, _ bytes: [UInt8]) {
        let (a, b, c, d) = Self.hash(item, bytes)
        var borrow: Bool
        (words.0, borrow) = words.0.subtractingReportingOverflow(a)
        (words.1, borrow) = Self.subtract(words.1, b, borrow)
        (words.2, borrow) = Self.subtract(words.2, c, borrow)
        (words.3, _) = Self.subtract(words.3, d, borrow)
    }

    static func == (lhs: ItemsDigest, rhs: ItemsDigest) -> Bool {
        lhs.words == rhs.words
    }

    /// The item's SHA-256 as four words: over `kind`, a 0 byte, `key`, a 0 byte, and its bytes.
    private static func hash(_ item: ItemKey, _ bytes: [UInt8]) -> (UInt64, UInt64, UInt64, UInt64) {
        var message = Array(item.kind.rawValue.utf8)
        message.append(0)
        message += item.key.utf8
        message.append(0)
        message += bytes
        let digest = SHA256.hash(message)
        func word(_ index: Int) -> UInt64 {
            digest[(index * 8)..<(index * 8 + 8)].enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * $1.offset) }
        }
        return (word(0), word(1), word(2), word(3))
    }

    private static func add(_ lhs: UInt64, _ rhs: UInt64, _ carry: Bool) -> (UInt64, Bool) {
        let (sum, first) = lhs.addingReportingOverflow(rhs)
        let (withCarry, second) = sum.addingReportingOverflow(carry ? 1 : 0)
        return (withCarry, first || second)
    }

    private static func subtract(_ lhs: UInt64, _ rhs: UInt64, _ borrow: Bool) -> (UInt64, Bool) {
        let (difference, first) = lhs.subtractingReportingOverflow(rhs)
        let (withBorrow, second) = difference.subtractingReportingOverflow(borrow ? 1 : 0)
        return (withBorrow, first || second)
    }
}
