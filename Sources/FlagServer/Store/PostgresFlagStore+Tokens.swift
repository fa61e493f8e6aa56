import FlagPostgres
import Foundation

extension PostgresFlagStore {
    /// One query, so that a token and its scope are read from one snapshot: a token limited to some sets is
    /// never seen, even for a moment, without its limits.
    package func tokens() throws -> [StoredToken] {
        try read("listing tokens") { db in
            let result = try db.execute(
                """
                SELECT t.name, t.hash, t.role, t.role_set, t.access, \(Self.microseconds(of: "t.created_at")),
                    \(Self.microseconds(of: "t.expires_at")), \(Self.microseconds(of: "t.last_used_at")),
                    \(Self.microseconds(of: "t.revoked_at")), t.session_of, s.set_name
                FROM token AS t LEFT JOIN token_scope AS s ON s.token_name = t.name
                ORDER BY t.created_at, t.name, s.set_name
                """)
            var tokens: [StoredToken] = []
            var scopes: [[String]] = []
            for index in 0..<result.count {
                let row = result[index]
                if try tokens.last?.name != row.text(0) {
                    tokens.append(try Self.token(row))
                    scopes.append([])
                }
                if let set = try row.optionalText(10) {
                    scopes[scopes.count - 1].append(set)
                }
            }
            return zip(tokens, scopes).map { token, sets in
                guard case .admin(let access, _) = token.role, !sets.isEmpty else { return token }
                var scoped = token
                scoped.role = .admin(access, sets: sets)
                return scoped
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
            // `ON CONFLICT DO NOTHING` covers the name and the hash, and another server adding either meanwhile.
            let added = try db.execute(
                """
                INSERT INTO token (name, hash, role, role_set, access, session_of, created_at, expires_at, revoked_at)
                VALUES ($1, $2, $3, $4, $5, $6, \(Self.time(7)), \(Self.time(8)), \(Self.time(9)))
                ON CONFLICT DO NOTHING
                """,
                [
                    .text(token.name), .bytes(token.hash), .text(kind), .text(set), .text(access),
                    .text(token.sessionOf), Self.microseconds(token.createdAt), Self.microseconds(token.expiresAt),
                    Self.microseconds(token.revokedAt),
                ])
            guard added.affectedRows == 1 else {
                throw StoreError.alreadyExists("a token named \(token.name) or with the same secret")
            }
            for name in scope {
                try db.execute(
                    "INSERT INTO token_scope (token_name, set_name) VALUES ($1, $2)",
                    [.text(token.name), .text(name)])
            }
            _ = try insertAudit(audit, set: set, db)
            try notify(.tokens, db)
        }
    }

    package func revokeToken(name: String, at time: Date, audit: AuditRecord) throws -> Bool {
        try write("revoking token \(name)") { db in
            // A concurrent revocation waits for this one, then finds the token revoked and returns `false`.
            guard
                let set = try db.queryFirst(
                    """
                    UPDATE token SET revoked_at = \(Self.time(1)) WHERE name = $2 AND revoked_at IS NULL
                    RETURNING role_set
                    """,
                    [Self.microseconds(time), .text(name)],
                    { try $0.optionalText(0) })
            else {
                return false
            }
            try db.execute(
                "UPDATE token SET revoked_at = \(Self.time(1)) WHERE session_of = $2 AND revoked_at IS NULL",
                [Self.microseconds(time), .text(name)])
            _ = try insertAudit(audit, set: set, db)
            try notify(.tokens, db)
            return true
        }
    }

    /// One statement a token, in the order of their names, so that two servers recording the same tokens lock
    /// their rows in the same order.
    package func recordTokenUses(_ uses: [String: Date]) throws {
        guard !uses.isEmpty else { return }
        try write("recording token uses") { db in
            for (name, time) in uses.sorted(by: { $0.key < $1.key }) {
                try db.execute(
                    "UPDATE token SET last_used_at = greatest(last_used_at, \(Self.time(1))) WHERE name = $2",
                    [Self.microseconds(time), .text(name)])
            }
        }
    }

    package func tokenRevision() throws -> Int {
        // Moved by the database's own trigger (migration 4).
        try read("reading the token revision") { db in
            try db.queryFirst("SELECT value FROM token_revision") { try $0.int(0) } ?? 0
        }
    }

    package func deleteSessions(endedBefore before: Date) throws -> Int {
        try write("deleting ended sessions") { db in
            let ended = """
                SELECT name FROM token WHERE session_of IS NOT NULL
                AND (revoked_at < \(Self.time(1)) OR (revoked_at IS NULL AND expires_at < \(Self.time(1))))
                """
            let arguments = [Self.microseconds(before)]
            try db.execute("DELETE FROM token_scope WHERE token_name IN (\(ended))", arguments)
            return try db.execute("DELETE FROM token WHERE name IN (\(ended))", arguments).affectedRows
        }
    }

    /// The token in the columns of `tokens()`, without its scope.
    private static func token(_ row: PostgresRow) throws -> StoredToken {
        let name = try row.text(0)
        let role: TokenRole
        switch (try row.text(2), try row.optionalText(3), try row.optionalText(4).flatMap(AdminRole.init)) {
        case ("admin", nil, let access?): role = .admin(access, sets: nil)
        case ("sdk", let set?, nil): role = .sdk(set: set)
        case (let other, _, _): throw StoreError.corrupt("token \(name) has the bad role \"\(other)\"")
        }
        func date(_ column: Int) throws -> Date? { try row.optionalInt64(column).map(Self.date(microseconds:)) }
        return StoredToken(
            name: name, hash: try row.bytes(1), role: role, createdAt: Self.date(microseconds: try row.int64(5)),
            expiresAt: try date(6), lastUsedAt: try date(7), revokedAt: try date(8),
            sessionOf: try row.optionalText(9))
    }
}
