import FlagSQLite

extension SQLiteConnection: SQLExecutor {
    package var dialect: SQLDialect { .sqlite }

    package func run(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        try execute(sqliteParameters(sql), arguments.map(SQLiteValue.init))
        return changes
    }

    package func rows<T>(_ sql: String, _ arguments: [SQLValue], _ transform: (any SQLRow) throws -> T) throws
        -> [T]
    {
        try query(sqliteParameters(sql), arguments.map(SQLiteValue.init)) { try transform($0) }
    }

    /// A store of one process has nobody to tell.
    package func announce(_ change: StoreChange) throws {}
}

extension SQLiteRow: SQLRow {
    package func bytes(_ column: Int) throws -> [UInt8] { try blob(column) }
    package func optionalBytes(_ column: Int) throws -> [UInt8]? { try optionalBlob(column) }
}

extension SQLiteValue {
    init(_ value: SQLValue) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self = .integer(integer)
        case .text(let text): self = .text(text)
        case .bytes(let bytes): self = .blob(bytes)
        }
    }
}
