import FlagSQLite
import Foundation

extension SQLiteFlagStore {
    package func sets() throws -> [StoredSet] {
        try read("listing flag sets") { db in
            try db.query("SELECT name, current_version, updated_at FROM flag_set ORDER BY name") { row in
                StoredSet(
                    name: try row.text(0),
                    version: try row.int(1),
                    updatedAt: Self.date(microseconds: try row.int64(2))
                )
            }
        }
    }

    @discardableResult
    package func createSet(_ name: String, change: VersionChange, digest: [UInt8], audit: AuditRecord) throws
        -> VersionInfo
    {
        try write("creating flag set \"\(name)\"") { db in
            try insertSet(SetCreation(name: name, change: change, digest: digest, audit: audit), db)
        }
    }

    @discardableResult
    package func createSets(_ sets: [SetCreation]) throws -> [VersionInfo] {
        try write("creating flag sets \(sets.map(\.name).joined(separator: ", "))") { db in
            try sets.map { try insertSet($0, db) }
        }
    }

    private func insertSet(_ set: SetCreation, _ db: SQLiteConnection) throws -> VersionInfo {
        guard try db.currentVersion(of: set.name) == nil else {
            throw StoreError.alreadyExists("flag set \"\(set.name)\"")
        }
        try db.execute(
            "INSERT INTO flag_set (name, current_version, created_at, updated_at) VALUES (?, 1, ?, ?)",
            [.text(set.name), Self.microseconds(set.audit.time), Self.microseconds(set.audit.time)]
        )
        let initial = VersionChange(items: set.change.items.filter { $0.value != nil })
        let info = try insertVersion(
            set: set.name, version: 1, change: initial, digest: set.digest, audit: set.audit, db)
        if let key = set.signingKey { try db.insertSigningKey(key, set: set.name) }
        return info
    }

    package func append(
        set: String, base: Int, change: VersionChange, digest: [UInt8], audit: AuditRecord, signedPatch: SignedBody?
    ) throws -> VersionInfo {
        try write("appending to flag set \"\(set)\"") { db in
            guard let current = try db.currentVersion(of: set) else {
                throw StoreError.notFound(set: set)
            }
            guard current == base else {
                throw StoreError.conflict(set: set, base: base, current: current)
            }
            try db.execute(
                "UPDATE flag_set SET current_version = ?, updated_at = ? WHERE name = ?",
                [.init(base + 1), Self.microseconds(audit.time), .text(set)]
            )
            let info = try insertVersion(
                set: set, version: base + 1, change: change, digest: digest, audit: audit, db)
            if let signedPatch { try db.putSigned(signedPatch, .patch, set: set, version: base + 1, replacing: false) }
            return info
        }
    }

    package func snapshot(set: String, version: Int?) throws -> Snapshot {
        try read("reading flag set \"\(set)\"") { db in
            guard let current = try db.currentVersion(of: set) else {
                throw StoreError.notFound(set: set)
            }
            let wanted = version ?? current
            guard
                let (createdAt, digest) = try db.queryFirst(
                    "SELECT created_at, digest FROM set_version WHERE set_name = ? AND version = ?",
                    [.text(set), .init(wanted)],
                    { row in (Self.date(microseconds: try row.int64(0)), try row.blob(1)) }
                )
            else {
                throw StoreError.notFound(set: set, version: wanted)
            }
            // Each item's newest change up to the version, found on the narrow key index alone; then the bodies of
            // just those rows. Removed items (NULL body) drop out.
            var items: [ItemKey: [UInt8]] = [:]
            _ = try db.query(
                """
                SELECT change.kind, change.item_key, change.body
                FROM (
                    SELECT kind, item_key, max(version) AS version FROM item_change
                    WHERE set_name = ?1 AND version <= ?2
                    GROUP BY kind, item_key
                ) AS latest
                JOIN item_change AS change
                    ON change.set_name = ?1 AND change.kind = latest.kind
                    AND change.item_key = latest.item_key AND change.version = latest.version
                WHERE change.body IS NOT NULL
                """,
                [.text(set), .init(wanted)]
            ) { row in
                items[ItemKey(try Self.kind(row, 0), try row.text(1))] = try row.blob(2)
            }
            return Snapshot(set: set, version: wanted, createdAt: createdAt, items: items, digest: digest)
        }
    }

    package func version(set: String, _ version: Int) throws -> VersionInfo {
        try read("reading version \(version) of flag set \"\(set)\"") { db in
            guard try db.currentVersion(of: set) != nil else {
                throw StoreError.notFound(set: set)
            }
            guard let info = try versionInfo(set: set, version: version, db) else {
                throw StoreError.notFound(set: set, version: version)
            }
            return info
        }
    }

    package func history(set: String, subject: String?, limit: Int) throws -> [VersionInfo] {
        try read("reading the history of flag set \"\(set)\"") { db in
            guard try db.currentVersion(of: set) != nil else {
                throw StoreError.notFound(set: set)
            }
            let versions: [Int]
            if let subject {
                let kinds = ItemKind.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                // The UNION sits in a subquery so that each side uses its own index (an ORDER BY over the bare UNION
                // makes SQLite walk every change of the set in version order instead). `kind IN` lets the key index
                // serve the lookup.
                versions = try db.query(
                    """
                    SELECT version FROM (
                        SELECT version FROM item_change WHERE set_name = ?1 AND kind IN (\(kinds)) AND item_key = ?2
                        UNION
                        SELECT v.version FROM audit AS a JOIN set_version AS v ON v.audit_id = a.id
                        WHERE a.set_name = ?1 AND a.subject = ?2
                    )
                    ORDER BY version DESC LIMIT ?3
                    """,
                    [.text(set), .text(subject), .init(max(0, limit))]
                ) { try $0.int(0) }
            } else {
                versions = try db.query(
                    "SELECT version FROM set_version WHERE set_name = ? ORDER BY version DESC LIMIT ?",
                    [.text(set), .init(max(0, limit))]
                ) { try $0.int(0) }
            }
            return try versions.map { version in
                guard let info = try versionInfo(set: set, version: version, db) else {
                    throw StoreError.corrupt("version \(version) of flag set \"\(set)\" has changes but no record")
                }
                return info
            }
        }
    }

    package func changes(set: String, since base: Int) throws -> SetChanges {
        try read("reading the changes of flag set \"\(set)\" since version \(base)") { db in
            guard let current = try db.currentVersion(of: set) else {
                throw StoreError.notFound(set: set)
            }
            guard
                let (createdAt, digest) = try db.queryFirst(
                    "SELECT created_at, digest FROM set_version WHERE set_name = ? AND version = ?",
                    [.text(set), .init(current)],
                    { row in (Self.date(microseconds: try row.int64(0)), try row.blob(1)) }
                )
            else {
                throw StoreError.corrupt("flag set \"\(set)\" has no record of its current version \(current)")
            }
            var items: [ItemKey: [UInt8]?] = [:]
            _ = try db.query(
                """
                SELECT change.kind, change.item_key, change.body
                FROM (
                    SELECT kind, item_key, max(version) AS version FROM item_change
                    WHERE set_name = ?1 AND version > ?2
                    GROUP BY kind, item_key
                ) AS latest
                JOIN item_change AS change
                    ON change.set_name = ?1 AND change.kind = latest.kind
                    AND change.item_key = latest.item_key AND change.version = latest.version
                """,
                [.text(set), .init(base)]
            ) { row in
                items[ItemKey(try Self.kind(row, 0), try row.text(1))] = .some(try row.optionalBlob(2))
            }
            return SetChanges(set: set, version: current, createdAt: createdAt, digest: digest, items: items)
        }
    }

    /// Writes version `version`: its audit record, its row, and one row per changed item, nothing per unchanged one.
    private func insertVersion(
        set: String,
        version: Int,
        change: VersionChange,
        digest: [UInt8],
        audit: AuditRecord,
        _ db: SQLiteConnection
    ) throws -> VersionInfo {
        var record = audit
        record.version = version
        let auditID = try db.insertAudit(record, set: set)
        try db.execute(
            "INSERT INTO set_version (set_name, version, created_at, digest, audit_id) VALUES (?, ?, ?, ?, ?)",
            [.text(set), .init(version), Self.microseconds(audit.time), .blob(digest), .integer(auditID)]
        )
        let changed = change.items.keys.sorted()
        for item in changed {
            try db.execute(
                "INSERT INTO item_change (set_name, kind, item_key, version, body) VALUES (?, ?, ?, ?, ?)",
                [
                    .text(set), .text(item.kind.rawValue), .text(item.key), .init(version),
                    .init(change.items[item] ?? nil),
                ]
            )
        }
        return VersionInfo(
            set: set, version: version, createdAt: audit.time, digest: digest, audit: record, changed: changed
        )
    }

    private func versionInfo(set: String, version: Int, _ db: SQLiteConnection) throws -> VersionInfo? {
        let found = try db.queryFirst(
            """
            SELECT v.created_at, v.digest, a.actor, a.action, a.reason, a.subject, a.time, a.version
            FROM set_version AS v JOIN audit AS a ON a.id = v.audit_id
            WHERE v.set_name = ? AND v.version = ?
            """,
            [.text(set), .init(version)]
        ) { row in
            (Self.date(microseconds: try row.int64(0)), try row.blob(1), try AuditStore.record(row, from: 2))
        }
        guard let (createdAt, digest, audit) = found else { return nil }
        // Sorted here, not by ORDER BY, which would make SQLite walk the set's whole history in key order.
        let changed = try db.query(
            "SELECT kind, item_key FROM item_change WHERE set_name = ? AND version = ?",
            [.text(set), .init(version)]
        ) { row in ItemKey(try Self.kind(row, 0), try row.text(1)) }.sorted()
        return VersionInfo(
            set: set, version: version, createdAt: createdAt, digest: digest, audit: audit, changed: changed
        )
    }

    static func kind(_ row: SQLiteRow, _ column: Int) throws -> ItemKind {
        let text = try row.text(column)
        guard let kind = ItemKind(rawValue: text) else {
            throw StoreError.corrupt("an item change has the unknown kind \"\(text)\"")
        }
        return kind
    }
}
