import FlagLock
import FlagPostgres
import Foundation

/// The `FlagStore` on PostgreSQL, for several servers sharing one database: versions are totally ordered across
/// them, each write tells the others through `NOTIFY` (`channel`), and `exclusively` keeps their first starts
/// apart.
///
/// ```swift
/// let store = try PostgresFlagStore(info: PostgresConnectionInfo("postgresql://flagstaff@db.internal/flagstaff"))
/// ```
///
/// Calls block while they wait for the database. When it cannot be reached, they throw a `StoreError` that
/// `isUnavailable` and `health` turns `.down`; the next call connects again, and once it succeeds `health` is
/// `.up`. Nothing here prints or throws the connection string's password: errors name `database`.
package final class PostgresFlagStore: FlagStore {
    /// The database, as a URI without its password.
    package let database: String
    let pool: Pool
    private let lastHealth = Locked<StoreHealth>(.up)

    /// Connects to the database and brings its schema up to date.
    ///
    /// A database that cannot be reached throws a `StoreError` that `isUnavailable` (try again later); one that
    /// refuses the connection (the password, the role, the database, `pg_hba.conf`) throws one that says what to
    /// check.
    ///
    /// - Parameter maxConnections: how many calls may use the database at once; more wait for a connection.
    ///   `exclusively` uses one more.
    package init(info: PostgresConnectionInfo, maxConnections: Int = 4) throws {
        database = info.redacted
        pool = Pool(info: info, limit: maxConnections)
        try perform("bringing the schema up to date") {
            try Self.migrate(pool.dedicatedConnection())
        }
    }

    package var health: StoreHealth { lastHealth.withLock { $0 } }

    /// Runs `body` while this server holds the database's lock for first starts, on a connection of its own
    /// (outside the pool, so that `body`'s own calls always find one). The lock is session-level and is released
    /// by closing that connection, which also happens if the server dies. Its key is not the migrations' one, so
    /// a server that migrates at start does not wait for another's first start. Not reentrant: `body` must not
    /// call `exclusively` again.
    package func exclusively<T>(_ body: () throws -> T) throws -> T {
        let holder = try perform("waiting for the lock on first starts") {
            let connection = try pool.dedicatedConnection()
            try connection.execute("SELECT pg_advisory_lock($1)", [.int(Self.firstStartLock)])
            return connection
        }
        return try withExtendedLifetime(holder) { try body() }
    }

    /// Runs `body` on a pooled connection, outside a transaction: for reads, whose versions never change once
    /// written, so that separate statements need no common snapshot.
    package func reading<T>(_ action: String, _ body: (any SQLExecutor) throws -> T) throws -> T {
        try perform(action) { try pool.withConnection { try body($0) } }
    }

    /// Runs `body` in a transaction on a pooled connection.
    package func writing<T>(_ action: String, _ body: (any SQLExecutor) throws -> T) throws -> T {
        try perform(action) { try pool.withConnection { try $0.transaction { try body($0) } } }
    }

    /// Runs `body`, translating its errors into `StoreError`s and keeping `health`: `.down` when the database
    /// could not be reached or refused the connection, `.up` whenever it answered (with an error or not).
    private func perform<T>(_ action: String, _ body: () throws -> T) throws -> T {
        do {
            let value = try body()
            lastHealth.withLock { $0 = .up }
            return value
        } catch let error as StoreError {
            lastHealth.withLock { $0 = .up }
            throw error
        } catch let error as PostgresError where error.isUnreachable {
            let failure = StoreError.unavailable(
                database: database, reason: "\(error.message) (while \(action))", underlying: error)
            lastHealth.withLock { $0 = .down(reason: failure.message) }
            throw failure
        } catch let error as PostgresError where error.isRefused {
            let failure = StoreError.underlying(
                PostgresError.refused(
                    "\(error.message). Check the user and password (FLAGSERVER_POSTGRES or a PGPASSFILE), that "
                        + "the role and the database exist, and that the server's pg_hba.conf lets this host in"),
                while: action)
            lastHealth.withLock { $0 = .down(reason: failure.message) }
            throw failure
        } catch {
            lastHealth.withLock { $0 = .up }
            throw StoreError.underlying(error, while: action)
        }
    }
}

extension PostgresFlagStore {
    /// The advisory lock key of `exclusively` ("flagstex" in ASCII). Advisory locks are per database, and the
    /// key space is shared with whatever else uses the database, hence a key nobody picks by accident.
    static let firstStartLock: Int64 = 0x666C_6167_7374_6578
}
