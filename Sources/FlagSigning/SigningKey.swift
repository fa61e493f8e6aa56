import FlagCore

/// An Ed25519 public key that signs a set's documents: what a client trusts and what the server publishes.
///
/// A client configures the keys it trusts from their base64 form (`flagctl signing-key show`); its `id` is what a
/// signature names, computed from the key itself.
/// ```swift
/// let key = try SigningKey(base64: "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")
/// key.id  // "21fe31dfa154a261"
/// try key.verify(signature, for: SignedMessage(set: "mobile", version: 7, baseVersion: nil, body: body))
/// ```
public struct SigningKey: Sendable, Hashable, CustomStringConvertible {
    /// The 32 raw bytes of the key (RFC 8032 §5.1.5).
    public let publicKey: [UInt8]
    /// The first 16 lowercase hexadecimal characters of the SHA-256 of ``publicKey``.
    public let id: String

    /// The key with these 32 raw bytes.
    ///
    /// Only the length is checked: 32 bytes that are no point of the curve make a key that accepts no signature.
    public init(publicKey: [UInt8]) throws {
        guard publicKey.count == Primitives.ed25519KeyCount else {
            throw SigningError.malformedKey(
                "an Ed25519 public key is \(Primitives.ed25519KeyCount) bytes, this one is \(publicKey.count)")
        }
        self.publicKey = publicKey
        self.id = Self.id(of: publicKey)
    }

    /// The key whose 32 raw bytes `base64` encodes in standard base64 (44 characters, ending in `=`).
    ///
    /// Throws ``SigningError`` (``SigningError/isMalformedKey``) saying what is wrong, without repeating the text:
    /// someone may paste a secret where the public key belongs.
    public init(base64: String) throws {
        let bytes = try StrictBase64.decode(base64) {
            .malformedKey(
                "a signing key must be the standard base64 of its 32 bytes (44 characters ending in '='); "
                    + "this one \($0)")
        }
        guard bytes.count == Primitives.ed25519KeyCount else {
            throw SigningError.malformedKey(
                "a signing key must be the standard base64 of its 32 bytes (44 characters ending in '='); "
                    + "this one decodes to \(bytes.count) bytes")
        }
        try self.init(publicKey: bytes)
    }

    /// The key in standard base64, as `GET /v1/sets/{set}/signing-keys` gives it.
    public var base64: String { StrictBase64.encode(publicKey) }

    public var description: String { "SigningKey(\(id))" }

    public static func == (lhs: SigningKey, rhs: SigningKey) -> Bool { lhs.publicKey == rhs.publicKey }

    public func hash(into hasher: inout Hasher) { hasher.combine(publicKey) }

    /// The id of the key with these 32 bytes: the first 16 lowercase hexadecimal characters of their SHA-256.
    static func id(of publicKey: [UInt8]) -> String {
        String(SHA256.hex(publicKey).prefix(16))
    }
}

extension SigningKey {
    /// Returns when `signature` (64 bytes) is this key's over `message`, and throws ``SigningError`` otherwise
    /// (``SigningError/isSignatureRefused``).
    public func verify(_ signature: [UInt8], for message: [UInt8]) throws {
        guard signature.count == Primitives.ed25519SignatureCount else {
            throw SigningError.signatureRefused(
                "an Ed25519 signature is \(Primitives.ed25519SignatureCount) bytes, this one is \(signature.count)")
        }
        guard try Primitives.ed25519Verify(publicKey: publicKey, signature: signature, message: message) else {
            throw SigningError.signatureRefused("the signature does not match the signed bytes under key \(id)")
        }
    }

    /// Whether `signature` is this key's over `message`.
    ///
    /// `false` too when the platform's cryptography could not run the check: refusing is the safe answer. Call
    /// ``verify(_:for:)-([UInt8],[UInt8])`` for the reason.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        do {
            try verify(signature, for: message)
            return true
        } catch {
            return false
        }
    }

    /// Returns when `signature` names this key and is its signature over `message`; throws ``SigningError``
    /// (``SigningError/isSignatureRefused``) saying which of the two failed.
    public func verify(_ signature: Signature, for message: SignedMessage) throws {
        guard signature.keyID == id else {
            throw SigningError.signatureRefused("the signature names key \(signature.keyID), not this key (\(id))")
        }
        do {
            try verify(signature.bytes, for: message.bytes)
        } catch let error as SigningError where error.isSignatureRefused {
            throw SigningError.signatureRefused(
                "the signature by key \(id) does not match set '\(message.set)', version \(message.version), "
                    + "base \(message.baseVersion.map(String.init) ?? "-") and a body with SHA-256 "
                    + "\(message.bodySHA256): the bytes, the set or a version differ from what was signed")
        }
    }
}

extension Collection where Element == SigningKey {
    /// The key among these that `signature` names, once it has verified `message`; throws ``SigningError``
    /// (``SigningError/isSignatureRefused``) when none is named or the named one refuses.
    @discardableResult
    public func verify(_ signature: Signature, for message: SignedMessage) throws -> SigningKey {
        guard let key = first(where: { $0.id == signature.keyID }) else {
            let trusted = isEmpty ? "none" : map(\.id).joined(separator: ", ")
            throw SigningError.signatureRefused(
                "the signature names key \(signature.keyID), which is not trusted (trusted: \(trusted))")
        }
        try key.verify(signature, for: message)
        return key
    }
}
