import FlagCore
import FlagSQLite
import Foundation

extension FlagCache {
    /// How a read-only client opens the cache: every file for reading only (see
    /// `SQLiteDatabase.Configuration.readOnly`), and the same short busy timeout as the app's.
    static let readOnlyConfiguration = {
        var configuration = SQLiteDatabase.Configuration(
            journalMode: .wal, synchronous: .normal, busyTimeout: .milliseconds(250))
        configuration.readOnly = true
        return configuration
    }()

    /// Opens the cache the app keeps in `directory` for reading only, checked with `quick_check`; `nil` while there
    /// is none to read yet: no database, or no `-wal` and `-shm` beside it (an app that has not opened it since it
    /// was written by a version without extension support; reading it then would create them). Creates nothing,
    /// moves nothing aside and migrates nothing: a damaged file, or one whose schema is not complete, throws, and
    /// the app repairs it at its next launch.
    static func openReadOnly(
        directory: URL, log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) throws -> FlagCache? {
        let path = directory.appendingPathComponent(fileName).path
        let manager = FileManager.default
        guard ["", "-wal", "-shm"].allSatisfy({ manager.fileExists(atPath: path + $0) }) else { return nil }
        let database = try SQLiteDatabase(path: path, configuration: readOnlyConfiguration)
        let problems = try database.quickCheck(maxProblems: 5)
        guard problems.isEmpty else {
            throw CacheDamage(message: "quick_check found: \(problems.joined(separator: "; "))")
        }
        let applied = Set(try migrator.appliedVersions(database))
        let known = Set(migrator.migrations.map(\.version))
        guard applied == known else {
            // Fewer: the app is creating the file right now. More: a newer app wrote it. Either way not ours to read.
            throw CacheDamage(
                message: "its schema has migrations \(applied.sorted()), this client knows \(known.sorted())")
        }
        return FlagCache(database: database, path: path, readOnly: true, log: log)
    }

    /// The persisted session `id` of `unitID` as the app stored it, for a read-only client: its frozen values when it
    /// exists, is not expired and belongs to `unitID`, else none; nothing is recorded.
    func storedSession(id: String, set: String, unitID: String, now: Date, ttl: Double) throws
        -> [String: EvaluationDetail<JSONValue>]
    {
        try database.read { db in
            let existing = try db.queryFirst(
                "SELECT unit_id, created_at FROM session WHERE id = ? AND set_name = ?", [.text(id), .text(set)]
            ) { row in (unit: try row.text(0), createdAt: try row.double(1)) }
            guard let existing, existing.unit == unitID, now.timeIntervalSince1970 - existing.createdAt < ttl else {
                return [:]
            }
            return try Self.sessionValues(id: id, db)
        }
    }
}
