import FlagAPI
import FlagPostgres
import FlagServer
import FlagTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The stores: every contract test runs against each, so the protocol says nothing only one of them does.
enum StoreKind: String, CaseIterable, Sendable {
    case sqliteFile
    /// SQLite in memory (`:memory:`), which the tests that want a fast store use.
    case sqliteMemory
    /// A database of its own on the test cluster (`Tests/postgres/with-postgres`).
    case postgres

    /// The stores that can be tested here: PostgreSQL only when a test cluster is configured (the PostgreSQL suite
    /// says how once when it is not).
    static var allCases: [StoreKind] {
        PostgresTestDatabase.isConfigured ? [.sqliteFile, .sqliteMemory, .postgres] : [.sqliteFile, .sqliteMemory]
    }

    /// Runs `body` with a new, empty store of this kind, then removes what the store leaves behind: its directory,
    /// or its database.
    func withStore<T>(_ body: (any FlagStore) throws -> T) throws -> T {
        try withTemporaryDirectory { directory in try body(make(in: directory)) }
    }

    /// A new, empty store of this kind: a file in `directory`, or a PostgreSQL database of its own that is dropped
    /// when the store is released.
    func make(in directory: URL) throws -> any FlagStore {
        switch self {
        case .sqliteFile: return try SQLiteFlagStore(path: directory.appendingPathComponent("flags.sqlite").path)
        case .sqliteMemory: return try SQLiteFlagStore.inMemory()
        case .postgres: return try PostgresTestStore()
        }
    }
}

/// Runs `body` with a database of its own on the test cluster, dropped afterwards.
func withPostgresDatabase<T>(_ body: (PostgresTestDatabase) throws -> T) throws -> T {
    let database = try PostgresTestDatabase()
    // Best effort, as a temporary directory's removal: the cluster is deleted after the run anyway.
    defer { try? database.drop() }
    return try body(database)
}

/// A `PostgresFlagStore` on a database of its own, dropped when the store is released: the contract tests'
/// PostgreSQL store.
final class PostgresTestStore: FlagStore {
    let store: PostgresFlagStore
    private let database: PostgresTestDatabase

    init() throws {
        database = try PostgresTestDatabase()
        do {
            store = try PostgresFlagStore(info: database.info)
        } catch {
            try? database.drop()
            throw error
        }
    }

    deinit {
        // Best effort, as a temporary directory's removal: the cluster is deleted after the run anyway.
        try? database.drop()
    }

    func exclusively<T>(_ body: () throws -> T) throws -> T { try store.exclusively(body) }

    var health: StoreHealth { store.health }

    func reading<T>(_ action: String, _ body: (any SQLExecutor) throws -> T) throws -> T {
        try store.reading(action, body)
    }

    func writing<T>(_ action: String, _ body: (any SQLExecutor) throws -> T) throws -> T {
        try store.writing(action, body)
    }
}

/// Runs `body` on `count` threads that start together, and returns when all are done.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        done.enter()
        Thread {
            start.wait()
            body(index)
            done.leave()
        }.start()
    }
    for _ in 0..<count { start.signal() }
    done.wait()
}

/// Fixed times, one per step, so that stored times compare exactly.
func time(_ step: Int) -> Date {
    Date(timeIntervalSince1970: 1_800_000_000 + Double(step) * 60)
}

/// Bytes standing in for an item's canonical JSON.
func body(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// An audit record by `alice` at step `step`.
func audit(_ action: String, _ step: Int, subject: String? = nil, reason: String? = nil) -> AuditEntry {
    AuditEntry(time: time(step), actor: "alice", action: action, subject: subject, reason: reason)
}

/// A stand-in document digest for version `version`, distinct per version.
func digest(_ version: Int) -> [UInt8] {
    Array(repeating: UInt8(version), count: 32)
}
