import FlagAPI
import Foundation

/// Client instances and evaluation counts (docs/telemetry.md): one concern of the store, written once for SQLite
/// and PostgreSQL over `SQLExecutor`, and shared by every replica.
package struct TelemetryStore: Sendable {
    let database: any SQLStore

    /// The telemetry concern of `database`.
    package init(_ database: any SQLStore) {
        self.database = database
    }

    /// Writes a flush of telemetry in one transaction: instances replace those of the same set and id, counts add
    /// to those of the same set, flag, variant and hour.
    package func record(_ batch: TelemetryBatch) throws {
        guard !batch.isEmpty else { return }
        try database.writing("recording telemetry") { db in
            let time = db.dialect.time
            for instance in batch.instances {
                try db.run(
                    """
                    INSERT INTO client_instance (set_name, id, first_seen, last_seen, report, applied, key_name)
                    VALUES ($1, $2, \(time(3)), \(time(4)), $5, $6, $7)
                    ON CONFLICT (set_name, id) DO UPDATE SET first_seen = excluded.first_seen,
                        last_seen = excluded.last_seen, report = excluded.report, applied = excluded.applied,
                        key_name = excluded.key_name
                    """,
                    [
                        .text(instance.set), .text(instance.id), .time(instance.firstSeen), .time(instance.lastSeen),
                        instance.report.map { .bytes($0) } ?? .null, .text(instance.appliedText), .text(instance.key),
                    ])
            }
            for count in batch.counts {
                try db.run(
                    """
                    INSERT INTO evaluation_count (set_name, flag, variant, hour, count, last_at)
                    VALUES ($1, $2, $3, $4, $5, \(time(6)))
                    ON CONFLICT (set_name, flag, hour, variant) DO UPDATE SET
                        count = evaluation_count.count + excluded.count,
                        last_at = \(db.dialect.greater("evaluation_count.last_at", "excluded.last_at"))
                    """,
                    [
                        .text(count.set), .text(count.flag), .text(count.variant), .integer(count.hour),
                        .integer(count.count), .time(count.lastAt),
                    ])
            }
        }
    }

    /// The set's instances seen at or after `since`, by id.
    package func instances(set: String, seenSince since: Date) throws -> [StoredInstance] {
        try database.reading("reading the client instances of \"\(set)\"") { db in
            try db.rows(
                "\(Self.selectInstance(db.dialect)) WHERE set_name = $1 AND last_seen >= \(db.dialect.time(2)) ORDER BY id",
                [.text(set), .time(since)], Self.instance)
        }
    }

    /// One instance of the set, if it was seen at or after `since`.
    package func instance(set: String, id: String, seenSince since: Date) throws -> StoredInstance? {
        try database.reading("reading a client instance of \"\(set)\"") { db in
            try db.firstRow(
                "\(Self.selectInstance(db.dialect)) WHERE set_name = $1 AND id = $2 AND last_seen >= \(db.dialect.time(3))",
                [.text(set), .text(id), .time(since)], Self.instance)
        }
    }

    /// The set's counts from the hour `fromHour` on (whole hours since 1970), of one flag or of all.
    package func usage(set: String, flag: String?, fromHour: Int) throws -> [UsageCount] {
        try database.reading("reading the evaluation counts of \"\(set)\"") { db in
            try db.rows(
                """
                SELECT flag, variant, hour, count, \(db.dialect.microseconds(of: "last_at")) FROM evaluation_count
                WHERE set_name = $1 AND hour >= $2 \(flag == nil ? "" : "AND flag = $3") ORDER BY flag, hour, variant
                """,
                [.text(set), .integer(fromHour)] + (flag.map { [.text($0)] } ?? [])
            ) { row in
                UsageCount(
                    set: set, flag: try row.text(0), variant: try row.text(1), hour: try row.int(2),
                    count: try row.int(3), lastAt: try row.date(4))
            }
        }
    }

    /// Deletes counts of hours before `countsBefore` and instances last seen before `instancesBefore`.
    package func prune(countsBefore: Int, instancesBefore: Date) throws {
        try database.writing("pruning telemetry") { db in
            try db.run("DELETE FROM evaluation_count WHERE hour < $1", [.integer(countsBefore)])
            try db.run(
                "DELETE FROM client_instance WHERE last_seen < \(db.dialect.time(1))", [.time(instancesBefore)])
        }
    }

    /// The columns `instance(_:)` reads.
    private static func selectInstance(_ dialect: SQLDialect) -> String {
        """
        SELECT set_name, id, \(dialect.microseconds(of: "first_seen")), \(dialect.microseconds(of: "last_seen")),
            report, applied, key_name
        FROM client_instance
        """
    }

    /// The instance in the columns of `selectInstance`.
    private static func instance(_ row: any SQLRow) throws -> StoredInstance {
        StoredInstance(
            set: try row.text(0), id: try row.text(1), firstSeen: try row.date(2), lastSeen: try row.date(3),
            report: try row.optionalBytes(4), applied: StoredInstance.applied(fromText: try row.text(5)),
            key: try row.optionalText(6))
    }
}

/// A set's settings (docs/telemetry.md): one concern of the store, written once over `SQLExecutor`.
package struct SettingsStore: Sendable {
    let database: any SQLStore

    /// The settings concern of `database`.
    package init(_ database: any SQLStore) {
        self.database = database
    }

    /// The set's settings; the defaults for a set that has none stored.
    package func read(set: String) throws -> SetSettings {
        try database.reading("reading the settings of \"\(set)\"") { db in
            guard try db.currentVersion(of: set) != nil else { throw StoreError.notFound(set: set) }
            let pairs = try db.rows("SELECT name, value FROM set_setting WHERE set_name = $1", [.text(set)]) {
                (try $0.text(0), try $0.text(1))
            }
            return SetSettings(stored: Dictionary(pairs, uniquingKeysWith: { _, last in last }))
        }
    }

    /// Stores the set's settings, atomically with the audit record; `notFound` for a set that does not exist.
    package func update(set: String, _ settings: SetSettings, audit: AuditEntry) throws {
        try database.writing("storing the settings of \"\(set)\"") { db in
            guard try db.currentVersion(of: set) != nil else { throw StoreError.notFound(set: set) }
            for (name, value) in settings.stored.sorted(by: { $0.key < $1.key }) {
                try db.run(
                    """
                    INSERT INTO set_setting (set_name, name, value) VALUES ($1, $2, $3)
                    ON CONFLICT (set_name, name) DO UPDATE SET value = excluded.value
                    """,
                    [.text(set), .text(name), .text(value)])
            }
            try db.insertAudit(audit, set: set)
        }
    }
}
