import FlagPostgres
import Foundation

/// Client instances, evaluation counts and set settings (docs/telemetry.md), shared by every replica.
extension PostgresFlagStore {
    package func recordTelemetry(_ batch: TelemetryBatch) throws {
        guard !batch.isEmpty else { return }
        try write("recording telemetry") { db in
            for instance in batch.instances {
                try db.execute(
                    """
                    INSERT INTO client_instance (set_name, id, first_seen, last_seen, report, applied, key_name)
                    VALUES ($1, $2, \(Self.time(3)), \(Self.time(4)), $5, $6, $7)
                    ON CONFLICT (set_name, id) DO UPDATE SET first_seen = excluded.first_seen,
                        last_seen = excluded.last_seen, report = excluded.report, applied = excluded.applied,
                        key_name = excluded.key_name
                    """,
                    [
                        .text(instance.set), .text(instance.id), Self.microseconds(instance.firstSeen),
                        Self.microseconds(instance.lastSeen), instance.report.map { .bytes($0) } ?? .null,
                        .text(instance.appliedText), instance.key.map { .text($0) } ?? .null,
                    ])
            }
            for count in batch.counts {
                try db.execute(
                    """
                    INSERT INTO evaluation_count (set_name, flag, variant, hour, count, last_at)
                    VALUES ($1, $2, $3, $4, $5, \(Self.time(6)))
                    ON CONFLICT (set_name, flag, hour, variant) DO UPDATE SET
                        count = evaluation_count.count + excluded.count,
                        last_at = greatest(evaluation_count.last_at, excluded.last_at)
                    """,
                    [
                        .text(count.set), .text(count.flag), .text(count.variant), .int(Int64(count.hour)),
                        .int(Int64(count.count)), Self.microseconds(count.lastAt),
                    ])
            }
        }
    }

    package func instances(set: String, seenSince since: Date) throws -> [StoredInstance] {
        try read("reading the client instances of \"\(set)\"") { db in
            try db.query(
                """
                SELECT set_name, id, \(Self.microseconds(of: "first_seen")), \(Self.microseconds(of: "last_seen")),
                    report, applied, key_name
                FROM client_instance WHERE set_name = $1 AND last_seen >= \(Self.time(2)) ORDER BY id
                """,
                [.text(set), Self.microseconds(since)], Self.instance)
        }
    }

    package func instance(set: String, id: String, seenSince since: Date) throws -> StoredInstance? {
        try read("reading a client instance of \"\(set)\"") { db in
            try db.queryFirst(
                """
                SELECT set_name, id, \(Self.microseconds(of: "first_seen")), \(Self.microseconds(of: "last_seen")),
                    report, applied, key_name
                FROM client_instance WHERE set_name = $1 AND id = $2 AND last_seen >= \(Self.time(3))
                """,
                [.text(set), .text(id), Self.microseconds(since)], Self.instance)
        }
    }

    package func usage(set: String, flag: String?, fromHour: Int) throws -> [UsageCount] {
        try read("reading the evaluation counts of \"\(set)\"") { db in
            try db.query(
                """
                SELECT flag, variant, hour, count, \(Self.microseconds(of: "last_at")) FROM evaluation_count
                WHERE set_name = $1 AND hour >= $2 AND ($3::text IS NULL OR flag = $3::text)
                ORDER BY flag, hour, variant
                """,
                [.text(set), .int(Int64(fromHour)), .text(flag)]
            ) { row in
                UsageCount(
                    set: set, flag: try row.text(0), variant: try row.text(1), hour: try row.int(2),
                    count: try row.int(3), lastAt: Self.date(microseconds: try row.int64(4)))
            }
        }
    }

    package func pruneTelemetry(countsBefore: Int, instancesBefore: Date) throws {
        try write("pruning telemetry") { db in
            try db.execute("DELETE FROM evaluation_count WHERE hour < $1", [.int(Int64(countsBefore))])
            try db.execute(
                "DELETE FROM client_instance WHERE last_seen < \(Self.time(1))",
                [Self.microseconds(instancesBefore)])
        }
    }

    package func settings(set: String) throws -> SetSettings {
        try read("reading the settings of \"\(set)\"") { db in
            guard try currentVersion(of: set, db) != nil else { throw StoreError.notFound(set: set) }
            let pairs = try db.query("SELECT name, value FROM set_setting WHERE set_name = $1", [.text(set)]) {
                (try $0.text(0), try $0.text(1))
            }
            return SetSettings(stored: Dictionary(pairs, uniquingKeysWith: { _, last in last }))
        }
    }

    package func updateSettings(set: String, _ settings: SetSettings, audit: AuditRecord) throws {
        try write("storing the settings of \"\(set)\"") { db in
            guard try currentVersion(of: set, db) != nil else { throw StoreError.notFound(set: set) }
            for (name, value) in settings.stored.sorted(by: { $0.key < $1.key }) {
                try db.execute(
                    """
                    INSERT INTO set_setting (set_name, name, value) VALUES ($1, $2, $3)
                    ON CONFLICT (set_name, name) DO UPDATE SET value = excluded.value
                    """,
                    [.text(set), .text(name), .text(value)])
            }
            _ = try insertAudit(audit, set: set, db)
        }
    }

    /// The instance in the columns of `instances(set:seenSince:)`.
    private static func instance(_ row: PostgresRow) throws -> StoredInstance {
        StoredInstance(
            set: try row.text(0), id: try row.text(1), firstSeen: date(microseconds: try row.int64(2)),
            lastSeen: date(microseconds: try row.int64(3)), report: try row.optionalBytes(4),
            applied: StoredInstance.applied(fromText: try row.text(5)), key: try row.optionalText(6))
    }
}
