import FlagLock
import FlagSQLite
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which file a path names: device and inode, so that a file deleted or replaced under an open connection is noticed.
struct FileIdentity: Sendable, Equatable {
    var device: UInt64
    var inode: UInt64

    /// The identity of the file at `path`, or `nil` when there is none.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
    }
}

extension SQLiteError {
    // SQLite's primary result codes (sqlite3.h), spelled out because this module does not import the C library.
    private static let permission: Int32 = 3, busy: Int32 = 5, locked: Int32 = 6, noMemory: Int32 = 7
    private static let readOnly: Int32 = 8, ioError: Int32 = 10, full: Int32 = 13, cannotOpen: Int32 = 14
    /// SQLITE_IOERR_SHORT_READ: the file ends early, which is damage, not the disk failing.
    private static let shortRead: Int32 = 10 | (2 << 8)

    /// A failure of the surroundings (full disk, read-only or unreachable file, a lock held elsewhere, memory), not
    /// of the file's contents: the file must not be moved aside for it.
    var isEnvironmental: Bool {
        if extendedResultCode == Self.shortRead { return false }
        return [
            Self.permission, Self.busy, Self.locked, Self.noMemory, Self.readOnly, Self.ioError, Self.full,
            Self.cannotOpen,
        ].contains(resultCode)
    }
}

extension FlagCache {
    /// Runs `body` in a write transaction, healing the cache first when its file was deleted or replaced since it
    /// was opened (the write would go to a file nobody will read again), and once more when the write finds the
    /// file damaged. Environmental failures (full disk, read-only) are thrown for the caller to log.
    ///
    /// While another process holds the write lock, one write waits the busy timeout and the writes of the next
    /// second fail at once with the same error: sessions persisting a value per flag read would otherwise queue
    /// 250 ms each, and `shutdown` (which waits for them) and new sets (which are cached first) behind them.
    func healingWrite<T>(now: Date, _ body: (SQLiteConnection) throws -> T) throws -> T {
        // A read-only client hands its cache to nothing that writes; this is the last guard should that change.
        guard !readOnly else { throw CacheDamage(message: "the flag cache at \(path) is open read-only") }
        if let (until, error) = busy.withLock({ $0 }), ContinuousClock.now < until { throw error }
        try reopenIfReplaced(now: now)
        let database = database
        do {
            return try database.write(body)
        } catch let error as SQLiteError where error.isCorruption {
            try rebuild(damaged: database, now: now)
            return try self.database.write(body)
        } catch let error as SQLiteError where error.isBusy {
            // Real time on purpose, not the client's clock: SQLite's busy timeout is real time too.
            busy.withLock { $0 = (ContinuousClock.now + Self.busyPause, error) }
            throw error
        }
    }

    /// Reopens the database when the file at `path` is no longer the one opened: deleted, or replaced by a rename
    /// (a damaged replacement is moved aside by `openDatabase` as at launch); rebuilds it when the file is the one
    /// opened but its header is gone (overwritten or emptied in place), which the open connection, working from its
    /// page cache and WAL, would not notice.
    func reopenIfReplaced(now: Date) throws {
        recovery.lock()
        defer { recovery.unlock() }
        let (old, file) = opened.withLock { ($0.database, $0.file) }
        let current = FileIdentity(path: path)
        if current == file {
            guard Self.headerIsGone(path) else { return }
            try replaceWithEmpty(old, because: "was overwritten while in use", now: now)
            return
        }
        log(.warning, "flag cache at \(path) was deleted or replaced while in use; opening it again")
        close(old)
        if current == nil {
            // Closing deletes the old `-wal` and `-shm`; should they be left, they belong to the deleted file and
            // must not be replayed into the new one.
            _ = try Self.moveAside(path: path, now: now)
        }
        let database = try Self.openDatabase(path: path, now: now, log: log)
        opened.withLock { $0 = Opened(database: database, file: FileIdentity(path: path)) }
    }

    /// Closes the database, moves its files aside and creates a new, empty one in place: for damage found after
    /// opening (a read or write that fails with `SQLITE_CORRUPT` although `quick_check` passed), or, with trusted
    /// keys, bytes that fail verification (`because` then says so).
    /// Does nothing when `damaged` was already replaced (by another thread that met the same damage).
    func rebuild(damaged: SQLiteDatabase, because what: String = "is damaged", now: Date) throws {
        guard !readOnly else {
            throw CacheDamage(message: "the flag cache at \(path) \(what); left for the app to rebuild (read-only)")
        }
        recovery.lock()
        defer { recovery.unlock() }
        guard damaged === database else { return }
        try replaceWithEmpty(damaged, because: what, now: now)
    }

    /// Closes `old`, moves its files aside and opens a new, empty cache in place; the caller holds `recovery`.
    private func replaceWithEmpty(_ old: SQLiteDatabase, because what: String, now: Date) throws {
        close(old)
        let aside = try Self.moveAside(path: path, now: now)
        log(.warning, "flag cache at \(path) \(what); moved to \(aside) and rebuilt")
        let database = try SQLiteDatabase(path: path, configuration: Self.configuration)
        try Self.migrator.migrate(database)
        opened.withLock { $0 = Opened(database: database, file: FileIdentity(path: path)) }
    }

    /// Whether the file at `path` is readable and does not start with SQLite's header, which every database file
    /// has from its creation (the switch to WAL writes it). A file that cannot be read is not judged.
    static func headerIsGone(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer {
            do {
                try handle.close()
            } catch {
                // Nothing was written through it; a failed close of a read handle loses nothing.
            }
        }
        let magic = Array("SQLite format 3\u{0}".utf8)
        do {
            return try handle.read(upToCount: magic.count).map(Array.init) != magic
        } catch {
            return false
        }
    }

    /// Closes the database for `FlagClient.shutdown`: the file is released now, not when the last task lets go of
    /// the client, so that a client opened next on the same directory does not wait out this connection's closing
    /// checkpoint. Later reads and writes throw, and their callers log it.
    func close() {
        recovery.lock()
        defer { recovery.unlock() }
        close(database)
    }

    private func close(_ database: SQLiteDatabase) {
        do {
            try database.close()
        } catch {
            // Only a close from inside one of its own closures fails, and the database is being replaced anyway.
            log(.debug, "closing the replaced flag cache: \(error)")
        }
    }
}
