import FlagPostgres

extension PostgresConnection: SQLExecutor {
    package var dialect: SQLDialect { .postgres }

    package func run(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        try execute(sql, arguments.map(PostgresValue.init)).affectedRows
    }

    package func rows<T>(_ sql: String, _ arguments: [SQLValue], _ transform: (any SQLRow) throws -> T) throws
        -> [T]
    {
        try query(sql, arguments.map(PostgresValue.init)) { try transform($0) }
    }

    /// `pg_notify` on `PostgresFlagStore.channel`, which PostgreSQL delivers when the transaction commits.
    package func announce(_ change: StoreChange) throws {
        try execute("SELECT pg_notify($1, $2)", [.text(PostgresFlagStore.channel), .text(change.payload)])
    }
}

extension PostgresRow: SQLRow {}

extension PostgresValue {
    init(_ value: SQLValue) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self = .int(integer)
        case .text(let text): self = .text(text)
        case .bytes(let bytes): self = .bytes(bytes)
        }
    }
}
