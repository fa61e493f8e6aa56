/// A webhook's signing secret, in the Standard Webhooks format: random bytes written `whsec_` and their standard
/// base64. A delivery is signed with the HMAC-SHA256 of `id.timestamp.body` under those bytes, which any Standard
/// Webhooks library verifies.
///
/// The server keeps it sealed with the key-encryption key, as signing keys are:
///
/// ```
/// version (1 byte, 0x01) | nonce (12 bytes) | ciphertext (the secret's bytes) | tag (16 bytes)
/// ```
/// authenticating `webhook:` and the hook's name, so that a sealed secret opens only for its hook.
public struct WebhookSecret: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// The prefix of a secret written as text.
    public static let prefix = "whsec_"
    /// How many random bytes a new secret has.
    static let generatedCount = 32
    /// The fewest and most bytes a secret may have (the Standard Webhooks specification's range).
    static let allowedCounts = 24...64
    /// The first byte of a sealed secret.
    static let sealedFormatVersion: UInt8 = 1

    /// The secret's bytes: the HMAC key.
    public let bytes: [UInt8]

    /// A secret of `bytes`; throws ``SigningError`` (``SigningError/isMalformedKey``) outside 24 to 64 bytes.
    public init(bytes: [UInt8]) throws {
        guard Self.allowedCounts.contains(bytes.count) else {
            throw SigningError.malformedKey(
                "a webhook secret is \(Self.allowedCounts.lowerBound) to \(Self.allowedCounts.upperBound) bytes, "
                    + "this one is \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// The secret written as `whsec_` and base64; throws ``SigningError`` saying what is wrong, without repeating
    /// the text.
    public init(text: String) throws {
        guard text.hasPrefix(Self.prefix) else {
            throw SigningError.malformedKey("a webhook secret starts with \"\(Self.prefix)\"")
        }
        let bytes: [UInt8]
        do {
            bytes = try StrictBase64.decode(String(text.dropFirst(Self.prefix.count)))
        } catch {
            throw SigningError.malformedKey("a webhook secret after \"\(Self.prefix)\" \(error.reason)")
        }
        try self.init(bytes: bytes)
    }

    /// A new secret from the platform's secure random generator.
    public static func generate() throws -> WebhookSecret {
        try WebhookSecret(bytes: Primitives.randomBytes(count: generatedCount))
    }

    /// The secret as `whsec_` and base64: what a receiver configures.
    public var text: String { Self.prefix + StrictBase64.encode(bytes) }

    /// The signature of one delivery: `v1,` and the base64 of HMAC-SHA256 over `id.timestamp.body`.
    public func signature(id: String, timestamp: Int, body: [UInt8]) throws -> String {
        let message = Array("\(id).\(timestamp).".utf8) + body
        return "v1," + StrictBase64.encode(try Primitives.hmacSHA256(key: bytes, message: message))
    }

    /// The secret sealed with `keyEncryptionKey` for the hook `hook`; a fresh random nonce each time.
    public func sealed(with keyEncryptionKey: KeyEncryptionKey, hook: String) throws -> [UInt8] {
        let box = try Primitives.aes256GCMSeal(
            key: keyEncryptionKey.bytes, plaintext: bytes, authenticating: Self.authenticated(hook))
        return [Self.sealedFormatVersion] + box.nonce + box.ciphertext + box.tag
    }

    /// The secret that ``sealed(with:hook:)`` sealed for `hook`. Throws ``SigningError``:
    /// ``SigningError/isMalformedSealedKey`` for bytes that are no sealed secret,
    /// ``SigningError/isSealedKeyRefused`` for one that does not open with this key-encryption key.
    public init(sealed: [UInt8], with keyEncryptionKey: KeyEncryptionKey, hook: String) throws {
        let overhead = 1 + Primitives.gcmNonceCount + Primitives.gcmTagCount
        guard sealed.first == Self.sealedFormatVersion, sealed.count >= overhead + Self.allowedCounts.lowerBound
        else {
            throw SigningError.malformedSealedKey(
                "the sealed secret of webhook '\(hook)' is not in format version \(Self.sealedFormatVersion) or is "
                    + "cut short: open it with the flagserver that sealed it")
        }
        let nonceEnd = 1 + Primitives.gcmNonceCount
        let ciphertextEnd = sealed.count - Primitives.gcmTagCount
        let opened = try Primitives.aes256GCMOpen(
            key: keyEncryptionKey.bytes, nonce: Array(sealed[1..<nonceEnd]),
            ciphertext: Array(sealed[nonceEnd..<ciphertextEnd]), tag: Array(sealed[ciphertextEnd...]),
            authenticating: Self.authenticated(hook))
        guard let bytes = opened else {
            throw SigningError.sealedKeyRefused(
                "the sealed secret of webhook '\(hook)' does not open with this key-encryption key: start every "
                    + "server with the key-encryption key that belongs with this database")
        }
        try self.init(bytes: bytes)
    }

    /// The additional data a hook's sealed secret authenticates: apart from any set's name, which has no `:`.
    private static func authenticated(_ hook: String) -> [UInt8] { Array("webhook:\(hook)".utf8) }

    public var description: String { "WebhookSecret(redacted)" }

    public var customMirror: Mirror { Mirror(self, children: []) }
}
