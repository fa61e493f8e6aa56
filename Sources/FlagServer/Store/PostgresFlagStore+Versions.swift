import FlagPostgres
import Foundation

extension PostgresFlagStore {
    package func sets() throws -> [StoredSet] {
        try read("listing flag sets") { db in
            try db.query(
                "SELECT name, current_version, \(Self.microseconds(of: "updated_at")) FROM flag_set ORDER BY name"
            ) { row in
                StoredSet(
                    name: try row.text(0), version: try row.int(1),
                    updatedAt: Self.date(microseconds: try row.int64(2)))
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

    /// Inserts the set at version 1. `ON CONFLICT DO NOTHING` waits for another server creating the same set
    /// and then inserts nothing, so that a set created concurrently is `alreadyExists` as well.
    private func insertSet(_ set: SetCreation, _ db: PostgresConnection) throws -> VersionInfo {
        let inserted = try db.execute(
            """
            INSERT INTO flag_set (name, current_version, created_at, updated_at)
            VALUES ($1, 1, \(Self.time(2)), \(Self.time(2))) ON CONFLICT (name) DO NOTHING
            """,
            [.text(set.name), Self.microseconds(set.audit.time)])
        guard inserted.affectedRows == 1 else {
            throw StoreError.alreadyExists("flag set \"\(set.name)\"")
        }
        let initial = VersionChange(items: set.change.items.filter { $0.value != nil })
        let info = try insertVersion(
            set: set.name, version: 1, change: initial, digest: set.digest, audit: set.audit, db)
        if let key = set.signingKey { try db.insertSigningKey(key, set: set.name) }
        return info
    }

    /// Moves the set from `base` to `base + 1` by compare-and-set on its row, which also makes a concurrent writer
    /// of the set wait for this transaction and then find the version moved: it gets the conflict.
    package func append(
        set: String, base: Int, change: VersionChange, digest: [UInt8], audit: AuditRecord,
        signedPatch: SignedBody?
    ) throws -> VersionInfo {
        try write("appending to flag set \"\(set)\"") { db in
            let moved = try db.execute(
                """
                UPDATE flag_set SET current_version = current_version + 1, updated_at = \(Self.time(1))
                WHERE name = $2 AND current_version = $3
                """,
                [Self.microseconds(audit.time), .text(set), .int(base)])
            guard moved.affectedRows == 1 else {
                guard let current = try db.currentVersion(of: set) else {
                    throw StoreError.notFound(set: set)
                }
                throw StoreError.conflict(set: set, base: base, current: current)
            }
            let info = try insertVersion(
                set: set, version: base + 1, change: change, digest: digest, audit: audit, db)
            if let signedPatch {
                try db.putSigned(signedPatch, .patch, set: set, version: base + 1, replacing: false)
            }
            return info
        }
    }

    package func snapshot(set: String, version: Int?) throws -> Snapshot {
        try read("reading flag set \"\(set)\"") { db in
            let (wanted, createdAt, digest) = try versionRecord(set: set, version: version, db)
            // Each item's newest change up to the version; removed items (NULL body) drop out.
            var items: [ItemKey: [UInt8]] = [:]
            _ = try db.query(
                """
                SELECT kind, item_key, body FROM (
                    SELECT DISTINCT ON (kind, item_key) kind, item_key, body FROM item_change
                    WHERE set_name = $1 AND version <= $2
                    ORDER BY kind, item_key, version DESC
                ) AS latest
                WHERE body IS NOT NULL
                """,
                [.text(set), .int(wanted)]
            ) { row in
                items[ItemKey(try Self.kind(row, 0), try row.text(1))] = try row.bytes(2)
            }
            return Snapshot(set: set, version: wanted, createdAt: createdAt, items: items, digest: digest)
        }
    }

    package func version(set: String, _ version: Int) throws -> VersionInfo {
        try read("reading version \(version) of flag set \"\(set)\"") { db in
            guard try db.currentVersion(of: set) != nil else {
                throw StoreError.notFound(set: set)
            }
            guard let info = try versionInfos(set: set, versions: [version], db)[version] else {
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
                // `kind IN` lets the primary key serve the lookup by key.
                let kinds = ItemKind.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                versions = try db.query(
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
                    [.text(set), .text(subject), .int(max(0, limit))]
                ) { try $0.int(0) }
            } else {
                versions = try db.query(
                    "SELECT version FROM set_version WHERE set_name = $1 ORDER BY version DESC LIMIT $2",
                    [.text(set), .int(max(0, limit))]
                ) { try $0.int(0) }
            }
            let infos = try versionInfos(set: set, versions: versions, db)
            return try versions.map { version in
                guard let info = infos[version] else {
                    throw StoreError.corrupt("version \(version) of flag set \"\(set)\" has changes but no record")
                }
                return info
            }
        }
    }

    package func changes(set: String, since base: Int) throws -> SetChanges {
        try read("reading the changes of flag set \"\(set)\" since version \(base)") { db in
            let (current, createdAt, digest) = try versionRecord(set: set, version: nil, db)
            // Bounded by the version just read, so that a version written meanwhile by another server is left
            // for the next call instead of mixing into this one.
            var items: [ItemKey: [UInt8]?] = [:]
            _ = try db.query(
                """
                SELECT DISTINCT ON (kind, item_key) kind, item_key, body FROM item_change
                WHERE set_name = $1 AND version > $2 AND version <= $3
                ORDER BY kind, item_key, version DESC
                """,
                [.text(set), .int(base), .int(current)]
            ) { row in
                items[ItemKey(try Self.kind(row, 0), try row.text(1))] = .some(try row.optionalBytes(2))
            }
            return SetChanges(set: set, version: current, createdAt: createdAt, digest: digest, items: items)
        }
    }

    /// The number, time and digest of version `version` of the set, or of its current version when `nil`.
    private func versionRecord(set: String, version: Int?, _ db: PostgresConnection) throws -> (
        version: Int, createdAt: Date, digest: [UInt8]
    ) {
        let found = try db.queryFirst(
            """
            SELECT s.current_version, v.version, \(Self.microseconds(of: "v.created_at")), v.digest
            FROM flag_set AS s
            LEFT JOIN set_version AS v ON v.set_name = s.name AND v.version = coalesce($2, s.current_version)
            WHERE s.name = $1
            """,
            [.text(set), .int(version)]
        ) { row in
            (
                current: try row.int(0), version: try row.optionalInt(1), createdAt: try row.optionalInt64(2),
                digest: try row.optionalBytes(3)
            )
        }
        guard let found else {
            throw StoreError.notFound(set: set)
        }
        guard let number = found.version, let createdAt = found.createdAt, let digest = found.digest else {
            guard version != nil else {
                throw StoreError.corrupt(
                    "flag set \"\(set)\" has no record of its current version \(found.current)")
            }
            throw StoreError.notFound(set: set, version: version ?? found.current)
        }
        return (number, Self.date(microseconds: createdAt), digest)
    }

    /// Writes version `version`: its audit record, its row, one row per changed item (nothing per unchanged one),
    /// and the notification, which the other servers receive when the transaction commits.
    private func insertVersion(
        set: String, version: Int, change: VersionChange, digest: [UInt8], audit: AuditRecord,
        _ db: PostgresConnection
    ) throws -> VersionInfo {
        var record = audit
        record.version = version
        let auditID = try db.insertAudit(record, set: set)
        try db.execute(
            """
            INSERT INTO set_version (set_name, version, created_at, digest, audit_id)
            VALUES ($1, $2, \(Self.time(3)), $4, $5)
            """,
            [.text(set), .int(version), Self.microseconds(audit.time), .bytes(digest), .int(auditID)])
        let changed = change.items.keys.sorted()
        // Several rows a statement, far below the limit of 65,535 parameters.
        for start in stride(from: 0, to: changed.count, by: 1000) {
            var arguments: [PostgresValue] = [.text(set), .int(version)]
            var rows: [String] = []
            for item in changed[start..<min(start + 1000, changed.count)] {
                let first = arguments.count + 1
                rows.append("($1, $2, $\(first), $\(first + 1), $\(first + 2))")
                let body = change.items[item] ?? nil
                arguments += [.text(item.kind.rawValue), .text(item.key), body.map { .bytes($0) } ?? .null]
            }
            try db.execute(
                "INSERT INTO item_change (set_name, version, kind, item_key, body) VALUES "
                    + rows.joined(separator: ", "),
                arguments)
        }
        try db.announce(.set(set, version: version))
        return VersionInfo(
            set: set, version: version, createdAt: audit.time, digest: digest, audit: record, changed: changed)
    }

    /// The records of the given versions of the set that exist, by version: three queries for any number.
    private func versionInfos(set: String, versions: [Int], _ db: PostgresConnection) throws -> [Int: VersionInfo] {
        guard !versions.isEmpty else { return [:] }
        let list = PostgresValue.text("{" + versions.map(String.init).joined(separator: ",") + "}")
        var changed: [Int: [ItemKey]] = [:]
        _ = try db.query(
            "SELECT version, kind, item_key FROM item_change WHERE set_name = $1 AND version = ANY ($2::int8[])",
            [.text(set), list]
        ) { row in
            changed[try row.int(0), default: []].append(ItemKey(try Self.kind(row, 1), try row.text(2)))
        }
        let infos = try db.query(
            """
            SELECT v.version, \(Self.microseconds(of: "v.created_at")), v.digest,
                a.actor, a.action, a.reason, a.subject, \(Self.microseconds(of: "a.time")), a.version
            FROM set_version AS v JOIN audit AS a ON a.id = v.audit_id
            WHERE v.set_name = $1 AND v.version = ANY ($2::int8[])
            """,
            [.text(set), list]
        ) { row in
            let version = try row.int(0)
            return VersionInfo(
                set: set, version: version, createdAt: Self.date(microseconds: try row.int64(1)),
                digest: try row.bytes(2), audit: try AuditStore.record(row, from: 3),
                changed: (changed[version] ?? []).sorted())
        }
        return Dictionary(infos.map { ($0.version, $0) }, uniquingKeysWith: { first, _ in first })
    }

    static func kind(_ row: PostgresRow, _ column: Int) throws -> ItemKind {
        let text = try row.text(column)
        guard let kind = ItemKind(rawValue: text) else {
            throw StoreError.corrupt("an item change has the unknown kind \"\(text)\"")
        }
        return kind
    }
}
