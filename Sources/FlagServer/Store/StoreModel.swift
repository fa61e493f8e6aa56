import FlagAPI
import Foundation

/// What kind of item of a flag set a stored item is.
package enum ItemKind: String, Sendable, Hashable, CaseIterable, Comparable {
    case flag
    case cohort

    package static func < (lhs: ItemKind, rhs: ItemKind) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One stored item of a set: a flag or a cohort, named by its key. The store keeps its canonical JSON bytes
/// and never parses them.
package struct ItemKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Flag or cohort.
    package var kind: ItemKind
    /// The flag's or cohort's key.
    package var key: String

    /// The item `key` of the given kind.
    package init(_ kind: ItemKind, _ key: String) {
        self.kind = kind
        self.key = key
    }

    /// A flag's item key.
    package static func flag(_ key: String) -> ItemKey { ItemKey(.flag, key) }
    /// A cohort's item key.
    package static func cohort(_ key: String) -> ItemKey { ItemKey(.cohort, key) }

    package static func < (lhs: ItemKey, rhs: ItemKey) -> Bool { (lhs.kind, lhs.key) < (rhs.kind, rhs.key) }

    package var description: String { "\(kind.rawValue) \(key)" }
}

/// What one version changes against the version before it: new bytes for an item, or `nil` when it is removed.
package struct VersionChange: Sendable, Hashable {
    /// The changed items; a `nil` value removes the item.
    package var items: [ItemKey: [UInt8]?]

    /// A change of the given items.
    package init(items: [ItemKey: [UInt8]?] = [:]) {
        self.items = items
    }
}

/// One version of a set: when it was made, by whom, the digest of its items, and which items it changed.
/// Only the store makes one, with the memberwise initializer Swift writes.
package struct VersionInfo: Sendable, Hashable {
    /// The set's name.
    package var set: String
    /// The version number: 1, 2, 3, …
    package var version: Int
    /// When the version was made (its audit record's time).
    package var createdAt: Date
    /// The digest of the set's items at this version (`ItemsDigest`), as the caller computed it.
    package var digest: [UInt8]
    /// The audit record of the action that made the version.
    package var audit: AuditEntry
    /// The items this version added, replaced or removed, sorted.
    package var changed: [ItemKey]
}

/// A set's items as of one version, rebuilt from the changes up to it.
package struct Snapshot: Sendable, Hashable {
    /// The set's name.
    package var set: String
    /// The version the snapshot shows.
    package var version: Int
    /// When that version was made.
    package var createdAt: Date
    /// Every item present at that version, as its canonical JSON bytes.
    package var items: [ItemKey: [UInt8]]
    /// The digest of the set's items at that version (`ItemsDigest`), as stored with the version.
    package var digest: [UInt8]

    /// A snapshot of the given items.
    package init(set: String, version: Int, createdAt: Date, items: [ItemKey: [UInt8]], digest: [UInt8]) {
        self.set = set
        self.version = version
        self.createdAt = createdAt
        self.items = items
        self.digest = digest
    }
}

/// A flag set as the store lists it (`FlagStore.sets()`): its name, current version and last change; FlagAPI's
/// `SetSummary` is the answer made from it.
package struct StoredSet: Sendable, Hashable {
    /// The set's name.
    package var name: String
    /// Its current version.
    package var version: Int
    /// When its current version was made.
    package var updatedAt: Date

    /// A set's summary.
    package init(name: String, version: Int, updatedAt: Date) {
        self.name = name
        self.version = version
        self.updatedAt = updatedAt
    }
}

/// What a token may do.
package enum TokenRole: Sendable, Hashable {
    /// A token of the admin API: its role, and the sets it is limited to (`nil`: every set), sorted.
    case admin(AdminRole, sets: [String]?)
    /// An SDK key: reads one set.
    case sdk(set: String)
}

/// An API token as stored: its SHA-256 hash, never the token itself.
package struct StoredToken: Sendable, Hashable {
    /// The token's unique name, used as the actor in the audit log.
    package var name: String
    /// SHA-256 of the token.
    package var hash: [UInt8]
    /// What the token may do.
    package var role: TokenRole
    /// When the token was made.
    package var createdAt: Date
    /// When the token stops working, if it does.
    package var expiresAt: Date?
    /// When the token was last used, as last recorded (the server records uses about once a minute).
    package var lastUsedAt: Date?
    /// When the token was revoked, if it was.
    package var revokedAt: Date?
    /// For a dashboard session: the name of the token it was made from, which is its actor in the audit log.
    package var sessionOf: String?

    /// A token record.
    package init(
        name: String, hash: [UInt8], role: TokenRole, createdAt: Date, expiresAt: Date? = nil, lastUsedAt: Date? = nil,
        revokedAt: Date? = nil, sessionOf: String? = nil
    ) {
        self.name = name
        self.hash = hash
        self.role = role
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
        self.sessionOf = sessionOf
    }
}
