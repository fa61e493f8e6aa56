/// A private key sealed with a key-encryption key, as the store keeps it:
///
/// ```
/// version (1 byte, 0x01) | nonce (12 bytes) | ciphertext (32 bytes) | tag (16 bytes)
/// ```
/// 61 bytes in all. The ciphertext is the key's 32-byte seed under AES-256-GCM with the key-encryption key and the
/// random nonce, authenticating the set's name (its UTF-8 bytes) as additional data: a sealed key opens only for the
/// set it was sealed for, and only with the key-encryption key it was sealed with.
extension PrivateSigningKey {
    /// The first byte of a sealed key.
    static let sealedFormatVersion: UInt8 = 1
    /// The length of a sealed key.
    static let sealedCount = 1 + Primitives.gcmNonceCount + Primitives.ed25519KeyCount + Primitives.gcmTagCount

    /// The key sealed with `keyEncryptionKey` for `set`; a fresh random nonce each time, so two sealings differ.
    public func sealed(with keyEncryptionKey: KeyEncryptionKey, set: String) throws -> [UInt8] {
        let box = try Primitives.aes256GCMSeal(
            key: keyEncryptionKey.bytes, plaintext: seed, authenticating: Array(set.utf8))
        return [Self.sealedFormatVersion] + box.nonce + box.ciphertext + box.tag
    }

    /// The key that ``sealed(with:set:)`` sealed with `keyEncryptionKey` for `set`.
    ///
    /// Throws ``SigningError``: ``SigningError/isMalformedSealedKey`` for bytes that are no sealed key this library
    /// reads, ``SigningError/isSealedKeyRefused`` for a key that does not open (another key-encryption key, another
    /// set, or changed bytes: AES-GCM cannot tell these apart).
    public init(sealed: [UInt8], with keyEncryptionKey: KeyEncryptionKey, set: String) throws {
        guard let version = sealed.first else {
            throw SigningError.malformedSealedKey("the sealed signing key of set '\(set)' is empty")
        }
        guard version == Self.sealedFormatVersion else {
            throw SigningError.malformedSealedKey(
                "the sealed signing key of set '\(set)' has format version \(version); this build reads version "
                    + "\(Self.sealedFormatVersion): open it with the flagserver that sealed it")
        }
        guard sealed.count == Self.sealedCount else {
            throw SigningError.malformedSealedKey(
                "the sealed signing key of set '\(set)' is \(sealed.count) bytes, not \(Self.sealedCount): "
                    + "it was cut short or padded")
        }
        let nonceEnd = 1 + Primitives.gcmNonceCount
        let ciphertextEnd = nonceEnd + Primitives.ed25519KeyCount
        let opened = try Primitives.aes256GCMOpen(
            key: keyEncryptionKey.bytes, nonce: Array(sealed[1..<nonceEnd]),
            ciphertext: Array(sealed[nonceEnd..<ciphertextEnd]), tag: Array(sealed[ciphertextEnd...]),
            authenticating: Array(set.utf8))
        guard let seed = opened else {
            throw SigningError.sealedKeyRefused(
                "the sealed signing key of set '\(set)' does not open with this key-encryption key: the "
                    + "key-encryption key is not the one it was sealed with, or it was sealed for another set, or its "
                    + "bytes were changed. Use the key-encryption key that belongs with this database")
        }
        try self.init(seed: seed)
    }
}
