/// Streaming MurmurHash3 x86_32, bit-exact with Austin Appleby's reference (SMHasher `MurmurHash3_x86_32`).
///
/// Bytes may arrive in pieces of any size; a 4-byte block split across `combine` calls is reassembled, so the
/// result depends only on the concatenated bytes. `finalize()` does not consume the hasher: a hasher primed with a
/// common prefix can be copied and continued many times (see `Bucketer`).
///
/// ```swift
/// var hasher = Murmur3Hasher()
/// hasher.combine("new-checkout:")
/// hasher.combine("user-1")
/// hasher.finalize()  // 2230340631
/// ```
public struct Murmur3Hasher: Sendable {
    private static let c1: UInt32 = 0xcc9e_2d51
    private static let c2: UInt32 = 0x1b87_3593

    /// Running state over the complete 4-byte blocks seen so far.
    private var h1: UInt32
    /// Up to three bytes not yet forming a block, packed little-endian as the reference reads its tail.
    private var tail: UInt32 = 0
    private var tailCount: Int = 0
    /// The reference mixes in `len` as a 32-bit value, so the total length is kept modulo 2^32.
    private var length: UInt32 = 0

    /// Creates a hasher with an empty input and the given seed.
    public init(seed: UInt32 = 0) {
        h1 = seed
    }

    /// Feeds raw bytes.
    public mutating func combine(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let count = bytes.count
        length &+= UInt32(truncatingIfNeeded: count)
        // Work on locals and store once: state written back per byte costs more than the hashing itself.
        var h = h1
        var offset = 0
        if tailCount > 0 {
            var pending = tail
            var filled = tailCount
            while filled < 4 && offset < count {
                pending |= UInt32(base.load(fromByteOffset: offset, as: UInt8.self)) &<< UInt32(8 &* filled)
                filled &+= 1
                offset &+= 1
            }
            guard filled == 4 else {
                tail = pending
                tailCount = filled
                return
            }
            Self.mix(&h, pending)
        }
        while count &- offset >= 4 {
            Self.mix(&h, base.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
            offset &+= 4
        }
        var rest: UInt32 = 0
        switch count &- offset {
        case 3:
            rest = UInt32(base.load(fromByteOffset: offset &+ 2, as: UInt8.self)) &<< 16
            fallthrough
        case 2:
            rest |= UInt32(base.load(fromByteOffset: offset &+ 1, as: UInt8.self)) &<< 8
            fallthrough
        case 1:
            rest |= UInt32(base.load(fromByteOffset: offset, as: UInt8.self))
        default:
            break
        }
        h1 = h
        tail = rest
        tailCount = count &- offset
    }

    /// Feeds the UTF-8 bytes of a string, reading a native string's storage in place.
    public mutating func combine(_ string: String) {
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { combine(UnsafeRawBufferPointer($0)) }
        if done == nil {
            // Only bridged, non-UTF-8 storage gets here; `withUTF8` makes a contiguous copy first.
            var copy = string
            copy.withUTF8 { combine(UnsafeRawBufferPointer($0)) }
        }
    }

    /// The hash of every byte fed so far; the hasher is left unchanged and may be fed further.
    public func finalize() -> UInt32 {
        var h = h1
        if tailCount > 0 {
            var k = tail &* Self.c1
            k = (k << 15) | (k >> 17)
            h ^= k &* Self.c2
        }
        h ^= length
        h ^= h >> 16
        h &*= 0x85eb_ca6b
        h ^= h >> 13
        h &*= 0xc2b2_ae35
        h ^= h >> 16
        return h
    }

    @inline(__always)
    private static func mix(_ h: inout UInt32, _ block: UInt32) {
        var k = block &* c1
        k = (k << 15) | (k >> 17)
        h ^= k &* c2
        h = (h << 13) | (h >> 19)
        h = h &* 5 &+ 0xe654_6b64
    }
}

/// One-shot MurmurHash3 x86_32.
public enum Murmur3 {
    /// The hash of a string's UTF-8 bytes.
    public static func hash32(_ string: String, seed: UInt32 = 0) -> UInt32 {
        var hasher = Murmur3Hasher(seed: seed)
        hasher.combine(string)
        return hasher.finalize()
    }

    /// The hash of raw bytes.
    public static func hash32(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        var hasher = Murmur3Hasher(seed: seed)
        hasher.combine(bytes)
        return hasher.finalize()
    }
}
