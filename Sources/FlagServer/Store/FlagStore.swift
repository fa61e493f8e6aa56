import FlagAPI
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
    package var audit: AuditEntry
    /// Its signing key, for a server that signs new sets.
    package var signingKey: StoredSigningKey?

    /// A set to create.
    package init(
        name: String, change: VersionChange, digest: [UInt8], audit: AuditEntry, signingKey: StoredSigningKey? = nil
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

    /// Change requests, their items and approvals.
    package var proposals: ProposalStore { ProposalStore(self) }

    /// Webhooks and their outbox.
    package var webhooks: WebhookStore { WebhookStore(self) }

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
    func admits(_ record: AuditEntry, set: String?) -> Bool {
        if let actor, record.actor != actor { return false }
        if let subject, record.subject != subject { return false }
        if let since, record.time < since { return false }
        if let until, record.time >= until { return false }
        if let sets, !(set.map(sets.contains) ?? false) { return false }
        return true
    }
}
