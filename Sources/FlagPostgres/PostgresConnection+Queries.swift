/// What a connection does on top of `execute`, the same with or without libpq.
extension PostgresConnection {
    /// Runs a query and maps each row with `transform`.
    public func query<T>(
        _ sql: String, _ parameters: [PostgresValue] = [], _ transform: (PostgresRow) throws -> T
    ) throws -> [T] {
        let result = try execute(sql, parameters)
        return try (0..<result.count).map { try transform(result[$0]) }
    }

    /// The first row of a query mapped with `transform`, or `nil` when it has none.
    public func queryFirst<T>(
        _ sql: String, _ parameters: [PostgresValue] = [], _ transform: (PostgresRow) throws -> T
    ) throws -> T? {
        let result = try execute(sql, parameters)
        return result.count == 0 ? nil : try transform(result[0])
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try execute("BEGIN")
        let value: T
        do {
            value = try body(self)
        } catch {
            // A rollback on a lost connection fails too; the error that matters is the first one.
            _ = try? execute("ROLLBACK")
            throw error
        }
        try execute("COMMIT")
        return value
    }
}
