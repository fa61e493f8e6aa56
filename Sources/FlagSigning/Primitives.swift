/// The few operations FlagSigning asks of the platform's cryptography, and nothing written here.
///
/// Two implementations with the same contract: OpenSSL's libcrypto on Linux (`Primitives+LibCrypto.swift`) and
/// CryptoKit on Apple platforms (`Primitives+CryptoKit.swift`). Lengths are checked by the callers before they get
/// here. A failure of the library itself throws ``SigningError`` with the library's reason; a signature that does
/// not verify and a sealed box that does not open are answers, not failures (`false`, `nil`).
enum Primitives {
    /// The length of an Ed25519 public key, and of the seed a private key is made from (RFC 8032 §5.1.5).
    static let ed25519KeyCount = 32
    /// The length of an Ed25519 signature (RFC 8032 §5.1.6).
    static let ed25519SignatureCount = 64
    /// The length of a SHA-256 digest.
    static let sha256Count = 32
    /// The length of an AES-256 key.
    static let aes256KeyCount = 32
    /// The length of an AES-GCM nonce: 96 bits, the size GCM is specified for (NIST SP 800-38D §5.2.1.1).
    static let gcmNonceCount = 12
    /// The length of an AES-GCM tag: the full 128 bits.
    static let gcmTagCount = 16
}
