import Foundation

/// Where a set's signing key is in its life (docs/signing.md, "Keys and rotation").
public enum SigningKeyState: String, Sendable, Hashable, CaseIterable {
    /// Listed, so that apps can ship trusting it, but not signing yet.
    case published
    /// Signs every new version. A set has at most one.
    case active
    /// No longer signs and is no longer to be trusted; listed so that an operator sees what was retired.
    case retired
}

/// One of a set's Ed25519 signing keys as stored: its public half, and its private half sealed with the server's
/// key-encryption key, so that a copy of the database alone holds no usable key.
public struct StoredSigningKey: Sendable, Hashable {
    /// The key id: the first 16 hexadecimal characters of the SHA-256 of `publicKey`.
    public var id: String
    /// The 32 raw bytes of the public key.
    public var publicKey: [UInt8]
    /// The private key sealed for this set (`PrivateSigningKey.sealed(with:set:)`).
    public var sealedPrivateKey: [UInt8]
    /// Published, active or retired.
    public var state: SigningKeyState
    /// When the key was made.
    public var createdAt: Date

    /// A stored key.
    public init(id: String, publicKey: [UInt8], sealedPrivateKey: [UInt8], state: SigningKeyState, createdAt: Date) {
        self.id = id
        self.publicKey = publicKey
        self.sealedPrivateKey = sealedPrivateKey
        self.state = state
        self.createdAt = createdAt
    }
}

/// The bytes of one version exactly as clients are served them, with their signatures: made once, when the version
/// is written, and kept, so that every server and every later software version serves the same bytes.
public struct SignedVersion: Sendable, Hashable {
    /// The version.
    public var version: Int
    /// The whole document.
    public var document: [UInt8]
    /// The `Flagstaff-Signature` value over `document`.
    public var documentSignature: String
    /// The patch from the version before (the `data` of its stream event); `nil` for a version that was not
    /// written as a change of a signed version (the first, or the one signing started at).
    public var patch: [UInt8]?
    /// The `Flagstaff-Signature` value over `patch`.
    public var patchSignature: String?

    /// A signed version.
    public init(
        version: Int, document: [UInt8], documentSignature: String, patch: [UInt8]? = nil,
        patchSignature: String? = nil
    ) {
        self.version = version
        self.document = document
        self.documentSignature = documentSignature
        self.patch = patch
        self.patchSignature = patchSignature
    }
}

extension SignedVersion {
    /// The patch with its signature, when the version has one.
    var signedPatch: (patch: [UInt8], signature: String)? {
        guard let patch, let patchSignature else { return nil }
        return (patch, patchSignature)
    }
}
