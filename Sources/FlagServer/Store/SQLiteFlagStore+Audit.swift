import FlagSQLite
import Foundation

extension SQLiteFlagStore {
    public func audit(set: String?, limit: Int) throws -> [AuditRecord] {
        try read("reading the audit log") { db in
            let columns = "actor, action, reason, subject, time, version"
            if let set {
                guard try currentVersion(of: set, db) != nil else {
                    throw StoreError.notFound(set: set)
                }
                return try db.query(
                    "SELECT \(columns) FROM audit WHERE set_name = ? ORDER BY id DESC LIMIT ?",
                    [.text(set), .init(max(0, limit))]
                ) { try Self.auditRecord($0, from: 0) }
            }
            return try db.query("SELECT \(columns) FROM audit ORDER BY id DESC LIMIT ?", [.init(max(0, limit))]) {
                try Self.auditRecord($0, from: 0)
            }
        }
    }

    public func recordAudit(_ record: AuditRecord, set: String?) throws {
        try write("recording an audit record") { db in
            if let set, try currentVersion(of: set, db) == nil {
                throw StoreError.notFound(set: set)
            }
            _ = try insertAudit(record, set: set, db)
        }
    }

    public func tokens() throws -> [StoredToken] {
        try read("listing tokens") { db in
            try db.query(
                "SELECT name, hash, role, role_set, created_at, revoked_at FROM token ORDER BY created_at, name"
            ) { row in
                let role: TokenRole
                switch (try row.text(2), try row.optionalText(3)) {
                case ("admin", nil): role = .admin
                case ("sdk", let set?): role = .sdk(set: set)
                case (let other, _): throw StoreError.corrupt("token \(try row.text(0)) has the bad role \"\(other)\"")
                }
                return StoredToken(
                    name: try row.text(0),
                    hash: try row.blob(1),
                    role: role,
                    createdAt: Self.date(microseconds: try row.int64(4)),
                    revokedAt: try row.optionalInt64(5).map { Self.date(microseconds: $0) }
                )
            }
        }
    }

    public func addToken(_ token: StoredToken, audit: AuditRecord) throws {
        try write("adding token \(token.name)") { db in
            let set: String?
            switch token.role {
            case .admin: set = nil
            case .sdk(let name): set = name
            }
            if let set, try currentVersion(of: set, db) == nil {
                throw StoreError.notFound(set: set)
            }
            let taken = try db.queryFirst(
                "SELECT 1 FROM token WHERE name = ? OR hash = ?",
                [
                    .text(token.name), .blob(token.hash),
                ]
            ) { _ in true }
            guard taken == nil else {
                throw StoreError.alreadyExists("a token named \(token.name) or with the same secret")
            }
            try db.execute(
                "INSERT INTO token (name, hash, role, role_set, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    .text(token.name), .blob(token.hash), .text(set == nil ? "admin" : "sdk"), .init(set),
                    Self.microseconds(token.createdAt), token.revokedAt.map(Self.microseconds) ?? .null,
                ]
            )
            _ = try insertAudit(audit, set: set, db)
        }
    }

    public func revokeToken(name: String, at time: Date, audit: AuditRecord) throws -> Bool {
        try write("revoking token \(name)") { db in
            try db.execute(
                "UPDATE token SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
                [Self.microseconds(time), .text(name)]
            )
            guard db.changes == 1 else { return false }
            let set = try db.queryFirst("SELECT role_set FROM token WHERE name = ?", [.text(name)]) {
                try $0.optionalText(0)
            }
            _ = try insertAudit(audit, set: set ?? nil, db)
            return true
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
