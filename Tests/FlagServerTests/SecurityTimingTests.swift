import FlagCore
import Testing

/// The deterministic half of the timing check: the comparison of token hashes reads every byte of both inputs
/// whatever they hold. The statistical half, against a live server, is `Tests/security/timing`.
@Suite("Security: constant-time comparison")
struct SecurityTimingTests {
    /// Bytes that record which positions were read.
    final class ReadLog {
        var reads: [Int] = []
    }

    struct CountingBytes: RandomAccessCollection {
        let bytes: [UInt8]
        let log: ReadLog
        var startIndex: Int { 0 }
        var endIndex: Int { bytes.count }
        subscript(position: Int) -> UInt8 {
            log.reads.append(position)
            return bytes[position]
        }
    }

    static let digest = SHA256.hash("fsa_0123456789abcdef")

    /// A guess differing from the digest at `position` only (none: equal).
    static func guess(differingAt position: Int?) -> [UInt8] {
        var bytes = digest
        if let position { bytes[position] ^= 0x01 }
        return bytes
    }

    @Test(arguments: [nil, 0, 1, 15, 30, 31])
    func everyByteIsReadOnceWhereverTheFirstDifferenceIs(_ position: Int?) {
        let left = ReadLog()
        let right = ReadLog()
        let equal = constantTimeEquals(
            CountingBytes(bytes: Self.digest, log: left),
            CountingBytes(bytes: Self.guess(differingAt: position), log: right))
        #expect(equal == (position == nil))
        #expect(left.reads == Array(0..<32))
        #expect(right.reads == Array(0..<32))
    }

    @Test(arguments: [0, 1, 31, 33, 64])
    func aGuessOfAnotherLengthIsReadToTheEndOfTheLonger(_ length: Int) {
        let left = ReadLog()
        let right = ReadLog()
        let guess = Array(Self.digest.prefix(length)) + [UInt8](repeating: 7, count: max(0, length - 32))
        #expect(
            !constantTimeEquals(CountingBytes(bytes: Self.digest, log: left), CountingBytes(bytes: guess, log: right)))
        #expect(left.reads == Array(0..<32))
        #expect(right.reads == Array(0..<length))
    }
}
