import FlagPostgres
import Foundation

/// Signing keys and signed bodies (docs/signing.md), as SQLite's, shared by every replica.
extension PostgresFlagStore {
    package func signingKeys(set: String) throws -> [StoredSigningKey] {
        try read("reading the signing keys of \"\(set)\"") { db in
            guard try currentVersion(of: set, db) != nil else { throw StoreError.notFound(set: set) }
            return try db.query(
                """
                SELECT id, public_key, sealed_key, state, \(Self.microseconds(of: "created_at"))
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
                    state: known, createdAt: Self.date(microseconds: try row.int64(4)))
            }
        }
    }

    package func updateSigningKeys(
        set: String, _ keys: [StoredSigningKey], resigned: (version: Int, document: SignedBody)?,
        audit: AuditRecord
    ) throws {
        try write("storing the signing keys of \"\(set)\"") { db in
            guard try currentVersion(of: set, db) != nil else { throw StoreError.notFound(set: set) }
            _ = try db.execute("DELETE FROM signing_key WHERE set_name = $1", [.text(set)])
            for key in keys { try insertSigningKey(key, set: set, db) }
            if let resigned {
                try putSigned(
                    resigned.document, .document, set: set, version: resigned.version, replacing: true, db)
            }
            _ = try insertAudit(audit, set: set, db)
        }
    }

    package func signedBody(set: String, version: Int, _ kind: SignedBodyKind) throws -> SignedBody? {
        try read("reading the signed \(kind.rawValue) of \"\(set)\" v\(version)") { db in
            try selectSigned(set: set, version: version, kind, db)
        }
    }

    package func keepSignedDocument(set: String, version: Int, _ document: SignedBody) throws -> SignedBody {
        try write("storing the signed document of \"\(set)\" v\(version)") { db in
            try putSigned(document, .document, set: set, version: version, replacing: false, db)
            guard let kept = try selectSigned(set: set, version: version, .document, db) else {
                throw StoreError.corrupt("the signed document of \"\(set)\" v\(version) was stored and is gone")
            }
            return kept
        }
    }

    func insertSigningKey(_ key: StoredSigningKey, set: String, _ db: PostgresConnection) throws {
        _ = try db.execute(
            """
            INSERT INTO signing_key (set_name, id, public_key, sealed_key, state, created_at)
            VALUES ($1, $2, $3, $4, $5, \(Self.time(6)))
            """,
            [
                .text(set), .text(key.id), .bytes(key.publicKey), .bytes(key.sealedPrivateKey),
                .text(key.state.rawValue), Self.microseconds(key.createdAt),
            ])
    }

    /// Stores signed bytes of a version; `replacing` decides whether bytes stored before give way or stay.
    /// `ON CONFLICT DO NOTHING` waits for a concurrent writer of the same row, so the first one stays.
    func putSigned(
        _ body: SignedBody, _ kind: SignedBodyKind, set: String, version: Int, replacing: Bool,
        _ db: PostgresConnection
    ) throws {
        let conflict =
            replacing ? "DO UPDATE SET body = excluded.body, signature = excluded.signature" : "DO NOTHING"
        _ = try db.execute(
            """
            INSERT INTO signed_body (set_name, version, kind, body, signature) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (set_name, version, kind) \(conflict)
            """,
            [.text(set), .int(version), .text(kind.rawValue), .bytes(body.bytes), .text(body.signature)])
    }

    private func selectSigned(set: String, version: Int, _ kind: SignedBodyKind, _ db: PostgresConnection) throws
        -> SignedBody?
    {
        try db.queryFirst(
            "SELECT body, signature FROM signed_body WHERE set_name = $1 AND version = $2 AND kind = $3",
            [.text(set), .int(version), .text(kind.rawValue)]
        ) { row in SignedBody(bytes: try row.bytes(0), signature: try row.text(1)) }
    }
}
