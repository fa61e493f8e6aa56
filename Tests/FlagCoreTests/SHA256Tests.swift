import FlagCore
import Foundation
import Testing

@Suite("SHA-256")
struct SHA256Tests {
    /// FIPS 180-4 examples (NIST CSRC "SHA256.pdf" and "SHA2_Additional.pdf"), also checked with coreutils sha256sum.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                + "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
        ("héllo 😀", "a53c56966616f0ec3ed9db7ea07a6034430149528bbaba8966c284f9373669c2"),
    ])
    func nistVectors(input: String, expected: String) {
        #expect(SHA256.hex(input) == expected)
        #expect(SHA256.hex(Array(input.utf8)) == expected)
        #expect(SHA256.hash(input).count == SHA256.digestCount)
    }

    @Test func oneMillionA() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hex(message) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Lengths around the padding boundaries: 55 bytes is the longest message whose padding fits in one block,
    /// 56 the shortest that needs a second; 63, 64 and 65 straddle the block size. Digests from coreutils sha256sum
    /// of that many "a" bytes.
    @Test(arguments: [
        (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
        (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
        (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
        (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
        (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
    ])
    func paddingBoundaries(length: Int, expected: String) {
        #expect(SHA256.hex([UInt8](repeating: UInt8(ascii: "a"), count: length)) == expected)
    }

    @Test func everyLengthFrom0To130() throws {
        let vectors = try Self.lengthVectors()
        #expect(vectors.count == 131)
        let source = (0..<256).map { UInt8($0) }
        for vector in vectors {
            #expect(SHA256.hex(source[0..<vector.length]) == vector.sha256, "length \(vector.length)")
        }
    }

    @Test func nonContiguousSequenceHashesLikeAnArray() {
        let lazyBytes = (0..<200).lazy.map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(SHA256.hash(lazyBytes) == SHA256.hash(Array(lazyBytes)))
    }

    @Test func hexStringEncodesEveryByte() {
        #expect(SHA256.hexString([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(SHA256.hexString([]) == "")
    }

    private struct LengthVector: Decodable {
        var length: Int
        var sha256: String
    }

    private struct LengthVectorFile: Decodable {
        var vectors: [LengthVector]
    }

    private static func lengthVectors() throws -> [LengthVector] {
        let url = try #require(
            Bundle.module.url(forResource: "sha256_lengths", withExtension: "json", subdirectory: "Vectors")
        )
        return try JSONDecoder().decode(LengthVectorFile.self, from: Data(contentsOf: url)).vectors
    }
}

@Suite("Constant-time comparison")
struct ConstantTimeEqualsTests {
    @Test func equalBytesCompareEqual() {
        #expect(constantTimeEquals([], []))
        #expect(constantTimeEquals(SHA256.hash("token"), SHA256.hash("token")))
    }

    @Test(arguments: [0, 15, 31])
    func aDifferenceAnywhereIsFound(position: Int) {
        let digest = SHA256.hash("token")
        var other = digest
        other[position] ^= 0x01
        #expect(!constantTimeEquals(digest, other))
    }

    @Test func differentLengthsNeverCompareEqual() {
        let digest = SHA256.hash("token")
        #expect(!constantTimeEquals(digest, Array(digest.prefix(31))))
        #expect(!constantTimeEquals(Array(digest.prefix(31)), digest))
        #expect(!constantTimeEquals([], [0]))
        // A longer value whose extra bytes are zero must not pass for the shorter one.
        #expect(!constantTimeEquals(digest, digest + [0]))
    }
}
