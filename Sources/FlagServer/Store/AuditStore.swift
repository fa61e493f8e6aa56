import FlagAPI
import Foundation

/// The audit log: one concern of the store, written once for SQLite and PostgreSQL over `SQLExecutor`. Versions and
/// tokens write their records through `SQLExecutor.insertAudit` in their own transactions.
package struct AuditStore: Sendable {
    let database: any SQLStore

    /// The audit concern of `database`.
    package init(_ database: any SQLStore) {
        self.database = database
    }

    /// Audit records, newest first, at most `limit`, that `filter` lets through: those of one set, or of the whole
    /// log when `set` is `nil`.
    package func records(set: String?, filter: AuditFilter = AuditFilter(), limit: Int) throws -> [AuditEntry] {
        try database.reading("reading the audit log") { db in
            if let set, try db.currentVersion(of: set) == nil {
                throw StoreError.notFound(set: set)
            }
            var conditions: [String] = []
            var arguments: [SQLValue] = []
            /// Binds `value` and returns its parameter number.
            func bind(_ value: SQLValue) -> Int {
                arguments.append(value)
                return arguments.count
            }
            if let set {
                conditions.append("set_name = $\(bind(.text(set)))")
            }
            if let sets = filter.sets {
                let parameters = sets.sorted().map { "$\(bind(.text($0)))" }
                conditions.append(parameters.isEmpty ? "1 = 0" : "set_name IN (\(parameters.joined(separator: ", ")))")
            }
            if let actor = filter.actor {
                conditions.append("actor = $\(bind(.text(actor)))")
            }
            if let subject = filter.subject {
                conditions.append("subject = $\(bind(.text(subject)))")
            }
            if let since = filter.since {
                conditions.append("time >= \(db.dialect.time(bind(.time(since))))")
            }
            if let until = filter.until {
                conditions.append("time < \(db.dialect.time(bind(.time(until))))")
            }
            let clause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let limitParameter = bind(.integer(max(0, limit)))
            return try db.rows(
                """
                SELECT actor, action, reason, subject, \(db.dialect.microseconds(of: "time")), version FROM audit
                \(clause) ORDER BY id DESC LIMIT $\(limitParameter)
                """,
                arguments
            ) { try Self.record($0, from: 0) }
        }
    }

    /// Records an action that makes no version (an SDK key created, a token revoked), under a set or none.
    package func record(_ record: AuditEntry, set: String?) throws {
        try database.writing("recording an audit record") { db in
            if let set, try db.currentVersion(of: set) == nil {
                throw StoreError.notFound(set: set)
            }
            try db.insertAudit(record, set: set)
        }
    }

    /// The audit record in the six columns from `first` on: actor, action, reason, subject, time (selected with
    /// `SQLDialect.microseconds(of:)`), version.
    static func record(_ row: any SQLRow, from first: Int) throws -> AuditEntry {
        AuditEntry(
            time: try row.date(first + 4),
            actor: try row.text(first),
            action: try row.text(first + 1),
            subject: try row.optionalText(first + 3),
            reason: try row.optionalText(first + 2),
            version: try row.optionalInt(first + 5)
        )
    }
}

extension SQLExecutor {
    /// Appends `record` to the audit log, in the caller's transaction, and returns its id. The webhook events the
    /// record tells of (with `detail`) are queued in the same transaction.
    @discardableResult
    package func insertAudit(_ record: AuditEntry, set: String?, detail: EventDetail = .none) throws -> Int64 {
        let id = try firstRow(
            """
            INSERT INTO audit (set_name, actor, action, reason, subject, time, version)
            VALUES ($1, $2, $3, $4, $5, \(dialect.time(6)), $7) RETURNING id
            """,
            [
                .text(set), .text(record.actor), .text(record.action), .text(record.reason), .text(record.subject),
                .time(record.time), .integer(record.version),
            ]
        ) { try $0.int64(0) }
        guard let id else {
            throw StoreError.corrupt("the audit log returned no id for a new record")
        }
        try insertEvents(for: record, set: set, detail: detail)
        return id
    }

    /// The set's current version, or `nil` for a set that does not exist.
    package func currentVersion(of set: String) throws -> Int? {
        try firstRow("SELECT current_version FROM flag_set WHERE name = $1", [.text(set)]) { try $0.int(0) }
    }
}
