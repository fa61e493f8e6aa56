import FlagCore
import FlagSigning
import Foundation

/// A set's signing key as the API lists it (`GET /v1/sets/{set}/signing-keys`): never its private half.
public struct PublishedSigningKey: Sendable, Hashable {
    /// The public key.
    public var key: SigningKey
    /// Published, active or retired.
    public var state: SigningKeyState
    /// When it was made.
    public var createdAt: Date
}

/// Signing (docs/signing.md): each set's keys, and the signed bytes of each version, made when it is written.
///
/// A set is signed once it has an active key. Every version written after that stores its whole document and its
/// patch with their signatures, in the same transaction as the version, and every server serves those stored bytes.
/// The private keys are stored sealed with the key-encryption key, which only a server given one holds: a server
/// without it serves what is stored but cannot write a signed set.
extension FlagService {
    /// The set's keys, oldest first, public halves only.
    public func signingKeys(_ set: String) throws -> [PublishedSigningKey] {
        _ = try requireState(set)
        return try storeCall { try store.signingKeys(set: set) }.map { stored in
            PublishedSigningKey(
                key: try storeCall { try SigningKey(publicKey: stored.publicKey) }, state: stored.state,
                createdAt: stored.createdAt)
        }
    }

    /// Adds a key to the set. A set that has no active key starts being signed with it at once (its current version
    /// signed now); otherwise the key is published only, for apps to ship trusting it before `activate` signs with it.
    @discardableResult
    public func rotateSigningKey(_ set: String, note: ChangeNote) throws -> PublishedSigningKey {
        let keyEncryptionKey = try requireKeyEncryptionKey(set)
        return try writeLock.withLock { _ in
            let current = try requireState(set)
            var keys = try storeCall { try store.signingKeys(set: set) }
            let now = clock.wholeSecond()
            let (stored, privateKey) = try Self.newSigningKey(
                set: set, state: keys.contains { $0.state == .active } ? .published : .active, at: now,
                keyEncryptionKey: keyEncryptionKey)
            keys.append(stored)
            let resigned = stored.state == .active ? try signedDocument(of: current, with: privateKey) : nil
            try saveSigningKeys(set, keys, resigned: resigned, note: note, subject: stored.id, at: now)
            return try PublishedSigningKey(
                key: SigningKey(publicKey: stored.publicKey), state: stored.state, createdAt: now)
        }
    }

    /// Makes a published key the set's active one: new versions are signed with it, and so is the current version,
    /// at once. The key active before is published again (still trusted, no longer signing) until it is retired.
    public func activateSigningKey(_ set: String, id: String, note: ChangeNote) throws {
        let keyEncryptionKey = try requireKeyEncryptionKey(set)
        try writeLock.withLock { _ in
            let current = try requireState(set)
            var keys = try storeCall { try store.signingKeys(set: set) }
            guard let index = keys.firstIndex(where: { $0.id == id }) else { throw Self.noSuchKey(set, id) }
            switch keys[index].state {
            case .active: return
            case .retired:
                throw ServiceError.badRequest(
                    "signing key \(id) of set \"\(set)\" is retired and cannot sign again; rotate to make a new key",
                    path: "id")
            case .published: break
            }
            for other in keys.indices where keys[other].state == .active { keys[other].state = .published }
            keys[index].state = .active
            let privateKey = try unseal(keys[index], set: set, with: keyEncryptionKey)
            let resigned = try signedDocument(of: current, with: privateKey)
            try saveSigningKeys(set, keys, resigned: resigned, note: note, subject: id, at: clock.wholeSecond())
        }
    }

    /// Marks a key retired: no longer to be trusted. The active key cannot be retired; activate another first.
    public func retireSigningKey(_ set: String, id: String, note: ChangeNote) throws {
        try writeLock.withLock { _ in
            _ = try requireState(set)
            var keys = try storeCall { try store.signingKeys(set: set) }
            guard let index = keys.firstIndex(where: { $0.id == id }) else { throw Self.noSuchKey(set, id) }
            switch keys[index].state {
            case .retired: return
            case .active:
                throw ServiceError.badRequest(
                    "signing key \(id) signs set \"\(set)\" now; activate another key before retiring this one",
                    path: "id")
            case .published: break
            }
            keys[index].state = .retired
            try saveSigningKeys(set, keys, resigned: nil, note: note, subject: id, at: clock.wholeSecond())
        }
    }

    /// The document of any stored version and its signature: the stored signed bytes of a signed version, else the
    /// document assembled from its items, unsigned.
    public func signedDocument(_ set: String, version: Int) throws -> (document: [UInt8], signature: String?) {
        if let current = state(set), current.version == version { return (current.document, current.documentSignature) }
        if let signed = try storeCall({ try store.signedVersion(set: set, version) }) {
            return (signed.document, signed.documentSignature)
        }
        return (try document(set, version: version), nil)
    }

    // MARK: Writing signed versions

    /// The signing key and the version-1 bytes of a set being created, when this server signs new sets.
    func signingForNewSet(_ state: SetState) throws -> (key: StoredSigningKey, signed: SignedVersion, state: SetState)?
    {
        guard let keyEncryptionKey else { return nil }
        let (stored, privateKey) = try Self.newSigningKey(
            set: state.name, state: .active, at: state.updatedAt ?? clock.now(), keyEncryptionKey: keyEncryptionKey)
        let signed = try signedDocument(of: state, with: privateKey)
        return (stored, signed, state.signed(document: signed.document, signature: signed.documentSignature))
    }

    /// The signed bytes of `state`, made from `base` by `change`, when the set has an active key: its document and its
    /// patch. `nil` for a set that is not signed.
    func signedVersion(of state: SetState, change: [ItemKey: [UInt8]?], base: Int) throws -> SignedVersion? {
        let keys = try storeCall { try store.signingKeys(set: state.name) }
        guard let active = keys.first(where: { $0.state == .active }) else { return nil }
        let patch = SetPatch(version: state.version, base: base, changed: change).encoded()
        let privateKey = try unseal(active, set: state.name, with: try requireKeyEncryptionKey(state.name))
        var signed = try signedDocument(of: state, with: privateKey)
        signed.patch = patch
        signed.patchSignature = try sign(
            SignedMessage(set: state.name, version: state.version, baseVersion: base, body: patch), with: privateKey)
        return signed
    }

    /// The state `state` serves once `signed` is stored: its signed document.
    static func serving(_ state: SetState, _ signed: SignedVersion?) -> SetState {
        guard let signed, signed.version == state.version else { return state }
        return state.signed(document: signed.document, signature: signed.documentSignature)
    }

    // MARK: Helpers

    private func signedDocument(of state: SetState, with key: PrivateSigningKey) throws -> SignedVersion {
        let document = state.document
        let signature = try sign(
            SignedMessage(set: state.name, version: state.version, baseVersion: nil, body: document), with: key)
        return SignedVersion(version: state.version, document: document, documentSignature: signature)
    }

    private func sign(_ message: SignedMessage, with key: PrivateSigningKey) throws -> String {
        do {
            return try key.sign(message).headerValue
        } catch {
            throw ServiceError.unavailable("could not sign \(message.set) v\(message.version): \(error)")
        }
    }

    private func unseal(_ stored: StoredSigningKey, set: String, with keyEncryptionKey: KeyEncryptionKey) throws
        -> PrivateSigningKey
    {
        do {
            return try PrivateSigningKey(sealed: stored.sealedPrivateKey, with: keyEncryptionKey, set: set)
        } catch {
            throw ServiceError.unavailable(
                "signing key \(stored.id) of set \"\(set)\" cannot be opened with this server's key-encryption key"
                    + " (\(error)); start every server with the key-encryption key the set's keys were made with")
        }
    }

    private func requireKeyEncryptionKey(_ set: String) throws -> KeyEncryptionKey {
        guard let keyEncryptionKey else {
            throw ServiceError.unavailable(
                "set \"\(set)\" is signed, and this server has no key-encryption key to sign with; start it with"
                    + " --signing-key-file FILE or FLAGSERVER_SIGNING_KEY (docs/signing.md)")
        }
        return keyEncryptionKey
    }

    private func saveSigningKeys(
        _ set: String, _ keys: [StoredSigningKey], resigned: SignedVersion?, note: ChangeNote, subject: String,
        at time: Date
    ) throws {
        let audit = AuditRecord(
            actor: note.actor, action: note.action, reason: note.reason, subject: subject, time: time)
        try storeCall { try store.updateSigningKeys(set: set, keys, resigned: resigned, audit: audit) }
        if let resigned, let current = state(set), current.version == resigned.version {
            registry.install(Self.serving(current, resigned))
        }
    }

    private static func newSigningKey(
        set: String, state: SigningKeyState, at time: Date, keyEncryptionKey: KeyEncryptionKey
    ) throws -> (StoredSigningKey, PrivateSigningKey) {
        do {
            let privateKey = try PrivateSigningKey.generate()
            let stored = StoredSigningKey(
                id: privateKey.signingKey.id, publicKey: privateKey.signingKey.publicKey,
                sealedPrivateKey: try privateKey.sealed(with: keyEncryptionKey, set: set), state: state,
                createdAt: time)
            return (stored, privateKey)
        } catch {
            throw ServiceError.unavailable("could not make a signing key for set \"\(set)\": \(error)")
        }
    }

    private static func noSuchKey(_ set: String, _ id: String) -> ServiceError {
        ServiceError.notFound(
            "set \"\(set)\" has no signing key \"\(id)\"; `flagctl signing-key show` lists its keys", path: "id")
    }
}
