/// One step of a schema's history: applied once, in its own transaction, and recorded.
public struct SQLiteMigration: Sendable {
    /// The position in the history: 1, 2, 3, … Never renumber a migration that has shipped.
    public let version: Int
    /// What the migration does, recorded beside its version.
    public let name: String
    let body: @Sendable (SQLiteConnection) throws -> Void

    /// A migration that runs `body` inside a write transaction.
    public init(version: Int, name: String, _ body: @escaping @Sendable (SQLiteConnection) throws -> Void) {
        self.version = version
        self.name = name
        self.body = body
    }

    /// A migration that runs a schema script.
    public init(version: Int, name: String, script: String) {
        self.init(version: version, name: name) { db in try db.executeScript(script) }
    }
}

/// Brings a database's schema up to date by applying, in order, the migrations not yet recorded in its
/// `schema_migration` table.
///
/// ```swift
/// let migrator = SQLiteMigrator([
///     SQLiteMigration(version: 1, name: "notes", script: "CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT)"),
/// ])
/// try migrator.migrate(database)
/// ```
public struct SQLiteMigrator: Sendable {
    /// The migrations, in the order they apply.
    public let migrations: [SQLiteMigration]

    /// A migrator over `migrations`, whose versions must increase strictly.
    public init(_ migrations: [SQLiteMigration]) {
        self.migrations = migrations
    }

    /// Applies every migration not yet recorded, each in its own transaction, and returns the versions applied now.
    ///
    /// Throws without changing anything when the database records a migration this program does not know (it was
    /// written by a newer program), or when the versions given are not strictly increasing.
    @discardableResult
    public func migrate(_ database: SQLiteDatabase) throws -> [Int] {
        try checkOrder()
        try database.write { db in
            try db.execute(
                "CREATE TABLE IF NOT EXISTS schema_migration (version INTEGER PRIMARY KEY, name TEXT NOT NULL)"
            )
        }
        let known = Set(migrations.map(\.version))
        let unknown = try appliedVersions(database).filter { !known.contains($0) }
        guard unknown.isEmpty else {
            throw SQLiteError.misuse(
                "the database at \(database.path) has schema migrations \(unknown) that this program does not know; "
                    + "it was written by a newer version"
            )
        }
        var applied: [Int] = []
        for migration in migrations {
            let ran = try database.write { db in
                // Checked inside the transaction: another process may have applied it since the list was read.
                let done = try db.queryFirst(
                    "SELECT 1 FROM schema_migration WHERE version = ?",
                    [.init(migration.version)]
                ) { _ in true }
                guard done == nil else { return false }
                try migration.body(db)
                try db.execute(
                    "INSERT INTO schema_migration (version, name) VALUES (?, ?)",
                    [.init(migration.version), .text(migration.name)]
                )
                return true
            }
            if ran {
                applied.append(migration.version)
            }
        }
        return applied
    }

    /// The versions recorded as applied, in increasing order; empty for a database never migrated.
    public func appliedVersions(_ database: SQLiteDatabase) throws -> [Int] {
        try database.read { db in
            let exists = try db.queryFirst(
                "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migration'"
            ) { _ in true }
            guard exists != nil else { return [] }
            return try db.query("SELECT version FROM schema_migration ORDER BY version") { try $0.int(0) }
        }
    }

    private func checkOrder() throws {
        for (previous, next) in zip(migrations, migrations.dropFirst()) where next.version <= previous.version {
            throw SQLiteError.misuse(
                "migration \(next.version) (\(next.name)) follows \(previous.version) (\(previous.name)); "
                    + "versions must increase"
            )
        }
    }
}
