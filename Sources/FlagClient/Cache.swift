import FlagCore
import FlagLock
import FlagSQLite
import Foundation

/// The client's SQLite database: the last good document per set (with its ETag; with trusted keys, its signature and
/// the signed patches applied since), under `.manual` the activated one while a newer one waits
/// (`Cache+Activated.swift`), the frozen values of persisted sessions, and the overrides set through the API. WAL +
/// `synchronous=NORMAL`; a lost last write only means a download or a re-evaluation. The file may be deleted,
/// replaced or damaged while the client runs: a write then reopens or rebuilds it (`Cache+Recovery.swift`), so the
/// cache heals without a restart.
final class FlagCache: Sendable {
    /// The file name inside the cache directory.
    static let fileName = "flagclient.sqlite"

    /// The open database and the file it was opened on; replaced when that file is gone or damaged.
    struct Opened: Sendable {
        var database: SQLiteDatabase
        var file: FileIdentity?
    }

    let opened: Locked<Opened>
    /// Serializes reopening and rebuilding, which do I/O; `opened` is held only to read or swap the database. An
    /// `NSLock`, not a `Locked`: it guards no value (see `Locked` on empty values).
    let recovery = NSLock()
    let path: String
    let log: @Sendable (FlagClientLogMessage.Level, String) -> Void
    /// Opened by a ``FlagClient/CacheAccess/readOnly`` client: nothing is written, moved or rebuilt
    /// (`Cache+ReadOnly.swift`).
    let readOnly: Bool
    /// Until when writes fail at once, and with what: another process held the write lock past the busy timeout.
    let busy = Locked<(until: ContinuousClock.Instant, error: SQLiteError)?>(nil)
    /// How long writes fail at once after one waited the busy timeout in vain.
    static let busyPause = Duration.seconds(1)

    /// The database in use now.
    var database: SQLiteDatabase { opened.withLock { $0.database } }

    init(
        database: SQLiteDatabase, path: String, readOnly: Bool = false,
        log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) {
        self.opened = Locked(Opened(database: database, file: FileIdentity(path: path)))
        self.path = path
        self.readOnly = readOnly
        self.log = log
    }

    /// A cached document.
    struct Document: Sendable, Equatable {
        var version: Int
        var etag: String?
        var bytes: [UInt8]
        /// `DocumentIndex.encoded()` of `bytes`, when known.
        var index: [UInt8]?
        /// With trusted keys: the `Flagstaff-Signature` value that came with `bytes`, exactly the bytes signed.
        var signature: String? = nil
    }

    /// A signed patch applied after the cached document, kept as the exact bytes signed (with trusted keys only:
    /// without, the cache holds the patched document re-encoded).
    struct Patch: Sendable, Equatable {
        var version: Int
        var base: Int
        var bytes: [UInt8]
        var signature: String
    }

    /// What the cache holds for a set: a document and the patches applied since, in order.
    struct Stored: Sendable, Equatable {
        var document: Document
        var patches: [Patch] = []

        /// The version the patches bring the document to.
        var version: Int { patches.last?.version ?? document.version }
    }

    static let migrator = SQLiteMigrator([
        SQLiteMigration(
            version: 1, name: "documents, sessions and overrides",
            script: """
                CREATE TABLE flag_set_cache (
                    set_name TEXT PRIMARY KEY, version INTEGER NOT NULL, etag TEXT, document BLOB NOT NULL,
                    stored_at REAL NOT NULL);
                CREATE TABLE session (
                    id TEXT PRIMARY KEY, set_name TEXT NOT NULL, unit_id TEXT NOT NULL, created_at REAL NOT NULL);
                CREATE TABLE session_value (
                    session_id TEXT NOT NULL REFERENCES session(id) ON DELETE CASCADE, flag TEXT NOT NULL,
                    value BLOB NOT NULL, reason TEXT NOT NULL, variant TEXT, error_code TEXT, version INTEGER,
                    frozen_at REAL NOT NULL, PRIMARY KEY (session_id, flag));
                CREATE TABLE local_override (set_name TEXT NOT NULL, flag TEXT NOT NULL, value TEXT NOT NULL,
                    PRIMARY KEY (set_name, flag));
                """),
        SQLiteMigration(
            version: 2, name: "byte ranges of each cached flag",
            script: "ALTER TABLE flag_set_cache ADD COLUMN flag_index BLOB"),
        SQLiteMigration(
            version: 3, name: "signatures of cached documents, and the signed patches applied since",
            script: """
                ALTER TABLE flag_set_cache ADD COLUMN signature TEXT;
                CREATE TABLE flag_set_patch (
                    set_name TEXT NOT NULL, version INTEGER NOT NULL, base INTEGER NOT NULL, patch BLOB NOT NULL,
                    signature TEXT NOT NULL, PRIMARY KEY (set_name, version));
                """),
        SQLiteMigration(
            version: 4, name: "the activated set, kept while a newer one waits for activate() (.manual)",
            script: """
                CREATE TABLE flag_set_activated (
                    set_name TEXT PRIMARY KEY, version INTEGER NOT NULL, etag TEXT, document BLOB NOT NULL,
                    stored_at REAL NOT NULL, flag_index BLOB, signature TEXT);
                CREATE TABLE flag_set_activated_patch (
                    set_name TEXT NOT NULL, version INTEGER NOT NULL, base INTEGER NOT NULL, patch BLOB NOT NULL,
                    signature TEXT NOT NULL, PRIMARY KEY (set_name, version));
                """),
    ])

    /// Opens the cache in `directory`, checking it with `quick_check`. A file that cannot be read as a database,
    /// fails the check, or has a schema this program does not know is moved aside (with its `-wal` and `-shm`) and a
    /// new one is created. A sound read-only file is used as it is (its writes fail and are logged). Throws when no
    /// database can be had (unwritable directory, full disk, a lock held too long): the file is then left alone for
    /// the next start.
    static func open(
        directory: URL, now: Date, log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) throws -> FlagCache {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(fileName).path
        return FlagCache(database: try openDatabase(path: path, now: now, log: log), path: path, log: log)
    }

    /// Opens, checks and migrates the database at `path`, moving a damaged file aside first.
    static func openDatabase(
        path: String, now: Date, log: (FlagClientLogMessage.Level, String) -> Void
    ) throws -> SQLiteDatabase {
        do {
            let database = try SQLiteDatabase(path: path, configuration: configuration)
            let problems = try database.quickCheck(maxProblems: 5)
            guard problems.isEmpty else {
                throw CacheDamage(message: "quick_check found: \(problems.joined(separator: "; "))")
            }
            try migrate(database)
            return database
        } catch let error as SQLiteError where error.isEnvironmental && !isDirectory(path) {
            // Not damage: the disk is full, the file or directory is read-only, or another process holds a lock.
            // Moving a sound file aside would lose the last good set for good; leave it for the next start.
            throw error
        } catch {
            let aside = try moveAside(path: path, now: now)
            log(.warning, "flag cache at \(path) was unreadable (\(error)); moved to \(aside) and rebuilt")
            let database = try SQLiteDatabase(path: path, configuration: configuration)
            try migrator.migrate(database)
            return database
        }
    }

    /// Whether a directory sits where the database should be: SQLite reports that as `SQLITE_CANTOPEN`, like a
    /// permission problem, but it is damage and must be moved aside.
    private static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// WAL + `synchronous=NORMAL`, and a short busy timeout: a set is cached before it is put in use, and `init`
    /// and `session(id:)` touch the database on the caller's thread; none may wait SQLite's usual 5 s for a lock
    /// another process holds. The `-wal` and `-shm` files stay when the client closes the cache, so that a
    /// read-only client of an app extension can open it while the app is not running.
    static let configuration = {
        var configuration = SQLiteDatabase.Configuration(
            journalMode: .wal, synchronous: .normal, busyTimeout: .milliseconds(250))
        configuration.persistentWAL = true
        return configuration
    }()

    /// Applies the migrations. A file that has them all is used even when the write that confirms it cannot run
    /// now (another connection holds the write lock, the file is read-only): reads work; writes fail and are logged.
    private static func migrate(_ database: SQLiteDatabase) throws {
        do {
            try migrator.migrate(database)
        } catch let error as SQLiteError where error.isEnvironmental {
            guard Set(try migrator.appliedVersions(database)) == Set(migrator.migrations.map(\.version)) else {
                throw error
            }
        }
    }

    /// Moves `path` and its `-wal` / `-shm` files to `path.corrupt-<seconds>` names; returns the new main path.
    static func moveAside(path: String, now: Date) throws -> String {
        let manager = FileManager.default
        let target = "\(path).corrupt-\(Int(now.timeIntervalSince1970))"
        for suffix in ["", "-wal", "-shm"] where manager.fileExists(atPath: path + suffix) {
            let destination = target + suffix
            if manager.fileExists(atPath: destination) { try manager.removeItem(atPath: destination) }
            try manager.moveItem(atPath: path + suffix, toPath: destination)
        }
        return target
    }

    /// The last good document of `set`, if any.
    func document(set: String) throws -> Document? {
        try stored(set: set)?.document
    }

    /// The last good document of `set` and the patches applied since, read together.
    func stored(set: String) throws -> Stored? {
        try database.read { db in try Self.read(set: set, from: .newest, db) }
    }

    /// Where a set is kept: the newest received, or the activated one set aside (`Cache+Activated.swift`). Table
    /// names are constants of this type, never outside input.
    struct Tables {
        let document: String
        let patch: String

        static let newest = Tables(document: "flag_set_cache", patch: "flag_set_patch")
        static let activated = Tables(document: "flag_set_activated", patch: "flag_set_activated_patch")
    }

    /// The document of `set` in `tables` and the patches applied since, inside a read or write.
    static func read(set: String, from tables: Tables, _ db: SQLiteConnection) throws -> Stored? {
        let document = try db.queryFirst(
            "SELECT version, etag, document, flag_index, signature FROM \(tables.document) WHERE set_name = ?",
            [.text(set)]
        ) { row in
            Document(
                version: try row.int(0), etag: try row.optionalText(1), bytes: try row.blob(2),
                index: try row.optionalBlob(3), signature: try row.optionalText(4))
        }
        guard let document else { return nil }
        let patches = try db.query(
            "SELECT version, base, patch, signature FROM \(tables.patch) WHERE set_name = ? ORDER BY version",
            [.text(set)]
        ) { row in
            Patch(version: try row.int(0), base: try row.int(1), bytes: try row.blob(2), signature: try row.text(3))
        }
        return Stored(document: document, patches: patches)
    }

    /// Replaces what is cached of `set` with `document` and the `patches` applied since (none by default), in one
    /// transaction. Callers validate (and, with trusted keys, verify) them first. `keepingActivated` reads the
    /// version in use under ``FlagClient/ApplyPolicy/manual`` (`nil` otherwise): when the cache holds it, it is set
    /// aside first (`Cache+Activated.swift`).
    func store(
        set: String, document: Document, patches: [Patch] = [], keepingActivated inUse: () -> Int? = { nil },
        now: Date
    ) throws {
        try healingWrite(now: now) { db in
            let version = patches.last?.version ?? document.version
            try Self.setAsideActivated(set: set, newVersion: version, inUse: inUse, db)
            try db.execute(
                """
                INSERT INTO flag_set_cache (set_name, version, etag, document, stored_at, flag_index, signature)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (set_name) DO UPDATE SET version = excluded.version, etag = excluded.etag,
                    document = excluded.document, stored_at = excluded.stored_at, flag_index = excluded.flag_index,
                    signature = excluded.signature
                """,
                [
                    .text(set), .init(document.version), .init(document.etag), .blob(document.bytes),
                    .real(now.timeIntervalSince1970), .init(document.index), .init(document.signature),
                ])
            try db.execute("DELETE FROM flag_set_patch WHERE set_name = ?", [.text(set)])
            for patch in patches { try Self.insert(patch, set: set, db) }
        }
    }

    /// Adds a signed patch after what is cached of `set` (whose version must be the patch's base), with the new
    /// ETag; a few hundred bytes, where rewriting the document would write all of it.
    /// `keepingActivated` as for `store`.
    func append(
        set: String, patch: Patch, etag: String?, keepingActivated inUse: () -> Int? = { nil }, now: Date
    ) throws {
        try healingWrite(now: now) { db in
            try Self.setAsideActivated(set: set, newVersion: patch.version, inUse: inUse, db)
            try Self.insert(patch, set: set, db)
            try db.execute(
                "UPDATE flag_set_cache SET etag = ?, stored_at = ? WHERE set_name = ?",
                [.init(etag), .real(now.timeIntervalSince1970), .text(set)])
        }
    }

    private static func insert(_ patch: Patch, set: String, _ db: SQLiteConnection) throws {
        try db.execute(
            "INSERT INTO flag_set_patch (set_name, version, base, patch, signature) VALUES (?, ?, ?, ?, ?)",
            [.text(set), .init(patch.version), .init(patch.base), .blob(patch.bytes), .text(patch.signature)])
    }
}

/// A cache file that opened but failed its check.
struct CacheDamage: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
