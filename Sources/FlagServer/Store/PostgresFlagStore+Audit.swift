import FlagPostgres
import Foundation

extension PostgresFlagStore {
    package func audit(set: String?, filter: AuditFilter, limit: Int) throws -> [AuditRecord] {
        try read("reading the audit log") { db in
            if let set, try currentVersion(of: set, db) == nil {
                throw StoreError.notFound(set: set)
            }
            var conditions: [String] = []
            var arguments: [PostgresValue] = []
            /// Binds `value` and returns its parameter number.
            func bind(_ value: PostgresValue) -> Int {
                arguments.append(value)
                return arguments.count
            }
            if let set {
                conditions.append("set_name = $\(bind(.text(set)))")
            }
            if let sets = filter.sets {
                let parameters = sets.sorted().map { "$\(bind(.text($0)))" }
                conditions.append(
                    parameters.isEmpty ? "false" : "set_name IN (\(parameters.joined(separator: ", ")))")
            }
            if let actor = filter.actor {
                conditions.append("actor = $\(bind(.text(actor)))")
            }
            if let subject = filter.subject {
                conditions.append("subject = $\(bind(.text(subject)))")
            }
            if let since = filter.since {
                conditions.append("time >= \(Self.time(bind(Self.microseconds(since))))")
            }
            if let until = filter.until {
                conditions.append("time < \(Self.time(bind(Self.microseconds(until))))")
            }
            let clause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let limitParameter = bind(.int(max(0, limit)))
            return try db.query(
                """
                SELECT actor, action, reason, subject, \(Self.microseconds(of: "time")), version FROM audit
                \(clause) ORDER BY id DESC LIMIT $\(limitParameter)
                """,
                arguments
            ) { try Self.auditRecord($0, from: 0) }
        }
    }

    package func recordAudit(_ record: AuditRecord, set: String?) throws {
        // No transaction: sets are never deleted, so one that exists now still does when the record goes in.
        try read("recording an audit record") { db in
            if let set, try currentVersion(of: set, db) == nil {
                throw StoreError.notFound(set: set)
            }
            _ = try insertAudit(record, set: set, db)
        }
    }

    /// Appends `record` to the audit log and returns its id.
    func insertAudit(_ record: AuditRecord, set: String?, _ db: PostgresConnection) throws -> Int64 {
        let id = try db.queryFirst(
            """
            INSERT INTO audit (set_name, actor, action, reason, subject, time, version)
            VALUES ($1, $2, $3, $4, $5, \(Self.time(6)), $7) RETURNING id
            """,
            [
                .text(set), .text(record.actor), .text(record.action), .text(record.reason),
                .text(record.subject), Self.microseconds(record.time), .int(record.version),
            ]
        ) { try $0.int64(0) }
        guard let id else {
            throw StoreError.corrupt("the audit log returned no id for a new record")
        }
        return id
    }

    /// The audit record in the six columns from `first` on: actor, action, reason, subject, time (microseconds),
    /// version.
    static func auditRecord(_ row: PostgresRow, from first: Int) throws -> AuditRecord {
        AuditRecord(
            actor: try row.text(first),
            action: try row.text(first + 1),
            reason: try row.optionalText(first + 2),
            subject: try row.optionalText(first + 3),
            time: date(microseconds: try row.int64(first + 4)),
            version: try row.optionalInt(first + 5)
        )
    }
}
