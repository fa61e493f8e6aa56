import Foundation

/// Where a set's signing key is in its life (docs/signing.md, "Keys and rotation").
package enum SigningKeyState: String, Sendable, Hashable, CaseIterable {
    /// Listed, so that apps can ship trusting it, but not signing yet.
    case published
    /// Signs every new version. A set has at most one.
    case active
    /// No longer signs and is no longer to be trusted; listed so that an operator sees what was retired.
    case retired
}

/// One of a set's Ed25519 signing keys as stored: its public half, and its private half sealed with the server's
/// key-encryption key, so that a copy of the database alone holds no usable key.
package struct StoredSigningKey: Sendable, Hashable {
    /// The key id: the first 16 hexadecimal characters of the SHA-256 of `publicKey`.
    package var id: String
    /// The 32 raw bytes of the public key.
    package var publicKey: [UInt8]
    /// The private key sealed for this set (`PrivateSigningKey.sealed(with:set:)`).
    package var sealedPrivateKey: [UInt8]
    /// Published, active or retired.
    package var state: SigningKeyState
    /// When the key was made.
    package var createdAt: Date

    /// A stored key.
    package init(id: String, publicKey: [UInt8], sealedPrivateKey: [UInt8], state: SigningKeyState, createdAt: Date) {
        self.id = id
        self.publicKey = publicKey
        self.sealedPrivateKey = sealedPrivateKey
        self.state = state
        self.createdAt = createdAt
    }
}

/// What a signed body of a version is: its whole document, or its patch from the version before.
package enum SignedBodyKind: String, Sendable, Hashable, CaseIterable {
    /// The whole document (`GET /v1/sets/{set}`, `versions/{n}`, a stream's `put`).
    case document
    /// The patch from the version before (a stream's `patch`).
    case patch
}

/// Bytes of a version exactly as clients are served them, with their `Flagstaff-Signature` value. Kept in the store
/// once made, so that every server, and every later software version, serves the same bytes.
package struct SignedBody: Sendable, Hashable {
    /// The bytes served.
    package var bytes: [UInt8]
    /// The `Flagstaff-Signature` value over `bytes`.
    package var signature: String

    /// Signed bytes.
    package init(bytes: [UInt8], signature: String) {
        self.bytes = bytes
        self.signature = signature
    }
}
