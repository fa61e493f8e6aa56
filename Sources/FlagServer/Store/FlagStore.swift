import Foundation

/// The server's durable state: versioned flag sets, and the other concerns beside them (`tokens`, `auditLog`,
/// `telemetry`, `settings`, `signing`), each written once over the store's `SQLStore`.
///
/// A version stores only what changed against the one before, so writing costs the size of the change, not of the
/// set, and any version can be rebuilt. Version numbers run 1, 2, 3, … per set without gaps. Every write is atomic
/// and durable when the call returns. Errors are `StoreError`s.
///
/// Several servers may share one store (PostgreSQL): each learns of the others' writes through `changes(set:since:)`
/// and `tokens.revision()`, and `exclusively` keeps their first starts apart.
package protocol FlagStore: SQLStore {
    /// Every set with its current version, sorted by name.
    func sets() throws -> [StoredSet]

    /// Creates a set at version 1 with the given items, atomically with its audit record.
    ///
    /// Removals (`nil` items) are ignored: nothing exists before version 1. Throws `alreadyExists` for a set that
    /// exists.
    @discardableResult
    func createSet(_ name: String, change: VersionChange, digest: [UInt8], audit: AuditRecord) throws -> VersionInfo

    /// Creates several sets as `createSet` does, in one transaction: all of them, or none when any fails.
    @discardableResult
    func createSets(_ sets: [SetCreation]) throws -> [VersionInfo]

    /// Appends version `base + 1` if the set's current version is `base`, else throws a conflict carrying the
    /// current version. The items, the version, its audit record, its signed patch (for a signed set) and the
    /// current-version pointer commit together.
    func append(
        set: String, base: Int, change: VersionChange, digest: [UInt8], audit: AuditRecord, signedPatch: SignedBody?
    ) throws -> VersionInfo

    /// The set's items as of `version`, or as of its current version when `version` is `nil`.
    func snapshot(set: String, version: Int?) throws -> Snapshot

    /// What version `version` of the set changed, and who made it.
    func version(set: String, _ version: Int) throws -> VersionInfo

    /// The set's versions, newest first, at most `limit`. With a `subject`, only the versions that changed an item
    /// with that key or whose audit record names that subject.
    func history(set: String, subject: String?, limit: Int) throws -> [VersionInfo]

    /// What the set's versions after `base` changed, up to its current version: each item's newest bytes, or `nil`
    /// for one removed (perhaps one added and removed again after `base`). No items when `base` is current.
    func changes(set: String, since base: Int) throws -> SetChanges

    /// Runs `body` while no other server sharing the store runs its own: a first start's seeding and first admin
    /// token happen once, however many servers start together. Stores of one process run it at once.
    func exclusively<T>(_ body: () throws -> T) throws -> T

    /// Whether the store answered the last time it was asked (a store of one process always does).
    var health: StoreHealth { get }
}

/// Whether the store can be reached.
package enum StoreHealth: Sendable, Hashable {
    /// It answered the last call.
    case up
    /// It did not: why, naming the database and the error (never a password).
    case down(reason: String)
}

/// What a set's versions after some version changed, for a server catching up on another's writes.
package struct SetChanges: Sendable, Hashable {
    /// The set's name.
    package var set: String
    /// Its current version.
    package var version: Int
    /// When the current version was made.
    package var createdAt: Date
    /// The digest of the items at the current version (`ItemsDigest`).
    package var digest: [UInt8]
    /// Each item changed after the base version: its bytes at the current version, or `nil` when it is gone.
    package var items: [ItemKey: [UInt8]?]

    /// Changes up to `version`.
    package init(set: String, version: Int, createdAt: Date, digest: [UInt8], items: [ItemKey: [UInt8]?]) {
        self.set = set
        self.version = version
        self.createdAt = createdAt
        self.digest = digest
        self.items = items
    }
}

/// One set for `FlagStore.createSets`: its name, its items at version 1, their digest and the audit record.
package struct SetCreation: Sendable {
    /// The new set's name.
    package var name: String
    /// The items of version 1 (removals are ignored).
    package var change: VersionChange
    /// The digest of version 1's items (`ItemsDigest`).
    package var digest: [UInt8]
    /// Who created it, when and why.
    package var audit: AuditRecord
    /// Its signing key, for a server that signs new sets.
    package var signingKey: StoredSigningKey?

    /// A set to create.
    package init(
        name: String, change: VersionChange, digest: [UInt8], audit: AuditRecord, signingKey: StoredSigningKey? = nil
    ) {
        self.name = name
        self.change = change
        self.digest = digest
        self.audit = audit
        self.signingKey = signingKey
    }
}

extension FlagStore {
    /// API tokens and dashboard sessions.
    package var tokens: TokenStore { TokenStore(self) }

    /// The audit log.
    package var auditLog: AuditStore { AuditStore(self) }

    /// Client instances and evaluation counts.
    package var telemetry: TelemetryStore { TelemetryStore(self) }

    /// Each set's settings.
    package var settings: SettingsStore { SettingsStore(self) }

    /// Signing keys and signed bodies.
    package var signing: SigningStore { SigningStore(self) }

    /// Appends an unsigned version (see the requirement).
    package func append(set: String, base: Int, change: VersionChange, digest: [UInt8], audit: AuditRecord) throws
        -> VersionInfo
    {
        try append(set: set, base: base, change: change, digest: digest, audit: audit, signedPatch: nil)
    }

    package func exclusively<T>(_ body: () throws -> T) throws -> T { try body() }

    package var health: StoreHealth { .up }
}

/// Which audit records to list: by actor, subject, time, and the sets they belong to.
package struct AuditFilter: Sendable, Hashable {
    /// Only this actor's records.
    package var actor: String?
    /// Only records about this subject (a flag key, a cohort or token name).
    package var subject: String?
    /// Only records from this time on.
    package var since: Date?
    /// Only records before this time.
    package var until: Date?
    /// Only records of these sets (records outside any set left out); `nil`: every record.
    package var sets: Set<String>?

    /// A filter; nothing left out by default.
    package init(
        actor: String? = nil, subject: String? = nil, since: Date? = nil, until: Date? = nil, sets: Set<String>? = nil
    ) {
        self.actor = actor
        self.subject = subject
        self.since = since
        self.until = until
        self.sets = sets
    }

    /// Whether a record of `set` passes.
    func admits(_ record: AuditRecord, set: String?) -> Bool {
        if let actor, record.actor != actor { return false }
        if let subject, record.subject != subject { return false }
        if let since, record.time < since { return false }
        if let until, record.time >= until { return false }
        if let sets, !(set.map(sets.contains) ?? false) { return false }
        return true
    }
}
