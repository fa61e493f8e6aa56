import FlagAPI
import Foundation

/// Signing keys and signed bodies (docs/signing.md): one concern of the store, written once for SQLite and
/// PostgreSQL over `SQLExecutor`, and shared by every replica. Versions store a signed patch through
/// `SQLExecutor.putSigned` in their own transaction.
package struct SigningStore: Sendable {
    let database: any SQLStore

    /// The signing concern of `database`.
    package init(_ database: any SQLStore) {
        self.database = database
    }

    /// The set's signing keys, oldest first; none for a set that is not signed.
    package func keys(set: String) throws -> [StoredSigningKey] {
        try database.reading("reading the signing keys of \"\(set)\"") { db in
            guard try db.currentVersion(of: set) != nil else { throw StoreError.notFound(set: set) }
            return try db.rows(
                """
                SELECT id, public_key, sealed_key, state, \(db.dialect.microseconds(of: "created_at"))
                FROM signing_key WHERE set_name = $1 ORDER BY created_at, id
                """,
                [.text(set)]
            ) { row in
                let state = try row.text(3)
                guard let known = SigningKeyState(rawValue: state) else {
                    throw StoreError.corrupt("a signing key of \"\(set)\" has the unknown state \"\(state)\"")
                }
                return StoredSigningKey(
                    id: try row.text(0), publicKey: try row.bytes(1), sealedPrivateKey: try row.bytes(2),
                    state: known, createdAt: try row.date(4))
            }
        }
    }

    /// Replaces the set's signing keys with `keys` and, when given, the signed document of one of its versions (the
    /// current version signed again by a newly active key), atomically with the audit record; `notFound` for a set
    /// that does not exist.
    package func updateKeys(
        set: String, _ keys: [StoredSigningKey], resigned: (version: Int, document: SignedBody)?, audit: AuditEntry
    ) throws {
        try database.writing("storing the signing keys of \"\(set)\"") { db in
            guard try db.currentVersion(of: set) != nil else { throw StoreError.notFound(set: set) }
            try db.run("DELETE FROM signing_key WHERE set_name = $1", [.text(set)])
            for key in keys { try db.insertSigningKey(key, set: set) }
            if let resigned {
                try db.putSigned(resigned.document, .document, set: set, version: resigned.version, replacing: true)
            }
            try db.insertAudit(audit, set: set)
        }
    }

    /// A version's signed document or patch, if one was stored.
    package func body(set: String, version: Int, _ kind: SignedBodyKind) throws -> SignedBody? {
        try database.reading("reading the signed \(kind.rawValue) of \"\(set)\" v\(version)") { db in
            try db.selectSigned(set: set, version: version, kind)
        }
    }

    /// Stores a version's signed document unless one is stored already, and returns the one stored: of several
    /// servers making it at once, all then serve the first.
    package func keepDocument(set: String, version: Int, _ document: SignedBody) throws -> SignedBody {
        try database.writing("storing the signed document of \"\(set)\" v\(version)") { db in
            try db.putSigned(document, .document, set: set, version: version, replacing: false)
            guard let kept = try db.selectSigned(set: set, version: version, .document) else {
                throw StoreError.corrupt("the signed document of \"\(set)\" v\(version) was stored and is gone")
            }
            return kept
        }
    }
}

extension SQLExecutor {
    /// Stores a signing key of the set, in the caller's transaction.
    package func insertSigningKey(_ key: StoredSigningKey, set: String) throws {
        try run(
            """
            INSERT INTO signing_key (set_name, id, public_key, sealed_key, state, created_at)
            VALUES ($1, $2, $3, $4, $5, \(dialect.time(6)))
            """,
            [
                .text(set), .text(key.id), .bytes(key.publicKey), .bytes(key.sealedPrivateKey),
                .text(key.state.rawValue), .time(key.createdAt),
            ])
    }

    /// Stores signed bytes of a version, in the caller's transaction; `replacing` decides whether bytes stored
    /// before give way or stay. `ON CONFLICT DO NOTHING` waits for a concurrent writer of the same row, so the
    /// first one stays.
    package func putSigned(_ body: SignedBody, _ kind: SignedBodyKind, set: String, version: Int, replacing: Bool)
        throws
    {
        let conflict = replacing ? "DO UPDATE SET body = excluded.body, signature = excluded.signature" : "DO NOTHING"
        try run(
            """
            INSERT INTO signed_body (set_name, version, kind, body, signature) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (set_name, version, kind) \(conflict)
            """,
            [.text(set), .integer(version), .text(kind.rawValue), .bytes(body.bytes), .text(body.signature)])
    }

    fileprivate func selectSigned(set: String, version: Int, _ kind: SignedBodyKind) throws -> SignedBody? {
        try firstRow(
            "SELECT body, signature FROM signed_body WHERE set_name = $1 AND version = $2 AND kind = $3",
            [.text(set), .integer(version), .text(kind.rawValue)]
        ) { row in SignedBody(bytes: try row.bytes(0), signature: try row.text(1)) }
    }
}
