/// A set's Ed25519 private key: it signs, and is kept only sealed (``sealed(with:set:)``).
///
/// Its description and mirror show the key's id, never its bytes, so that a log line or `dump` cannot leak it.
public struct PrivateSigningKey: Sendable, CustomStringConvertible, CustomReflectable {
    /// The 32-byte seed the key is made from (RFC 8032 §5.1.5), which is what is sealed.
    let seed: [UInt8]
    /// The public key, which verifies this key's signatures.
    public let signingKey: SigningKey

    /// The private key made from its 32-byte seed (RFC 8032 §5.1.5, the "secret key" of its test vectors).
    public init(seed: [UInt8]) throws {
        guard seed.count == Primitives.ed25519KeyCount else {
            throw SigningError.malformedKey(
                "an Ed25519 private key's seed is \(Primitives.ed25519KeyCount) bytes, this one is \(seed.count)")
        }
        self.seed = seed
        self.signingKey = try SigningKey(publicKey: Primitives.ed25519PublicKey(seed: seed))
    }

    /// A new key from the platform's secure random generator.
    public static func generate() throws -> PrivateSigningKey {
        try PrivateSigningKey(seed: Primitives.ed25519GenerateSeed())
    }

    /// The 64-byte Ed25519 signature of `message`.
    ///
    /// Deterministic under libcrypto (Linux), as RFC 8032 specifies; CryptoKit (Apple platforms) randomizes it.
    /// Either verifies with any Ed25519 implementation.
    public func signature(for message: [UInt8]) throws -> [UInt8] {
        try Primitives.ed25519Sign(seed: seed, message: message)
    }

    /// The signature of `message`, naming this key.
    public func sign(_ message: SignedMessage) throws -> Signature {
        try Signature(keyID: signingKey.id, bytes: signature(for: message.bytes))
    }

    public var description: String { "PrivateSigningKey(\(signingKey.id))" }

    public var customMirror: Mirror { Mirror(self, children: ["id": signingKey.id]) }
}
