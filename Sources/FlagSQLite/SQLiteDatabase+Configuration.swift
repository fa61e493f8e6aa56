extension SQLiteDatabase {
    /// How a database is opened: durability, locking and constraints.
    public struct Configuration: Sendable, Hashable {
        /// SQLite's `journal_mode`.
        public enum JournalMode: String, Sendable, Hashable {
            /// Write-ahead log: readers never block the writer and commits append instead of rewriting pages.
            case wal
            /// A rollback journal deleted at the end of each transaction (SQLite's default).
            case delete
        }

        /// SQLite's `synchronous` level: how often it waits for the disk.
        public enum Synchronous: String, Sendable, Hashable {
            /// Never waits: a crash of the OS or a power loss may corrupt the database.
            case off
            /// In WAL mode, a power loss may undo the last commits but never corrupts the database.
            case normal
            /// Waits at every commit: a committed transaction survives a power loss.
            case full
        }

        /// The journal mode; in-memory databases ignore it.
        public var journalMode: JournalMode
        /// The synchronous level.
        public var synchronous: Synchronous
        /// How long a statement waits for another connection's lock before failing with `SQLITE_BUSY`.
        public var busyTimeout: Duration
        /// Whether FOREIGN KEY constraints are enforced (SQLite leaves them off unless asked).
        public var foreignKeys: Bool
        /// Opens an existing file read-only, for a process that shares a database another process writes: every file
        /// (the database, its `-wal` and its `-shm`) is opened for reading only, so that the connection can neither
        /// write nor take a lock that would keep the writer waiting. A WAL database's `-wal` and `-shm` must exist
        /// (the writer keeps them with ``persistentWAL``); the journal mode is left as the file has it. Default off.
        public var readOnly = false
        /// Keeps a WAL database's `-wal` and `-shm` files when the last connection closes (SQLite deletes them
        /// otherwise), so that ``readOnly`` connections of other processes can open the database while the writer is
        /// not running; the `-wal` is emptied then, and whenever a checkpoint restarts it. Default off.
        public var persistentWAL = false

        /// A configuration with the given settings.
        public init(
            journalMode: JournalMode = .wal,
            synchronous: Synchronous = .full,
            busyTimeout: Duration = .seconds(5),
            foreignKeys: Bool = true
        ) {
            self.journalMode = journalMode
            self.synchronous = synchronous
            self.busyTimeout = busyTimeout
            self.foreignKeys = foreignKeys
        }

        /// The server's store: an acknowledged write survives a power loss.
        public static let server = Configuration(journalMode: .wal, synchronous: .full)
        /// The client's cache: fast commits; a power loss may lose the last cached set, which is downloaded again.
        public static let client = Configuration(journalMode: .wal, synchronous: .normal)

        /// The busy timeout in whole milliseconds, as `sqlite3_busy_timeout` takes it.
        var busyTimeoutMilliseconds: Int32 {
            let (seconds, attoseconds) = busyTimeout.components
            let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
            return Int32(clamping: max(0, milliseconds))
        }
    }
}
