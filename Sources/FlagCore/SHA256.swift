/// SHA-256 as specified in FIPS 180-4, for token hashes and flag-set document digests.
///
/// Written out here because FlagCore takes no dependency beyond Foundation, and Foundation on Linux has no hash.
/// ```swift
/// let digest = SHA256.hash("abc")   // 32 bytes
/// SHA256.hex("abc")                 // "ba7816bf…f20015ad"
/// ```
public enum SHA256 {
    /// The length of a digest in bytes.
    public static let digestCount = 32

    /// The digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { digest(of: $0) }
    }

    /// The digest of `bytes`, which may be any sequence (a slice, a `Data`, a `String.UTF8View`).
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        if let result = bytes.withContiguousStorageIfAvailable({ digest(of: $0) }) {
            return result
        }
        return hash(Array(bytes))
    }

    /// The digest of the UTF-8 bytes of `string`.
    public static func hash(_ string: String) -> [UInt8] {
        hash(string.utf8)
    }

    /// The digest of `bytes` as 64 lowercase hexadecimal digits.
    public static func hex(_ bytes: [UInt8]) -> String {
        hexString(hash(bytes))
    }

    /// The digest of `bytes` as 64 lowercase hexadecimal digits.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        hexString(hash(bytes))
    }

    /// The digest of the UTF-8 bytes of `string` as 64 lowercase hexadecimal digits.
    public static func hex(_ string: String) -> String {
        hexString(hash(string))
    }

    /// `bytes` as lowercase hexadecimal digits, two per byte.
    public static func hexString(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension SHA256 {
    /// FIPS 180-4 §5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8 primes.
    private static let initialState: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]

    /// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    private static let blockCount = 64

    /// Hashes a whole message: every full block in place, then the padded tail (§5.1.1) in one or two blocks.
    private static func digest(of message: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var state = initialState
        var schedule = [UInt32](repeating: 0, count: 64)
        let fullBlocks = message.count / blockCount
        let rest = message.count - fullBlocks * blockCount
        // The tail is the last partial block, the 0x80 marker, zeros, and the bit length as a 64-bit big-endian
        // number; it needs a second block when fewer than 9 bytes remain free in the first.
        var tail = [UInt8](repeating: 0, count: 2 * blockCount)
        let tailCount = rest < blockCount - 8 ? blockCount : 2 * blockCount
        for index in 0..<rest {
            tail[index] = message[fullBlocks * blockCount + index]
        }
        tail[rest] = 0x80
        let bitLength = UInt64(message.count) &* 8
        for index in 0..<8 {
            tail[tailCount - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(index)))
        }

        state.withUnsafeMutableBufferPointer { hash in
            schedule.withUnsafeMutableBufferPointer { words in
                roundConstants.withUnsafeBufferPointer { constants in
                    for block in 0..<fullBlocks {
                        let start = block * blockCount
                        let bytes = UnsafeBufferPointer(rebasing: message[start..<start + blockCount])
                        compress(bytes, into: hash, words: words, constants: constants)
                    }
                    tail.withUnsafeBufferPointer { padded in
                        for start in stride(from: 0, to: tailCount, by: blockCount) {
                            let bytes = UnsafeBufferPointer(rebasing: padded[start..<start + blockCount])
                            compress(bytes, into: hash, words: words, constants: constants)
                        }
                    }
                }
            }
        }

        var output: [UInt8] = []
        output.reserveCapacity(digestCount)
        for word in state {
            output.append(UInt8(truncatingIfNeeded: word >> 24))
            output.append(UInt8(truncatingIfNeeded: word >> 16))
            output.append(UInt8(truncatingIfNeeded: word >> 8))
            output.append(UInt8(truncatingIfNeeded: word))
        }
        return output
    }

    /// FIPS 180-4 §6.2.2: one 64-byte block into the running hash value.
    private static func compress(
        _ block: UnsafeBufferPointer<UInt8>,
        into hash: UnsafeMutableBufferPointer<UInt32>,
        words w: UnsafeMutableBufferPointer<UInt32>,
        constants k: UnsafeBufferPointer<UInt32>
    ) {
        for t in 0..<16 {
            w[t] =
                UInt32(block[4 * t]) << 24 | UInt32(block[4 * t + 1]) << 16
                | UInt32(block[4 * t + 2]) << 8 | UInt32(block[4 * t + 3])
        }
        for t in 16..<64 {
            let sigma0 = rotateRight(w[t - 15], 7) ^ rotateRight(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let sigma1 = rotateRight(w[t - 2], 17) ^ rotateRight(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ sigma0 &+ w[t - 7] &+ sigma1
        }

        var a = hash[0]
        var b = hash[1]
        var c = hash[2]
        var d = hash[3]
        var e = hash[4]
        var f = hash[5]
        var g = hash[6]
        var h = hash[7]
        for t in 0..<64 {
            let bigSigma1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)
            let choose = (e & f) ^ (~e & g)
            let t1 = h &+ bigSigma1 &+ choose &+ k[t] &+ w[t]
            let bigSigma0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = bigSigma0 &+ majority
            h = g
            g = f
            f = e
            e = d &+ t1
            d = c
            c = b
            b = a
            a = t1 &+ t2
        }
        hash[0] &+= a
        hash[1] &+= b
        hash[2] &+= c
        hash[3] &+= d
        hash[4] &+= e
        hash[5] &+= f
        hash[6] &+= g
        hash[7] &+= h
    }

    @inline(__always)
    private static func rotateRight(_ value: UInt32, _ count: UInt32) -> UInt32 {
        (value >> count) | (value << (32 - count))
    }
}

/// Whether `a` and `b` hold the same bytes, taking a time that depends on their lengths but never on their contents.
///
/// Compare secrets (token hashes) with this, so that the response time does not tell an attacker how many leading
/// bytes of a guess were right. Different lengths yield `false` after the same walk over the bytes. Generic so that
/// a test can count the reads; inlinable so that callers get the specialized loop over arrays.
@inlinable
public func constantTimeEquals<A: RandomAccessCollection<UInt8>, B: RandomAccessCollection<UInt8>>(
    _ a: A, _ b: B
) -> Bool {
    var difference: UInt8 = a.count == b.count ? 0 : 1
    var left = a.startIndex
    var right = b.startIndex
    for _ in 0..<max(a.count, b.count) {
        let x: UInt8 = left != a.endIndex ? a[left] : 0
        let y: UInt8 = right != b.endIndex ? b[right] : 0
        difference |= x ^ y
        if left != a.endIndex { a.formIndex(after: &left) }
        if right != b.endIndex { b.formIndex(after: &right) }
    }
    return difference == 0
}
