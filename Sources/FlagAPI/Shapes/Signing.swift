import Foundation

/// `GET /v1/sets/{set}/signing-keys` and the rotation steps: the set's signing keys, oldest first.
public struct SigningKeyList: APIAnswer, Codable, Hashable {
    /// The keys.
    public var keys: [SigningKeyInfo]

    /// A list of `keys`.
    public init(keys: [SigningKeyInfo]) {
        self.keys = keys
    }
}

/// The public half of a signing key, and where it is in its rotation (docs/signing.md).
public struct SigningKeyInfo: APIAnswer, Codable, Hashable {
    /// The key's id, as signatures name it.
    public var id: String
    /// The Ed25519 public key, base64.
    public var publicKey: String
    /// `published`, `active` or `retired`.
    public var state: String
    /// When it was made.
    public var createdAt: Date

    /// A key.
    public init(id: String, publicKey: String, state: String, createdAt: Date) {
        self.id = id
        self.publicKey = publicKey
        self.state = state
        self.createdAt = createdAt
    }
}
