#if Postgres
    import FlagPostgres
    import Foundation

    /// Signing keys and signed versions (docs/signing.md), as SQLite's, shared by every replica.
    extension PostgresFlagStore {
        public func signingKeys(set: String) throws -> [StoredSigningKey] {
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

        public func updateSigningKeys(
            set: String, _ keys: [StoredSigningKey], resigned: SignedVersion?, audit: AuditRecord
        ) throws {
            try write("storing the signing keys of \"\(set)\"") { db in
                guard try currentVersion(of: set, db) != nil else { throw StoreError.notFound(set: set) }
                _ = try db.execute("DELETE FROM signing_key WHERE set_name = $1", [.text(set)])
                for key in keys { try insertSigningKey(key, set: set, db) }
                if let resigned { try insertSigned(resigned, set: set, db) }
                _ = try insertAudit(audit, set: set, db)
            }
        }

        public func signedVersion(set: String, _ version: Int) throws -> SignedVersion? {
            try read("reading the signed bytes of \"\(set)\" v\(version)") { db in
                try db.queryFirst(
                    """
                    SELECT document, document_signature, patch, patch_signature FROM signed_version
                    WHERE set_name = $1 AND version = $2
                    """,
                    [.text(set), .int(version)]
                ) { row in
                    SignedVersion(
                        version: version, document: try row.bytes(0), documentSignature: try row.text(1),
                        patch: try row.optionalBytes(2), patchSignature: try row.optionalText(3))
                }
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

        /// Stores a version's signed bytes, replacing those stored before (a version signed again by a new key).
        func insertSigned(_ signed: SignedVersion, set: String, _ db: PostgresConnection) throws {
            _ = try db.execute(
                """
                INSERT INTO signed_version (set_name, version, document, document_signature, patch, patch_signature)
                VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (set_name, version) DO UPDATE SET document = excluded.document,
                    document_signature = excluded.document_signature, patch = excluded.patch,
                    patch_signature = excluded.patch_signature
                """,
                [
                    .text(set), .int(signed.version), .bytes(signed.document), .text(signed.documentSignature),
                    signed.patch.map { .bytes($0) } ?? .null, signed.patchSignature.map { .text($0) } ?? .null,
                ])
        }
    }
#endif
