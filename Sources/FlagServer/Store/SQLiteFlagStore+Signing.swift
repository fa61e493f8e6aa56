import FlagSQLite
import Foundation

extension SQLiteFlagStore {
    package func signingKeys(set: String) throws -> [StoredSigningKey] {
        try read("reading the signing keys of \"\(set)\"") { db in
            guard try currentVersion(of: set, db) != nil else { throw StoreError.notFound(set: set) }
            return try db.query(
                """
                SELECT id, public_key, sealed_key, state, created_at FROM signing_key WHERE set_name = ?
                ORDER BY created_at, id
                """,
                [.text(set)]
            ) { row in
                let state = try row.text(3)
                guard let known = SigningKeyState(rawValue: state) else {
                    throw StoreError.corrupt("a signing key of \"\(set)\" has the unknown state \"\(state)\"")
                }
                return StoredSigningKey(
                    id: try row.text(0), publicKey: try row.blob(1), sealedPrivateKey: try row.blob(2), state: known,
                    createdAt: Self.date(microseconds: try row.int64(4)))
            }
        }
    }

    package func updateSigningKeys(
        set: String, _ keys: [StoredSigningKey], resigned: (version: Int, document: SignedBody)?, audit: AuditRecord
    ) throws {
        try write("storing the signing keys of \"\(set)\"") { db in
            guard try currentVersion(of: set, db) != nil else { throw StoreError.notFound(set: set) }
            try db.execute("DELETE FROM signing_key WHERE set_name = ?", [.text(set)])
            for key in keys { try insertSigningKey(key, set: set, db) }
            if let resigned {
                try putSigned(resigned.document, .document, set: set, version: resigned.version, replacing: true, db)
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

    func insertSigningKey(_ key: StoredSigningKey, set: String, _ db: SQLiteConnection) throws {
        try db.execute(
            """
            INSERT INTO signing_key (set_name, id, public_key, sealed_key, state, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """,
            [
                .text(set), .text(key.id), .blob(key.publicKey), .blob(key.sealedPrivateKey), .text(key.state.rawValue),
                Self.microseconds(key.createdAt),
            ])
    }

    /// Stores signed bytes of a version; `replacing` decides whether bytes stored before give way or stay.
    func putSigned(
        _ body: SignedBody, _ kind: SignedBodyKind, set: String, version: Int, replacing: Bool, _ db: SQLiteConnection
    ) throws {
        try db.execute(
            """
            INSERT OR \(replacing ? "REPLACE" : "IGNORE") INTO signed_body (set_name, version, kind, body, signature)
            VALUES (?, ?, ?, ?, ?)
            """,
            [.text(set), .init(version), .text(kind.rawValue), .blob(body.bytes), .text(body.signature)])
    }

    private func selectSigned(set: String, version: Int, _ kind: SignedBodyKind, _ db: SQLiteConnection) throws
        -> SignedBody?
    {
        try db.queryFirst(
            "SELECT body, signature FROM signed_body WHERE set_name = ? AND version = ? AND kind = ?",
            [.text(set), .init(version), .text(kind.rawValue)]
        ) { row in SignedBody(bytes: try row.blob(0), signature: try row.text(1)) }
    }
}
