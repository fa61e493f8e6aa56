import FlagAPI
import Foundation

/// The versions of each set, written once for SQLite and PostgreSQL over `SQLExecutor` (see `FlagStore`).
extension FlagStore {
    /// Every set with its current version, sorted by name.
    package func sets() throws -> [StoredSet] {
        try reading("listing flag sets") { db in
            try db.rows(
                "SELECT name, current_version, \(db.dialect.microseconds(of: "updated_at")) FROM flag_set ORDER BY name",
                []
            ) { row in
                StoredSet(name: try row.text(0), version: try row.int(1), updatedAt: try row.date(2))
            }
        }
    }

    /// Creates a set at version 1 with the given items, atomically with its audit record.
    ///
    /// Removals (`nil` items) are ignored: nothing exists before version 1. Throws `alreadyExists` for a set that
    /// exists.
    @discardableResult
    package func createSet(_ name: String, change: VersionChange, digest: [UInt8], audit: AuditEntry) throws
        -> VersionInfo
    {
        try writing("creating flag set \"\(name)\"") { db in
            try db.insertSet(SetCreation(name: name, change: change, digest: digest, audit: audit))
        }
    }

    /// Creates several sets as `createSet` does, in one transaction: all of them, or none when any fails.
    @discardableResult
    package func createSets(_ sets: [SetCreation]) throws -> [VersionInfo] {
        try writing("creating flag sets \(sets.map(\.name).joined(separator: ", "))") { db in
            try sets.map { try db.insertSet($0) }
        }
    }

    /// Appends version `base + 1` if the set's current version is `base`, else throws a conflict carrying the
    /// current version. The items, the version, its audit record, its signed patch (for a signed set) and the
    /// current-version pointer commit together.
    ///
    /// The version moves by compare-and-set on the set's row, which also makes a concurrent writer of the set (on
    /// another server sharing a PostgreSQL store) wait for this transaction and then find the version moved: it
    /// gets the conflict.
    package func append(
        set: String, base: Int, change: VersionChange, digest: [UInt8], audit: AuditEntry,
        signedPatch: SignedBody? = nil, applying application: ProposalApplication? = nil
    ) throws -> VersionInfo {
        try writing("appending to flag set \"\(set)\"") { db in
            let moved = try db.run(
                """
                UPDATE flag_set SET current_version = current_version + 1, updated_at = \(db.dialect.time(1))
                WHERE name = $2 AND current_version = $3
                """,
                [.time(audit.time), .text(set), .integer(base)])
            guard moved == 1 else {
                guard let current = try db.currentVersion(of: set) else {
                    throw StoreError.notFound(set: set)
                }
                throw StoreError.conflict(set: set, base: base, current: current)
            }
            let info = try db.insertVersion(
                set: set, version: base + 1, change: change, digest: digest, audit: audit)
            if let signedPatch {
                try db.putSigned(signedPatch, .patch, set: set, version: base + 1, replacing: false)
            }
            if let application {
                try db.markApplied(application, set: set, version: base + 1, time: audit.time)
            }
            return info
        }
    }

    /// The set's items as of `version`, or as of its current version when `version` is `nil`.
    package func snapshot(set: String, version: Int?) throws -> Snapshot {
        try reading("reading flag set \"\(set)\"") { db in
            let (wanted, createdAt, digest) = try db.versionRecord(set: set, version: version)
            // Each item's newest change up to the version; removed items (NULL body) drop out.
            var items: [ItemKey: [UInt8]] = [:]
            _ = try db.rows(
                """
                SELECT kind, item_key, body FROM (\(db.dialect.newestChanges(where: "version <= $2"))) AS newest
                WHERE body IS NOT NULL
                """,
                [.text(set), .integer(wanted)]
            ) { row in
                items[ItemKey(try itemKind(row, 0), try row.text(1))] = try row.bytes(2)
            }
            return Snapshot(set: set, version: wanted, createdAt: createdAt, items: items, digest: digest)
        }
    }

    /// What version `version` of the set changed, and who made it.
    package func version(set: String, _ version: Int) throws -> VersionInfo {
        try reading("reading version \(version) of flag set \"\(set)\"") { db in
            guard try db.currentVersion(of: set) != nil else {
                throw StoreError.notFound(set: set)
            }
            guard let info = try db.versionInfos(set: set, versions: [version])[version] else {
                throw StoreError.notFound(set: set, version: version)
            }
            return info
        }
    }

    /// The set's versions, newest first, at most `limit`. With a `subject`, only the versions that changed an item
    /// with that key or whose audit record names that subject.
    package func history(set: String, subject: String?, limit: Int) throws -> [VersionInfo] {
        try reading("reading the history of flag set \"\(set)\"") { db in
            guard try db.currentVersion(of: set) != nil else {
                throw StoreError.notFound(set: set)
            }
            let versions: [Int]
            if let subject {
                // The UNION sits in a subquery so that each side uses its own index (an ORDER BY over the bare
                // UNION makes SQLite walk every change of the set in version order instead). `kind IN` lets the key
                // index serve the lookup.
                let kinds = ItemKind.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                versions = try db.rows(
                    """
                    SELECT version FROM (
                        SELECT version FROM item_change
                        WHERE set_name = $1 AND kind IN (\(kinds)) AND item_key = $2
                        UNION
                        SELECT v.version FROM audit AS a JOIN set_version AS v ON v.audit_id = a.id
                        WHERE a.set_name = $1 AND a.subject = $2
                    ) AS matching
                    ORDER BY version DESC LIMIT $3
                    """,
                    [.text(set), .text(subject), .integer(max(0, limit))]
                ) { try $0.int(0) }
            } else {
                versions = try db.rows(
                    "SELECT version FROM set_version WHERE set_name = $1 ORDER BY version DESC LIMIT $2",
                    [.text(set), .integer(max(0, limit))]
                ) { try $0.int(0) }
            }
            let infos = try db.versionInfos(set: set, versions: versions)
            return try versions.map { version in
                guard let info = infos[version] else {
                    throw StoreError.corrupt("version \(version) of flag set \"\(set)\" has changes but no record")
                }
                return info
            }
        }
    }

    /// What the set's versions after `base` changed, up to its current version: each item's newest bytes, or `nil`
    /// for one removed (perhaps one added and removed again after `base`). No items when `base` is current.
    package func changes(set: String, since base: Int) throws -> SetChanges {
        try reading("reading the changes of flag set \"\(set)\" since version \(base)") { db in
            let (current, createdAt, digest) = try db.versionRecord(set: set, version: nil)
            // Bounded by the version just read, so that a version written meanwhile by another server is left
            // for the next call instead of mixing into this one.
            var items: [ItemKey: [UInt8]?] = [:]
            _ = try db.rows(
                db.dialect.newestChanges(where: "version > $2 AND version <= $3"),
                [.text(set), .integer(base), .integer(current)]
            ) { row in
                items[ItemKey(try itemKind(row, 0), try row.text(1))] = .some(try row.optionalBytes(2))
            }
            return SetChanges(set: set, version: current, createdAt: createdAt, digest: digest, items: items)
        }
    }
}

extension SQLExecutor {
    /// Inserts the set at version 1. `ON CONFLICT DO NOTHING` waits for another server creating the same set and
    /// then inserts nothing, so that a set created concurrently is `alreadyExists` as well.
    fileprivate func insertSet(_ set: SetCreation) throws -> VersionInfo {
        let inserted = try run(
            """
            INSERT INTO flag_set (name, current_version, created_at, updated_at)
            VALUES ($1, 1, \(dialect.time(2)), \(dialect.time(2))) ON CONFLICT (name) DO NOTHING
            """,
            [.text(set.name), .time(set.audit.time)])
        guard inserted == 1 else {
            throw StoreError.alreadyExists("flag set \"\(set.name)\"")
        }
        let initial = VersionChange(items: set.change.items.filter { $0.value != nil })
        let info = try insertVersion(set: set.name, version: 1, change: initial, digest: set.digest, audit: set.audit)
        if let key = set.signingKey { try insertSigningKey(key, set: set.name) }
        return info
    }

    /// Writes version `version`: its audit record, its row, one row per changed item (nothing per unchanged one),
    /// and the announcement, which the other servers receive when the transaction commits.
    fileprivate func insertVersion(
        set: String, version: Int, change: VersionChange, digest: [UInt8], audit: AuditEntry
    ) throws -> VersionInfo {
        var record = audit
        record.version = version
        let auditID = try insertAudit(record, set: set, detail: .version(changed: change.items.keys.sorted()))
        try run(
            """
            INSERT INTO set_version (set_name, version, created_at, digest, audit_id)
            VALUES ($1, $2, \(dialect.time(3)), $4, $5)
            """,
            [.text(set), .integer(version), .time(audit.time), .bytes(digest), .integer(auditID)])
        let changed = change.items.keys.sorted()
        let perStatement = dialect.rowsPerInsert
        for start in stride(from: 0, to: changed.count, by: perStatement) {
            var arguments: [SQLValue] = [.text(set), .integer(version)]
            var rows: [String] = []
            for item in changed[start..<min(start + perStatement, changed.count)] {
                let first = arguments.count + 1
                rows.append("($1, $2, $\(first), $\(first + 1), $\(first + 2))")
                let body = change.items[item] ?? nil
                arguments += [.text(item.kind.rawValue), .text(item.key), body.map { .bytes($0) } ?? .null]
            }
            try run(
                "INSERT INTO item_change (set_name, version, kind, item_key, body) VALUES "
                    + rows.joined(separator: ", "),
                arguments)
        }
        try announce(.set(set, version: version))
        return VersionInfo(
            set: set, version: version, createdAt: audit.time, digest: digest, audit: record, changed: changed)
    }

    /// The number, time and digest of version `version` of the set, or of its current version when `nil`.
    fileprivate func versionRecord(set: String, version: Int?) throws -> (
        version: Int, createdAt: Date, digest: [UInt8]
    ) {
        let found = try firstRow(
            """
            SELECT s.current_version, v.version, \(dialect.microseconds(of: "v.created_at")), v.digest
            FROM flag_set AS s
            LEFT JOIN set_version AS v ON v.set_name = s.name AND v.version = coalesce($2, s.current_version)
            WHERE s.name = $1
            """,
            [.text(set), .integer(version)]
        ) { row in
            (
                current: try row.int(0), version: try row.optionalInt(1), createdAt: try row.optionalDate(2),
                digest: try row.optionalBytes(3)
            )
        }
        guard let found else {
            throw StoreError.notFound(set: set)
        }
        guard let number = found.version, let createdAt = found.createdAt, let digest = found.digest else {
            guard version != nil else {
                throw StoreError.corrupt("flag set \"\(set)\" has no record of its current version \(found.current)")
            }
            throw StoreError.notFound(set: set, version: version ?? found.current)
        }
        return (number, createdAt, digest)
    }

    /// The records of the given versions of the set that exist, by version: two queries for any number.
    fileprivate func versionInfos(set: String, versions: [Int]) throws -> [Int: VersionInfo] {
        guard !versions.isEmpty else { return [:] }
        let list = dialect.integerList(versions)
        var changed: [Int: [ItemKey]] = [:]
        _ = try rows(
            "SELECT version, kind, item_key FROM item_change WHERE set_name = $1 AND version \(dialect.isIn(list: 2))",
            [.text(set), list]
        ) { row in
            changed[try row.int(0), default: []].append(ItemKey(try itemKind(row, 1), try row.text(2)))
        }
        let infos = try rows(
            """
            SELECT v.version, \(dialect.microseconds(of: "v.created_at")), v.digest,
                a.actor, a.action, a.reason, a.subject, \(dialect.microseconds(of: "a.time")), a.version
            FROM set_version AS v JOIN audit AS a ON a.id = v.audit_id
            WHERE v.set_name = $1 AND v.version \(dialect.isIn(list: 2))
            """,
            [.text(set), list]
        ) { row in
            let version = try row.int(0)
            return VersionInfo(
                set: set, version: version, createdAt: try row.date(1), digest: try row.bytes(2),
                audit: try AuditStore.record(row, from: 3), changed: (changed[version] ?? []).sorted())
        }
        return Dictionary(infos.map { ($0.version, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// The item kind in column `column` of an `item_change` row.
private func itemKind(_ row: any SQLRow, _ column: Int) throws -> ItemKind {
    let text = try row.text(column)
    guard let kind = ItemKind(rawValue: text) else {
        throw StoreError.corrupt("an item change has the unknown kind \"\(text)\"")
    }
    return kind
}
