import FlagAPI
import Foundation

/// API tokens and the dashboard sessions made from them: one concern of the store, written once for SQLite and
/// PostgreSQL over `SQLExecutor`. `TokenAuthority` is its one user.
package struct TokenStore: Sendable {
    let database: any SQLStore

    /// The token concern of `database`.
    package init(_ database: any SQLStore) {
        self.database = database
    }

    /// Every token, revoked ones included, oldest first.
    ///
    /// One query, so that a token and its scope are read from one snapshot: a token limited to some sets is never
    /// seen, even for a moment, without its limits.
    package func all() throws -> [StoredToken] {
        try database.reading("listing tokens") { db in
            let dialect = db.dialect
            var tokens: [StoredToken] = []
            var scopes: [[String]] = []
            _ = try db.rows(
                """
                SELECT t.name, t.hash, t.role, t.role_set, t.access, \(dialect.microseconds(of: "t.created_at")),
                    \(dialect.microseconds(of: "t.expires_at")), \(dialect.microseconds(of: "t.last_used_at")),
                    \(dialect.microseconds(of: "t.revoked_at")), t.session_of, s.set_name
                FROM token AS t LEFT JOIN token_scope AS s ON s.token_name = t.name
                ORDER BY t.created_at, t.name, s.set_name
                """, []
            ) { row in
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

    /// Stores a new token, atomically with its audit record; throws `alreadyExists` for a name or hash in use,
    /// `notFound` for an SDK key of a set that does not exist.
    package func add(_ token: StoredToken, audit: AuditEntry) throws {
        try database.writing("adding token \(token.name)") { db in
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
            if let set, try db.currentVersion(of: set) == nil {
                throw StoreError.notFound(set: set)
            }
            // `ON CONFLICT DO NOTHING` covers the name and the hash, and another server adding either meanwhile.
            let time = db.dialect.time
            let added = try db.run(
                """
                INSERT INTO token (name, hash, role, role_set, access, session_of, created_at, expires_at, revoked_at)
                VALUES ($1, $2, $3, $4, $5, $6, \(time(7)), \(time(8)), \(time(9)))
                ON CONFLICT DO NOTHING
                """,
                [
                    .text(token.name), .bytes(token.hash), .text(kind), .text(set), .text(access),
                    .text(token.sessionOf), .time(token.createdAt), .time(token.expiresAt), .time(token.revokedAt),
                ])
            guard added == 1 else {
                throw StoreError.alreadyExists("a token named \(token.name) or with the same secret")
            }
            for name in scope {
                try db.run(
                    "INSERT INTO token_scope (token_name, set_name) VALUES ($1, $2)", [.text(token.name), .text(name)])
            }
            try db.insertAudit(audit, set: set, detail: .token(role: access ?? kind))
            try db.announce(.tokens)
        }
    }

    /// Revokes the token `name`, and the dashboard sessions made from it, as of `time`, atomically with its audit
    /// record. Returns `false`, recording nothing, when there is no such token or it is already revoked.
    package func revoke(name: String, at time: Date, audit: AuditEntry) throws -> Bool {
        try database.writing("revoking token \(name)") { db in
            // A concurrent revocation waits for this one's row lock, then finds the token revoked.
            let revoke = "UPDATE token SET revoked_at = \(db.dialect.time(1)) WHERE name = $2 AND revoked_at IS NULL"
            guard try db.run(revoke, [.time(time), .text(name)]) == 1 else { return false }
            try db.run(
                "UPDATE token SET revoked_at = \(db.dialect.time(1)) WHERE session_of = $2 AND revoked_at IS NULL",
                [.time(time), .text(name)])
            let set = try db.firstRow("SELECT role_set FROM token WHERE name = $1", [.text(name)]) {
                try $0.optionalText(0)
            }
            try db.insertAudit(audit, set: set ?? nil)
            try db.announce(.tokens)
            return true
        }
    }

    /// Records when tokens were last used (by name); an older time than the one stored changes nothing.
    ///
    /// One statement a token, in the order of their names, so that two servers recording the same tokens lock their
    /// rows in the same order.
    package func recordUses(_ uses: [String: Date]) throws {
        guard !uses.isEmpty else { return }
        try database.writing("recording token uses") { db in
            let time = db.dialect.time(1)
            for (name, used) in uses.sorted(by: { $0.key < $1.key }) {
                try db.run(
                    """
                    UPDATE token SET last_used_at = \(time)
                    WHERE name = $2 AND (last_used_at IS NULL OR last_used_at < \(time))
                    """,
                    [.time(used), .text(name)])
            }
        }
    }

    /// A number that grows whenever a token is added, revoked or deleted, so that a server sharing the store knows
    /// when to load the tokens again. The database's own triggers move it.
    package func revision() throws -> Int {
        try database.reading("reading the token revision") { db in
            try db.firstRow("SELECT value FROM token_revision", []) { try $0.int(0) } ?? 0
        }
    }

    /// Deletes the dashboard sessions that ended (expired or were revoked) before `before`, with the sets they were
    /// limited to; their audit records stay. Returns how many it deleted.
    package func deleteSessions(endedBefore before: Date) throws -> Int {
        try database.writing("deleting ended sessions") { db in
            let cutoff = db.dialect.time(1)
            let ended = """
                SELECT name FROM token WHERE session_of IS NOT NULL
                AND (revoked_at < \(cutoff) OR (revoked_at IS NULL AND expires_at < \(cutoff)))
                """
            let arguments = [SQLValue.time(before)]
            try db.run("DELETE FROM token_scope WHERE token_name IN (\(ended))", arguments)
            return try db.run("DELETE FROM token WHERE name IN (\(ended))", arguments)
        }
    }

    /// The token in the columns of `all()`, without its scope.
    private static func token(_ row: any SQLRow) throws -> StoredToken {
        let name = try row.text(0)
        let role: TokenRole
        switch (try row.text(2), try row.optionalText(3), try row.optionalText(4).flatMap(AdminRole.init)) {
        case ("admin", nil, let access?): role = .admin(access, sets: nil)
        case ("sdk", let set?, nil): role = .sdk(set: set)
        case (let other, _, _): throw StoreError.corrupt("token \(name) has the bad role \"\(other)\"")
        }
        return StoredToken(
            name: name, hash: try row.bytes(1), role: role, createdAt: try row.date(5),
            expiresAt: try row.optionalDate(6), lastUsedAt: try row.optionalDate(7), revokedAt: try row.optionalDate(8),
            sessionOf: try row.optionalText(9))
    }
}
