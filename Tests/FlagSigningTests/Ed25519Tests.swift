import FlagSigning
import Testing

@Suite("Ed25519")
struct Ed25519Tests {
    @Test(arguments: RFC8032.vectors)
    func rfc8032VectorsVerifyAndTheirKeysDerive(vector: Ed25519Vector) throws {
        let privateKey = try PrivateSigningKey(seed: vector.seed)
        #expect(privateKey.signingKey.publicKey == vector.publicKey)
        let publicKey = try SigningKey(publicKey: vector.publicKey)
        try publicKey.verify(vector.signature, for: vector.message)
        // A signature made here verifies too; under CryptoKit it is randomized, so only libcrypto's is compared.
        let signature = try privateKey.signature(for: vector.message)
        #expect(publicKey.isValidSignature(signature, for: vector.message))
        #if !canImport(CryptoKit)
            #expect(signature == vector.signature)
        #endif
    }

    @Test func aGeneratedKeySignsWhatItsPublicKeyVerifies() throws {
        let first = try PrivateSigningKey.generate()
        let second = try PrivateSigningKey.generate()
        #expect(first.signingKey != second.signingKey)
        for length in [0, 1, 63, 64, 1000, 100_000] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let signature = try first.signature(for: message)
            #expect(signature.count == 64)
            #expect(first.signingKey.isValidSignature(signature, for: message))
            #expect(!second.signingKey.isValidSignature(signature, for: message))
        }
    }

    /// Every single flipped bit of the message, the signature or the public key is refused.
    @Test(arguments: RFC8032.vectors.prefix(3))
    func aFlippedBitAnywhereIsRefused(vector: Ed25519Vector) throws {
        let key = try SigningKey(publicKey: vector.publicKey)
        for bit in 0..<(vector.message.count * 8) {
            var message = vector.message
            message[bit / 8] ^= 1 << (bit % 8)
            #expect(!key.isValidSignature(vector.signature, for: message), "message bit \(bit)")
        }
        #expect(!key.isValidSignature(vector.signature, for: vector.message + [0]))
        for bit in 0..<(vector.signature.count * 8) {
            var signature = vector.signature
            signature[bit / 8] ^= 1 << (bit % 8)
            #expect(!key.isValidSignature(signature, for: vector.message), "signature bit \(bit)")
        }
        for bit in 0..<(vector.publicKey.count * 8) {
            var publicKey = vector.publicKey
            publicKey[bit / 8] ^= 1 << (bit % 8)
            // Some flipped keys are no point of the curve: libcrypto refuses them like any other wrong key.
            let flipped = try SigningKey(publicKey: publicKey)
            #expect(!flipped.isValidSignature(vector.signature, for: vector.message), "key bit \(bit)")
        }
    }

    @Test func signaturesOfTheWrongLengthAreRefusedWithTheirLength() throws {
        let vector = RFC8032.vectors[1]
        let key = try SigningKey(publicKey: vector.publicKey)
        for signature in [[], Array(vector.signature.prefix(63)), vector.signature + [0]] {
            let error = try #require(throws: SigningError.self) { try key.verify(signature, for: vector.message) }
            #expect(error.isSignatureRefused)
            #expect(error.message == "an Ed25519 signature is 64 bytes, this one is \(signature.count)")
        }
    }

    /// Keys that are no valid curve point, all-zero and all-one bytes, refuse without crashing.
    @Test func degenerateKeysRefuseEverything() throws {
        let vector = RFC8032.vectors[0]
        for bytes in [[UInt8](repeating: 0, count: 32), [UInt8](repeating: 0xff, count: 32)] {
            let key = try SigningKey(publicKey: bytes)
            #expect(!key.isValidSignature(vector.signature, for: vector.message))
            #expect(!key.isValidSignature([UInt8](repeating: 0, count: 64), for: []))
        }
    }

    @Test func seedsOfTheWrongLengthAreRefused() throws {
        for count in [0, 31, 33, 64] {
            let error = try #require(throws: SigningError.self) {
                try PrivateSigningKey(seed: [UInt8](repeating: 7, count: count))
            }
            #expect(error.isMalformedKey)
            #expect(error.message == "an Ed25519 private key's seed is 32 bytes, this one is \(count)")
        }
    }

    @Test func aPrivateKeyNeverShowsItsBytes() throws {
        let key = try PrivateSigningKey(seed: RFC8032.vectors[0].seed)
        var dumped = ""
        dump(key, to: &dumped)
        for text in ["\(key)", String(reflecting: key), dumped] {
            #expect(text.contains("21fe31dfa154a261"))
            #expect(!text.contains("seed") && !text.contains("157, 97"), "the seed's first bytes: \(text)")
        }
    }
}
