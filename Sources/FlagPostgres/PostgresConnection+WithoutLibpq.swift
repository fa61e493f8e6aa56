#if !Postgres
    /// A connection in a build without the `Postgres` trait, which links no libpq: connecting throws
    /// `PostgresError.notBuilt`, so no connection exists and no other member can be reached.
    ///
    /// It has the API of the libpq connection (PostgresConnection.swift), so that the store built on it is
    /// type-checked in every build; a member added there must be added here, or the plain build fails.
    public final class PostgresConnection {
        /// Where the connection would go.
        public let info: PostgresConnectionInfo

        /// Whether this build can connect: it was made without the `Postgres` trait, so it cannot.
        public static let isAvailable = false

        /// Throws `PostgresError.notBuilt`.
        public init(_ info: PostgresConnectionInfo) throws {
            throw PostgresError.notBuilt
        }

        /// Whether the connection is still up.
        public var isUsable: Bool { unmade() }

        /// Whether the connection is outside any transaction and ready for the next statement.
        public var isIdle: Bool { unmade() }

        /// The descriptor of the connection's socket.
        public var socket: Int32 { unmade() }

        /// The server's process id for this connection.
        public var backendPID: Int32 { unmade() }

        /// Runs one statement.
        @discardableResult
        public func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
            unmade()
        }

        /// Reads whatever the server has sent.
        public func consumeInput() throws { unmade() }

        /// The next notification, if one has arrived.
        public func nextNotification() -> PostgresNotification? { unmade() }
    }

    /// The rows of a statement, in a build without libpq: none can exist, since no connection can.
    public final class PostgresResult {
        private init() {}

        /// How many rows there are.
        public var count: Int { unmade() }

        /// How many rows an `INSERT`, `UPDATE` or `DELETE` touched.
        public var affectedRows: Int { unmade() }

        /// Row `index`.
        public subscript(index: Int) -> PostgresRow { unmade() }

        func value(_ row: Int32, _ column: Int) throws -> UnsafeBufferPointer<UInt8>? { unmade() }
    }

    /// What a member of a connection or a result does in a build without libpq: it cannot be called, since their
    /// initializers throw or are private. (A stored `Never` would say so to the compiler, but a class cannot hold
    /// one.)
    private func unmade() -> Never {
        preconditionFailure("no PostgreSQL connection or result exists in a build without the Postgres trait")
    }
#endif
