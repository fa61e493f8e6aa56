import Foundation

/// A fast 64-bit hash of bytes for the evaluator's own tables (flag keys, unit ids, attribute names).
///
/// Not a replacement for `Hasher`: it is unseeded, so it must never index a table whose keys an attacker chooses
/// and whose probe length matters. The tables it indexes are built from the flag set (keys and unit ids a writer
/// validated); attribute names from callers are only compared against it, never inserted. SipHash, by contrast,
/// cost about a tenth of an evaluation per lookup.
enum ByteHash {
    private static let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// The hash of `bytes`: 8-byte words mixed by multiply and rotate, then the length, then a final avalanche.
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var h: UInt64 = 0x243F_6A88_85A3_08D3 ^ UInt64(truncatingIfNeeded: count)
        guard let base = bytes.baseAddress, count > 0 else { return finish(h) }
        var offset = 0
        while count &- offset >= 8 {
            h = mix(h, base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset &+= 8
        }
        if offset < count {
            var word: UInt64 = 0
            var shift: UInt64 = 0
            while offset < count {
                word |= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) &<< shift
                shift &+= 8
                offset &+= 1
            }
            h = mix(h, word)
        }
        return finish(h)
    }

    /// The hash of a string's UTF-8 bytes.
    @inline(__always)
    static func hash(_ string: String) -> UInt64 {
        withBytes(of: string) { hash(UnsafeRawBufferPointer($0)) }
    }

    @inline(__always)
    private static func mix(_ h: UInt64, _ word: UInt64) -> UInt64 {
        let k = word &* multiplier
        return ((h ^ k) &<< 27 | (h ^ k) &>> 37) &* 5 &+ 0x52DC_E729
    }

    @inline(__always)
    private static func finish(_ value: UInt64) -> UInt64 {
        var h = value
        h ^= h &>> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h &>> 33
        return h
    }
}

/// An attribute name as three words: its length and its first 16 UTF-8 bytes. Two names of up to 16 bytes are
/// equal exactly when their keys are, so finding an attribute compares integers and never a `String` (whose copy
/// and comparison cost a reference-count call each); longer names also compare their strings.
struct AttributeKey: Sendable, Equatable {
    let count: Int
    let head: UInt64
    let tail: UInt64

    init(_ name: String) {
        self = withBytes(of: name) { Self(UnsafeRawBufferPointer($0)) }
    }

    @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer) {
        count = bytes.count
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { target in
            if let base = bytes.baseAddress {
                target.baseAddress!.copyMemory(from: base, byteCount: min(16, bytes.count))
            }
        }
        head = words.0
        tail = words.1
    }

    /// Whether the key alone decides equality.
    var isComplete: Bool { count <= 16 }
}

/// A flag key with its hash computed once: evaluating through a handle costs no hashing at all.
///
/// A handle is not tied to one compiled set: the same handle finds the flag in every later version of the set.
///
/// ```swift
/// let checkout = FlagHandle("new-checkout")
/// compiled.evaluate(checkout, default: false, context: context, at: now)
/// ```
public struct FlagHandle: Sendable, Hashable {
    /// The flag's key.
    public let key: String
    /// `ByteHash.hash(key)`.
    let hash: UInt64

    /// A handle for `key`, hashing it once.
    public init(_ key: String) {
        self.key = key
        self.hash = ByteHash.hash(key)
    }

    public static func == (lhs: FlagHandle, rhs: FlagHandle) -> Bool { lhs.key == rhs.key }

    public func hash(into hasher: inout Hasher) { hasher.combine(key) }
}
