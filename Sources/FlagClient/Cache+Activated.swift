import FlagSQLite
import Foundation

/// Under ``FlagClient/ApplyPolicy/manual`` the cache keeps two versions of a set while one waits for `activate()`:
/// the newest received (`flag_set_cache`, stored at arrival, so that its kills survive an offline relaunch) and the
/// one the app activated (`flag_set_activated`, set aside when the first newer version arrived), which a relaunch
/// starts from. Under the other policies nothing is set aside.
///
/// The version in use is read inside the write transaction, not before it: `activate()` may switch versions at any
/// moment, and the refresh loop's write and `activate()`'s write are ordered by SQLite's write lock. Whichever comes
/// first, the cache never names as activated a version the app did not activate; at worst (`activate()` between the
/// refresh loop taking a newer version and publishing it) it keeps the version activated before.
extension FlagCache {
    /// Copies what is cached of `set` aside as the activated version, inside the write that is about to replace or
    /// extend it with `newVersion`, when the cached version is the one in use (`inUse()`, with its patches) and a
    /// newer one replaces it. A copy set aside earlier stays while it is the version in use: the versions arriving
    /// after it all wait. One left from a version activated since (its removal failed or has not run yet) is
    /// replaced.
    static func setAsideActivated(
        set: String, newVersion: Int, inUse: () -> Int?, _ db: SQLiteConnection
    ) throws {
        guard let inUse = inUse(), newVersion != inUse else { return }
        let kept = try db.queryFirst(
            "SELECT version FROM \(Tables.activated.document) WHERE set_name = ?", [.text(set)]
        ) { row in try row.int(0) }
        guard kept != inUse else { return }
        // Another version cached (a write that failed while it arrived, retried now): not what is in use.
        guard try newestVersion(set: set, db) == inUse else { return }
        try deleteActivated(set: set, db)
        try db.execute(
            """
            INSERT INTO flag_set_activated (set_name, version, etag, document, stored_at, flag_index, signature)
            SELECT set_name, version, etag, document, stored_at, flag_index, signature FROM flag_set_cache
            WHERE set_name = ?
            """,
            [.text(set)])
        try db.execute(
            """
            INSERT INTO flag_set_activated_patch (set_name, version, base, patch, signature)
            SELECT set_name, version, base, patch, signature FROM flag_set_patch WHERE set_name = ?
            """,
            [.text(set)])
    }

    /// The version the cached document and its patches make.
    private static func newestVersion(set: String, _ db: SQLiteConnection) throws -> Int? {
        try db.queryFirst(
            """
            SELECT COALESCE((SELECT MAX(version) FROM flag_set_patch WHERE set_name = ?1), version)
            FROM flag_set_cache WHERE set_name = ?1
            """,
            [.text(set)]
        ) { row in try row.int(0) }
    }

    private static func deleteActivated(set: String, _ db: SQLiteConnection) throws {
        try db.execute("DELETE FROM \(Tables.activated.document) WHERE set_name = ?", [.text(set)])
        try db.execute("DELETE FROM \(Tables.activated.patch) WHERE set_name = ?", [.text(set)])
    }

    /// The activated version of `set` set aside while a newer one waits, with its patches; `nil` when none is.
    func activated(set: String) throws -> Stored? {
        try database.read { db in try Self.read(set: set, from: .activated, db) }
    }

    /// Forgets the activated version of `set` set aside. With `activated` (after `activate()`), only when the newest
    /// version cached is the one activated now: when a newer one was stored meanwhile, the copy is what a relaunch
    /// must start from. Without (a launch that does not start from it), always. Writes only when there is a copy,
    /// so that launches under other policies take no write lock for it.
    func discardActivated(set: String, activated: () -> Int? = { nil }, now: Date) throws {
        let kept = try database.read { db in
            try db.queryFirst("SELECT 1 FROM \(Tables.activated.document) WHERE set_name = ?", [.text(set)]) { _ in
                true
            }
        }
        guard kept != nil else { return }
        try healingWrite(now: now) { db in
            if let version = activated(), try Self.newestVersion(set: set, db) != version { return }
            try Self.deleteActivated(set: set, db)
        }
    }
}
