import FlagAPI
import FlagCore
import FlagSigning
import Foundation

/// A set's active signing key as writes and the documents executor use it: unsealed once, when the set's keys are
/// loaded or change (here, or on another server sharing the store: `refreshSigningKeys`), so that a write reads and
/// unseals nothing.
enum ActiveSigningKey: Sendable {
    /// The set is not signed.
    case none
    case key(PrivateSigningKey)
    /// The set is signed, and this server cannot open its key (it has no key-encryption key, or another one):
    /// writes answer this error, and documents are served as stored.
    case unusable(ServiceError)
}

/// A set's signing key as the API lists it (`GET /v1/sets/{set}/signing-keys`): never its private half.
package struct PublishedSigningKey: Sendable, Hashable {
    /// The public key.
    package var key: SigningKey
    /// Published, active or retired.
    package var state: SigningKeyState
    /// When it was made.
    package var createdAt: Date
}

/// Signing (docs/signing.md): each set's keys, and the signed bytes of its versions.
///
/// A set is signed once it has an active key. A version written after that stores its signed patch in the same
/// transaction as the version (the cost of the change). Its whole document is signed once, by the first server that
/// needs it (on its documents executor, when a client first asks), and stored; every server then serves the stored
/// bytes. The private keys are stored sealed with the key-encryption key, which only a server given one holds: a
/// server without it serves what is stored but cannot write a signed set.
extension FlagService {
    /// The set's keys, oldest first, public halves only.
    package func signingKeys(_ set: String) throws -> [PublishedSigningKey] {
        _ = try requireState(set)
        return try storeCall { try store.signing.keys(set: set) }.map { stored in
            PublishedSigningKey(
                key: try storeCall { try SigningKey(publicKey: stored.publicKey) }, state: stored.state,
                createdAt: stored.createdAt)
        }
    }

    /// Adds a key to the set. A set that has no active key starts being signed with it at once (its current version
    /// signed now); otherwise the key is published only, for apps to ship trusting it before `activate` signs with it.
    @discardableResult
    package func rotateSigningKey(_ set: String, note: ChangeNote) throws -> PublishedSigningKey {
        let keyEncryptionKey = try requireKeyEncryptionKey(set)
        return try writeLock.withLock { _ in
            let current = try requireState(set)
            var keys = try storeCall { try store.signing.keys(set: set) }
            let now = clock.wholeSecond()
            let (stored, privateKey) = try Self.newSigningKey(
                set: set, state: keys.contains { $0.state == .active } ? .published : .active, at: now,
                keyEncryptionKey: keyEncryptionKey)
            keys.append(stored)
            let resigned = stored.state == .active ? try resign(current, with: privateKey) : nil
            try saveSigningKeys(set, keys, resigned: resigned, note: note, subject: stored.id, at: now)
            if stored.state == .active { activeKeys.withLock { $0[set] = .key(privateKey) } }
            return try PublishedSigningKey(
                key: SigningKey(publicKey: stored.publicKey), state: stored.state, createdAt: now)
        }
    }

    /// Makes a published key the set's active one: new versions are signed with it, and so is the current version,
    /// at once. The key active before is published again (still trusted, no longer signing) until it is retired.
    package func activateSigningKey(_ set: String, id: String, note: ChangeNote) throws {
        let keyEncryptionKey = try requireKeyEncryptionKey(set)
        try writeLock.withLock { _ in
            let current = try requireState(set)
            var keys = try storeCall { try store.signing.keys(set: set) }
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
            let privateKey = try DocumentSigner.unseal(keys[index], set: set, with: keyEncryptionKey)
            let resigned = try resign(current, with: privateKey)
            try saveSigningKeys(set, keys, resigned: resigned, note: note, subject: id, at: clock.wholeSecond())
            activeKeys.withLock { $0[set] = .key(privateKey) }
        }
    }

    /// Marks a key retired: no longer to be trusted. The active key cannot be retired; activate another first.
    package func retireSigningKey(_ set: String, id: String, note: ChangeNote) throws {
        try writeLock.withLock { _ in
            _ = try requireState(set)
            var keys = try storeCall { try store.signing.keys(set: set) }
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

    /// The document of any stored version and its signature: the current state's, else the signed document stored
    /// for the version, else (for a signed set) the version's document signed now and stored, else unsigned.
    package func signedDocument(_ set: String, version: Int) throws -> (document: [UInt8], signature: String?) {
        if let current = state(set), current.version == version {
            let served = try servedDocument(set)
            return (served.bytes, served.signature)
        }
        let assembled = try document(set, version: version)
        let key = activeKey(set)
        let signed = documents.sync {
            documentSigner.signedDocument(set: set, version: version, assembled: assembled, key: key)
        }
        return (signed?.bytes ?? assembled, signed?.signature)
    }

    // MARK: Writing signed versions

    /// The signing key of a set being created (stored and unsealed), when this server signs new sets.
    func signingKeyForNewSet(_ state: SetState) throws -> (StoredSigningKey?, PrivateSigningKey?) {
        guard let keyEncryptionKey else { return (nil, nil) }
        return try Self.newSigningKey(
            set: state.name, state: .active, at: state.updatedAt ?? clock.now(), keyEncryptionKey: keyEncryptionKey)
    }

    /// The set's active signing key as last loaded.
    func activeKey(_ set: String) -> ActiveSigningKey {
        activeKeys.withLock { $0[set] } ?? .none
    }

    /// Loads the set's keys from the store and keeps its active key, unsealed; returns whether the set is signed.
    @discardableResult
    func loadSigningKey(_ set: String) throws -> Bool {
        let keys = try storeCall { try store.signing.keys(set: set) }
        let active: ActiveSigningKey
        if let stored = keys.first(where: { $0.state == .active }) {
            do {
                active = .key(try DocumentSigner.unseal(stored, set: set, with: try requireKeyEncryptionKey(set)))
            } catch let error as ServiceError {
                active = .unusable(error)
            }
        } else {
            active = .none
        }
        activeKeys.withLock { $0[set] = active }
        if case .none = active { return false }
        return true
    }

    /// Loads every set's keys again: another server sharing the store may have rotated, activated or retired one
    /// (`ReplicaSync.check`, once a second).
    package func refreshSigningKeys() throws {
        // Under the write lock: a local rotation between this read and its keeping must not be undone by it.
        try writeLock.withLock { _ in
            for state in states() { try loadSigningKey(state.name) }
        }
    }

    /// The signed patch of `state`, made from `base` by `change`, when the set has an active key; `nil` for a set that
    /// is not signed.
    func signedPatch(of state: SetState, change: [ItemKey: [UInt8]?], base: Int) throws -> SignedBody? {
        let privateKey: PrivateSigningKey
        switch activeKey(state.name) {
        case .none: return nil
        case .unusable(let error): throw error
        case .key(let key): privateKey = key
        }
        let patch = SetPatch(version: state.version, base: base, changed: change).encoded()
        let signature = try DocumentSigner.sign(
            SignedMessage(set: state.name, version: state.version, baseVersion: base, body: patch), with: privateKey)
        return SignedBody(bytes: patch, signature: signature)
    }

    /// `state` as this server serves it: signed when the set has an active key in the store (which is loaded).
    func servingState(_ state: SetState) throws -> SetState {
        state.signed(try loadSigningKey(state.name))
    }

    // MARK: Helpers

    /// The current version's document signed again with `key`: the same bytes as served, a new signature.
    private func resign(_ state: SetState, with key: PrivateSigningKey) throws -> (version: Int, document: SignedBody) {
        let document = try servedDocument(state.name).bytes
        let signature = try DocumentSigner.sign(
            SignedMessage(set: state.name, version: state.version, baseVersion: nil, body: document), with: key)
        return (state.version, SignedBody(bytes: document, signature: signature))
    }

    private func requireKeyEncryptionKey(_ set: String) throws -> KeyEncryptionKey {
        guard let keyEncryptionKey else { throw DocumentSigner.noKeyEncryptionKey(set) }
        return keyEncryptionKey
    }

    private func saveSigningKeys(
        _ set: String, _ keys: [StoredSigningKey], resigned: (version: Int, document: SignedBody)?, note: ChangeNote,
        subject: String, at time: Date
    ) throws {
        let audit = AuditEntry(
            time: time, actor: note.actor, action: note.action, subject: subject, reason: note.reason)
        try storeCall { try store.signing.updateKeys(set: set, keys, resigned: resigned, audit: audit) }
        if let resigned, let current = state(set), current.version == resigned.version {
            let signed = current.signed(true)
            if signed !== current { registry.install(signed) }
            registry.install(
                ServedDocument(bytes: resigned.document.bytes, signature: resigned.document.signature), for: signed,
                replacing: true)
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
            "set \"\(set)\" has no signing key \"\(id)\"; `flagctl signing-key show` lists its keys", path: "id",
            subject: .signingKey)
    }
}

/// Makes the signed document of a version of a signed set, or finds the one stored: the first server that needs a
/// version's document signs it with the set's active key and stores it, and every server serves the stored bytes.
/// Called on the documents executor, at most once per version and server (the registry keeps the result).
final class DocumentSigner: Sendable {
    private let store: any FlagStore
    private let log: @Sendable (String) -> Void

    init(store: any FlagStore, log: @escaping @Sendable (String) -> Void) {
        self.store = store
        self.log = log
    }

    /// The version's signed document: the one stored, else `assembled` signed now with `key` (the set's active key)
    /// and kept (or the one another server kept meanwhile). `nil`, logged, when it can be neither read nor made: the
    /// version is then served unsigned by this server, and verifying clients refuse it until the next version.
    func signedDocument(set: String, version: Int, assembled: [UInt8], key active: ActiveSigningKey) -> SignedBody? {
        do {
            if let stored = try store.signing.body(set: set, version: version, .document) { return stored }
            let key: PrivateSigningKey
            switch active {
            case .none: return nil
            case .unusable(let error): throw error
            case .key(let unsealed): key = unsealed
            }
            let signature = try Self.sign(
                SignedMessage(set: set, version: version, baseVersion: nil, body: assembled), with: key)
            return try store.signing.keepDocument(
                set: set, version: version, SignedBody(bytes: assembled, signature: signature))
        } catch {
            log("flag set \(set) v\(version): serving its document unsigned, since it could not be signed: \(error)")
            return nil
        }
    }

    static func sign(_ message: SignedMessage, with key: PrivateSigningKey) throws -> String {
        do {
            return try key.sign(message).headerValue
        } catch {
            throw ServiceError.unavailable("could not sign \(message.set) v\(message.version): \(error)")
        }
    }

    static func unseal(_ stored: StoredSigningKey, set: String, with keyEncryptionKey: KeyEncryptionKey) throws
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

    static func noKeyEncryptionKey(_ set: String) -> ServiceError {
        ServiceError.unavailable(
            "set \"\(set)\" is signed, and this server has no key-encryption key to sign with; start it with"
                + " --signing-key-file FILE or FLAGSERVER_SIGNING_KEY (docs/signing.md)")
    }
}
