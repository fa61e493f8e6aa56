/// Why a PostgreSQL call failed: libpq's message, the SQLSTATE when the server sent one, and whether the database
/// could not be reached at all (the server down, the connection lost) rather than refusing the statement.
///
/// Messages never carry the connection string: libpq does not echo passwords, and where it quotes a fragment of
/// a string it could not parse, the fragment is left out (`PostgresConnectionInfo`).
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        /// The server could not be reached, or the connection was lost: trying again later may work.
        case unreachable
        /// The server refused the connection for good: bad credentials, no such database or role, no
        /// `pg_hba.conf` entry, a connection string libpq cannot parse.
        case refused
        /// A statement failed.
        case statement
        /// This build has no libpq: it was made without the `Postgres` trait.
        case notBuilt
    }

    private let code: Code
    /// What went wrong, as libpq or the server put it, trimmed to one paragraph.
    public let message: String
    /// The five-character SQLSTATE the server sent, if any (`23505` for a unique violation, say).
    public let sqlState: String?

    private init(_ code: Code, _ message: String, sqlState: String? = nil) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
    }

    /// The database could not be reached or the connection was lost.
    public static func unreachable(_ message: String) -> PostgresError {
        PostgresError(.unreachable, message)
    }

    /// The server refused to connect for a reason that waiting does not fix.
    public static func refused(_ message: String) -> PostgresError {
        PostgresError(.refused, message)
    }

    /// What every connection says in a build without the `Postgres` trait, which has no libpq.
    public static let notBuilt = PostgresError(
        .notBuilt,
        "this flagserver was built without PostgreSQL: build it with `swift build -c release --traits Postgres` "
            + "(needs libpq-dev), or leave out --postgres, FLAGSERVER_POSTGRES and \"postgres\" to keep the SQLite store"
    )

    /// A statement failed with `sqlState`; states that mean the server went away count as unreachable.
    public static func statement(_ message: String, sqlState: String?) -> PostgresError {
        PostgresError(isUnreachableState(sqlState) ? .unreachable : .statement, message, sqlState: sqlState)
    }

    /// Whether the database could not be reached or the connection was lost: the same call may work later.
    public var isUnreachable: Bool {
        if case .unreachable = code { return true }
        return false
    }

    /// Whether the server refused to connect for good (credentials, database, connection string).
    public var isRefused: Bool {
        if case .refused = code { return true }
        return false
    }

    /// Whether this build cannot reach PostgreSQL at all: it was made without the `Postgres` trait.
    public var isNotBuilt: Bool {
        if case .notBuilt = code { return true }
        return false
    }

    /// Whether a unique or primary-key constraint refused the row.
    public var isUniqueViolation: Bool { sqlState == "23505" }

    public var description: String {
        sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message
    }

    /// Connection exceptions (class 08), an administrator's or crash shutdown, a server not accepting
    /// connections yet, and too many connections (57P01–57P03, 53300).
    private static func isUnreachableState(_ state: String?) -> Bool {
        guard let state else { return false }
        return state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300"].contains(state)
    }
}
