import FlagSQLite
import Foundation

extension SQLiteFlagStore {
    package func audit(set: String?, filter: AuditFilter, limit: Int) throws -> [AuditRecord] {
        try read("reading the audit log") { db in
            if let set, try currentVersion(of: set, db) == nil {
                throw StoreError.notFound(set: set)
            }
            var conditions: [String] = []
            var arguments: [SQLiteValue] = []
            if let set {
                conditions.append("set_name = ?")
                arguments.append(.text(set))
            }
            if let sets = filter.sets {
                conditions.append("set_name IN (\(sets.map { _ in "?" }.joined(separator: ", ")))")
                arguments += sets.sorted().map { .text($0) }
            }
            if let actor = filter.actor {
                conditions.append("actor = ?")
                arguments.append(.text(actor))
            }
            if let subject = filter.subject {
                conditions.append("subject = ?")
                arguments.append(.text(subject))
            }
            if let since = filter.since {
                conditions.append("time >= ?")
                arguments.append(Self.microseconds(since))
            }
            if let until = filter.until {
                conditions.append("time < ?")
                arguments.append(Self.microseconds(until))
            }
            let clause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            return try db.query(
                "SELECT actor, action, reason, subject, time, version FROM audit \(clause) ORDER BY id DESC LIMIT ?",
                arguments + [.init(max(0, limit))]
            ) { try Self.auditRecord($0, from: 0) }
        }
    }

    package func recordAudit(_ record: AuditRecord, set: String?) throws {
        try write("recording an audit record") { db in
            if let set, try currentVersion(of: set, db) == nil {
                throw StoreError.notFound(set: set)
            }
            _ = try insertAudit(record, set: set, db)
        }
    }

    package func tokens() throws -> [StoredToken] {
        try read("listing tokens") { db in
            var scopes: [String: [String]] = [:]
            _ = try db.query("SELECT token_name, set_name FROM token_scope ORDER BY token_name, set_name") { row in
                scopes[try row.text(0), default: []].append(try row.text(1))
            }
            return try db.query(
                """
                SELECT name, hash, role, role_set, access, created_at, expires_at, last_used_at, revoked_at, session_of
                FROM token ORDER BY created_at, name
                """
            ) { row in
                let name = try row.text(0)
                let role: TokenRole
                switch (try row.text(2), try row.optionalText(3), try row.optionalText(4).flatMap(AdminRole.init)) {
                case ("admin", nil, let access?): role = .admin(access, sets: scopes[name])
                case ("sdk", let set?, nil): role = .sdk(set: set)
                case (let other, _, _): throw StoreError.corrupt("token \(name) has the bad role \"\(other)\"")
                }
                func date(_ column: Int) throws -> Date? { try row.optionalInt64(column).map(Self.date(microseconds:)) }
                return StoredToken(
                    name: name, hash: try row.blob(1), role: role, createdAt: Self.date(microseconds: try row.int64(5)),
                    expiresAt: try date(6), lastUsedAt: try date(7), revokedAt: try date(8),
                    sessionOf: try row.optionalText(9))
            }
        }
    }

    package func addToken(_ token: StoredToken, audit: AuditRecord) throws {
        try write("adding token \(token.name)") { db in
            let kind: String
            let set: String?
            let access: String?
            var scope: [String] = []
            switch token.role {
            case .admin(let role, let sets):
                (kind, set, access, scope) = ("admin", nil, role.rawValue, sets ?? [])
            case .sdk(let name):
                (kind, set, access) = ("sdk", name, nil)
            }
            if let set, try currentVersion(of: set, db) == nil {
                throw StoreError.notFound(set: set)
            }
            let taken = try db.queryFirst(
                "SELECT 1 FROM token WHERE name = ? OR hash = ?", [.text(token.name), .blob(token.hash)]
            ) { _ in true }
            guard taken == nil else {
                throw StoreError.alreadyExists("a token named \(token.name) or with the same secret")
            }
            try db.execute(
                """
                INSERT INTO token (name, hash, role, role_set, access, session_of, created_at, expires_at, revoked_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(token.name), .blob(token.hash), .text(kind), .init(set), .init(access),
                    .init(token.sessionOf), Self.microseconds(token.createdAt),
                    token.expiresAt.map(Self.microseconds) ?? .null, token.revokedAt.map(Self.microseconds) ?? .null,
                ]
            )
            for name in scope {
                try db.execute(
                    "INSERT INTO token_scope (token_name, set_name) VALUES (?, ?)", [.text(token.name), .text(name)])
            }
            _ = try insertAudit(audit, set: set, db)
        }
    }

    package func revokeToken(name: String, at time: Date, audit: AuditRecord) throws -> Bool {
        try write("revoking token \(name)") { db in
            try db.execute(
                "UPDATE token SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
                [Self.microseconds(time), .text(name)]
            )
            guard db.changes == 1 else { return false }
            try db.execute(
                "UPDATE token SET revoked_at = ? WHERE session_of = ? AND revoked_at IS NULL",
                [Self.microseconds(time), .text(name)]
            )
            let set = try db.queryFirst("SELECT role_set FROM token WHERE name = ?", [.text(name)]) {
                try $0.optionalText(0)
            }
            _ = try insertAudit(audit, set: set ?? nil, db)
            return true
        }
    }

    package func recordTokenUses(_ uses: [String: Date]) throws {
        guard !uses.isEmpty else { return }
        try write("recording token uses") { db in
            for (name, time) in uses.sorted(by: { $0.key < $1.key }) {
                try db.execute(
                    "UPDATE token SET last_used_at = max(coalesce(last_used_at, 0), ?) WHERE name = ?",
                    [Self.microseconds(time), .text(name)]
                )
            }
        }
    }

    package func tokenRevision() throws -> Int {
        // Moved by the database's own triggers (migration 5).
        try read("reading the token revision") { db in
            try db.queryFirst("SELECT value FROM token_revision") { try $0.int(0) } ?? 0
        }
    }

    package func deleteSessions(endedBefore before: Date) throws -> Int {
        try write("deleting ended sessions") { db in
            let ended = """
                SELECT name FROM token WHERE session_of IS NOT NULL
                AND (revoked_at < ?1 OR (revoked_at IS NULL AND expires_at < ?1))
                """
            let arguments = [Self.microseconds(before)]
            try db.execute("DELETE FROM token_scope WHERE token_name IN (\(ended))", arguments)
            try db.execute("DELETE FROM token WHERE name IN (\(ended))", arguments)
            return db.changes
        }
    }

    /// Appends `record` to the audit log and returns its row id.
    func insertAudit(_ record: AuditRecord, set: String?, _ db: SQLiteConnection) throws -> Int64 {
        try db.execute(
            "INSERT INTO audit (set_name, actor, action, reason, subject, time, version) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                .init(set), .text(record.actor), .text(record.action), .init(record.reason), .init(record.subject),
                Self.microseconds(record.time), .init(record.version),
            ]
        )
        return db.lastInsertRowID
    }

    /// The audit record in the six columns from `first` on: actor, action, reason, subject, time, version.
    static func auditRecord(_ row: SQLiteRow, from first: Int) throws -> AuditRecord {
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
