import FlagCore
import FlagSQLite
import Foundation

extension FlagCache {
    /// The frozen values of persisted session `id` for `unitID`, opening the session if it is new, expired (older
    /// than `ttl` seconds) or belonged to another unit.
    func resumeSession(id: String, set: String, unitID: String, now: Date, ttl: Double) throws
        -> [String: EvaluationDetail<JSONValue>]
    {
        try healingWrite(now: now) { db in
            let existing = try db.queryFirst(
                "SELECT unit_id, created_at FROM session WHERE id = ? AND set_name = ?", [.text(id), .text(set)]
            ) { row in (unit: try row.text(0), createdAt: try row.double(1)) }
            if let existing, existing.unit == unitID, now.timeIntervalSince1970 - existing.createdAt < ttl {
                return try Self.sessionValues(id: id, db)
            }
            try db.execute("DELETE FROM session WHERE id = ?", [.text(id)])
            try db.execute(
                "INSERT INTO session (id, set_name, unit_id, created_at) VALUES (?, ?, ?, ?)",
                [.text(id), .text(set), .text(unitID), .real(now.timeIntervalSince1970)])
            return [:]
        }
    }

    /// The frozen values stored for session `id`.
    static func sessionValues(id: String, _ db: SQLiteConnection) throws -> [String: EvaluationDetail<JSONValue>] {
        let rows = try db.query(
            "SELECT flag, value, reason, variant, error_code, version FROM session_value WHERE session_id = ?",
            [.text(id)]
        ) { row in
            (
                key: try row.text(0), value: try row.blob(1), reason: try row.text(2),
                variant: try row.optionalText(3), errorCode: try row.optionalText(4),
                version: try row.optionalInt(5)
            )
        }
        var frozen: [String: EvaluationDetail<JSONValue>] = [:]
        for row in rows {
            // A value that no longer parses is dropped on purpose: the flag is evaluated afresh instead.
            guard let value = try? JSONReader.parse(row.value) else { continue }
            frozen[row.key] = EvaluationDetail(
                value: value, reason: Reason(rawValue: row.reason), variant: row.variant,
                errorCode: row.errorCode.map(ErrorCode.init(rawValue:)), version: row.version)
        }
        return frozen
    }

    /// Records the frozen values of a persisted session (insert or replace, e.g. when a kill replaces one).
    func saveSessionValues(id: String, values: [(key: String, detail: EvaluationDetail<JSONValue>)], now: Date)
        throws
    {
        try healingWrite(now: now) { db in
            for (key, detail) in values {
                var writer = JSONWriter()
                writer.value(detail.value)
                try db.execute(
                    """
                    INSERT OR REPLACE INTO session_value
                        (session_id, flag, value, reason, variant, error_code, version, frozen_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .text(id), .text(key), .blob(writer.bytes), .text(detail.reason.rawValue),
                        .init(detail.variant), .init(detail.errorCode?.rawValue), .init(detail.version),
                        .real(now.timeIntervalSince1970),
                    ])
            }
        }
    }

    /// Deletes sessions created `ttl` seconds or more before `now`; returns how many.
    @discardableResult
    func deleteExpiredSessions(now: Date, ttl: Double) throws -> Int {
        try healingWrite(now: now) { db in
            try db.execute("DELETE FROM session WHERE created_at <= ?", [.real(now.timeIntervalSince1970 - ttl)])
            return db.changes
        }
    }

    /// The overrides set through the API for `set`: flag key → text.
    func overrides(set: String) throws -> [String: String] {
        try database.read { db in
            let rows = try db.query("SELECT flag, value FROM local_override WHERE set_name = ?", [.text(set)]) {
                (try $0.text(0), try $0.text(1))
            }
            return Dictionary(rows, uniquingKeysWith: { _, last in last })
        }
    }

    /// Sets (or with `nil` clears) an API override.
    func setOverride(set: String, key: String, text: String?) throws {
        guard !readOnly else { throw CacheDamage(message: "the flag cache at \(path) is open read-only") }
        try database.write { db in
            if let text {
                try db.execute(
                    "INSERT OR REPLACE INTO local_override (set_name, flag, value) VALUES (?, ?, ?)",
                    [.text(set), .text(key), .text(text)])
            } else {
                try db.execute(
                    "DELETE FROM local_override WHERE set_name = ? AND flag = ?", [.text(set), .text(key)])
            }
        }
    }
}
