import FlagSigning
import Testing

@Suite("Sealed private keys")
struct SealingTests {
    static let refusal =
        "does not open with this key-encryption key: the key-encryption key is not the one it was sealed with, or it "
        + "was sealed for another set, or its bytes were changed. Use the key-encryption key that belongs with this "
        + "database"

    @Test func aSealedKeyOpensWithItsKeyEncryptionKeyForItsSet() throws {
        let kek = try KeyEncryptionKey.generate()
        let key = try PrivateSigningKey.generate()
        let sealed = try key.sealed(with: kek, set: "mobile")
        #expect(sealed.count == 61)
        #expect(sealed.first == 1)
        let opened = try PrivateSigningKey(sealed: sealed, with: kek, set: "mobile")
        #expect(opened.signingKey == key.signingKey)
        let message = Array("signed after a round trip".utf8)
        #expect(key.signingKey.isValidSignature(try opened.signature(for: message), for: message))
        // A fresh nonce each time: sealing twice never gives the same bytes.
        #expect(try key.sealed(with: kek, set: "mobile") != sealed)
    }

    /// Sealed by Python's `cryptography` (AESGCM) with the key-encryption key 00 01 … 1f, the nonce a0 a1 … ab and
    /// RFC 8032's TEST 1 seed, for the set "mobile": the format as docs/signing.md describes it.
    @Test func aKeySealedByAnotherImplementationOpens() throws {
        let kek = try KeyEncryptionKey(bytes: Array(0..<32))
        let sealed = hex(
            "01a0a1a2a3a4a5a6a7a8a9aaab7b79cdb0aa3658dfd8e1cd279596ec1a34e59c79e9852b75ec358a8563050a61c3f1836310"
                + "91e0703145e29f0ebeccb0")
        let opened = try PrivateSigningKey(sealed: sealed, with: kek, set: "mobile")
        #expect(opened.signingKey.publicKey == RFC8032.vectors[0].publicKey)
        let otherSet = try #require(throws: SigningError.self) {
            try PrivateSigningKey(sealed: sealed, with: kek, set: "mobil")
        }
        #expect(otherSet.isSealedKeyRefused)
    }

    @Test func aWrongKeyEncryptionKeyOrSetIsRefused() throws {
        let kek = try KeyEncryptionKey.generate()
        let sealed = try PrivateSigningKey.generate().sealed(with: kek, set: "mobile")
        let wrongKEK = try #require(throws: SigningError.self) {
            try PrivateSigningKey(sealed: sealed, with: KeyEncryptionKey.generate(), set: "mobile")
        }
        #expect(wrongKEK.isSealedKeyRefused)
        #expect(wrongKEK.message == "the sealed signing key of set 'mobile' \(Self.refusal)")
        for set in ["web", "Mobile", "mobile ", ""] {
            let wrongSet = try #require(throws: SigningError.self) {
                try PrivateSigningKey(sealed: sealed, with: kek, set: set)
            }
            #expect(wrongSet.isSealedKeyRefused)
            #expect(wrongSet.message == "the sealed signing key of set '\(set)' \(Self.refusal)")
        }
    }

    /// A flipped bit in the nonce, the ciphertext or the tag is refused; in the version byte, named as a version.
    @Test func everyTamperedBitIsRefused() throws {
        let kek = try KeyEncryptionKey.generate()
        let sealed = try PrivateSigningKey.generate().sealed(with: kek, set: "mobile")
        for bit in 8..<(sealed.count * 8) {
            var tampered = sealed
            tampered[bit / 8] ^= 1 << (bit % 8)
            let error = try #require(throws: SigningError.self) {
                try PrivateSigningKey(sealed: tampered, with: kek, set: "mobile")
            }
            #expect(error.isSealedKeyRefused, "bit \(bit)")
        }
        var otherVersion = sealed
        otherVersion[0] = 2
        let version = try #require(throws: SigningError.self) {
            try PrivateSigningKey(sealed: otherVersion, with: kek, set: "mobile")
        }
        #expect(version.isMalformedSealedKey)
        #expect(
            version.message
                == "the sealed signing key of set 'mobile' has format version 2; this build reads version 1: open it "
                + "with the flagserver that sealed it")
    }

    @Test(arguments: [0, 1, 13, 60, 62])
    func sealedKeysOfTheWrongLengthAreRefused(count: Int) throws {
        let kek = try KeyEncryptionKey.generate()
        let sealed = try PrivateSigningKey.generate().sealed(with: kek, set: "mobile")
        let bytes = count <= sealed.count ? Array(sealed.prefix(count)) : sealed + [0]
        let error = try #require(throws: SigningError.self) {
            try PrivateSigningKey(sealed: bytes, with: kek, set: "mobile")
        }
        #expect(error.isMalformedSealedKey)
        #expect(
            error.message
                == (count == 0
                    ? "the sealed signing key of set 'mobile' is empty"
                    : "the sealed signing key of set 'mobile' is \(count) bytes, not 61: it was cut short or padded"))
    }

    @Test func keyEncryptionKeysAre32BytesAndNeverShown() throws {
        for count in [0, 16, 31, 33] {
            let error = try #require(throws: SigningError.self) {
                try KeyEncryptionKey(bytes: [UInt8](repeating: 1, count: count))
            }
            #expect(error.isMalformedKey)
            #expect(error.message == "a key-encryption key is 32 bytes (AES-256), this one is \(count)")
        }
        let kek = try KeyEncryptionKey(bytes: [UInt8](repeating: 0xab, count: 32))
        var dumped = ""
        dump(kek, to: &dumped)
        for text in ["\(kek)", String(reflecting: kek), dumped] {
            #expect(!text.contains("171"), "a byte of the key as a number: \(text)")
        }
        #expect(try KeyEncryptionKey.generate().bytes != KeyEncryptionKey.generate().bytes)
    }
}
