import Foundation

#if Postgres
    import CPostgres
#endif

/// Where a PostgreSQL database is, as a libpq connection string (a `postgresql://` URI or `key=value` pairs),
/// checked when made, and described without its password.
///
/// ```swift
/// let info = try PostgresConnectionInfo("postgresql://flagstaff@db.internal/flagstaff?sslmode=verify-full")
/// print(info.redacted)  // postgresql://flagstaff@db.internal/flagstaff
/// ```
public struct PostgresConnectionInfo: Sendable, CustomStringConvertible {
    /// The connection string as given; it may hold a password, so it is never printed.
    let conninfo: String
    /// What the string sets, by libpq keyword.
    private let settings: [String: String]
    /// The database as a URI without password or options, for logs and errors.
    public let redacted: String

    /// Libpq's settings that Flagstaff sets unless the connection string does: a connection attempt gives up
    /// after 5 s, and TCP keepalives notice a silent peer within about 15 s, so that neither a start nor a
    /// request hangs on a database that vanished without closing its sockets.
    static let defaults: [(String, String)] = [
        ("application_name", "flagserver"), ("connect_timeout", "5"), ("keepalives", "1"),
        ("keepalives_idle", "5"), ("keepalives_interval", "2"), ("keepalives_count", "5"),
    ]

    /// Checks `conninfo` with libpq's own parser; throws a `refused` error naming what is wrong, without quoting
    /// the string (a fragment of it could be a password).
    public init(_ conninfo: String) throws {
        guard !conninfo.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw PostgresError.refused(
                "the PostgreSQL connection string is empty: give a URI such as "
                    + "postgresql://USER@HOST:5432/DATABASE, or key=value pairs such as \"host=HOST dbname=DATABASE\""
            )
        }
        let settings = try Self.parse(conninfo)
        self.conninfo = conninfo
        self.settings = settings
        self.redacted = Self.describe(settings)
    }

    /// What `conninfo` sets, by keyword, as libpq's parser reads it; in a build without libpq (no `Postgres` trait),
    /// `PostgresError.notBuilt`, since nothing else could read it the same way.
    private static func parse(_ conninfo: String) throws -> [String: String] {
        #if Postgres
            var error: UnsafeMutablePointer<CChar>?
            guard let options = PQconninfoParse(conninfo, &error) else {
                let reason = error.map { Self.unquoted(String(cString: $0)) } ?? "libpq could not parse it"
                if let error { PQfreemem(error) }
                throw PostgresError.refused(
                    "the PostgreSQL connection string is not valid (\(reason)): give a URI such as "
                        + "postgresql://USER@HOST:5432/DATABASE, or key=value pairs such as \"host=HOST dbname=DATABASE\""
                )
            }
            defer { PQconninfoFree(options) }
            var settings: [String: String] = [:]
            var option = options
            while let keyword = option.pointee.keyword {
                if let value = option.pointee.val { settings[String(cString: keyword)] = String(cString: value) }
                option += 1
            }
            return settings
        #else
            throw PostgresError.notBuilt
        #endif
    }

    /// The same server, user and options with another database.
    public func replacing(database: String) throws -> PostgresConnectionInfo {
        var settings = settings
        settings["dbname"] = database
        let pairs = settings.sorted { $0.key < $1.key }.map { key, value in
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "'", with: "\\'")
            return "\(key)='\(escaped)'"
        }
        return try PostgresConnectionInfo(pairs.joined(separator: " "))
    }

    /// The connection string, password included: for a child process that must reach the same database.
    public var secretConnectionString: String { conninfo }

    public var description: String { redacted }

    /// How long libpq tries to reach the server before it gives up: `connect_timeout` (Flagstaff's 5 s unless the
    /// string sets it; libpq reads 1 as 2), or nil when the string sets 0 or less (libpq then waits for ever).
    var connectTimeout: Duration? {
        let text = settings["connect_timeout"] ?? Self.defaults.first { $0.0 == "connect_timeout" }?.1 ?? ""
        guard let seconds = Int(text.trimmingCharacters(in: .whitespaces)), seconds > 0 else { return nil }
        return .seconds(max(seconds, 2))
    }

    /// `postgresql://user@host:port/dbname`, leaving out what the string does not set (libpq then uses its
    /// environment variables and defaults).
    static func describe(_ settings: [String: String]) -> String {
        var text = "postgresql://"
        if let user = settings["user"], !user.isEmpty { text += "\(user)@" }
        let host = settings["host"] ?? settings["hostaddr"] ?? ""
        text += host.hasPrefix("/") ? "[socket \(host)]" : host
        if let port = settings["port"], !port.isEmpty { text += ":\(port)" }
        text += "/" + (settings["dbname"] ?? "")
        return text
    }

    /// `message` with every quoted fragment replaced by an ellipsis.
    static func unquoted(_ message: String) -> String {
        var result = ""
        var quoted = false
        for character in message.trimmingCharacters(in: .whitespacesAndNewlines) {
            if character == "\"" {
                if !quoted { result += "\"…\"" }
                quoted.toggle()
            } else if !quoted {
                result.append(character)
            }
        }
        return result
    }

    /// Runs `body` with libpq's keyword and value arrays: the defaults first, then the connection string as an
    /// expanded `dbname`, so that whatever the string sets wins.
    func withParameters<T>(
        _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>) -> T
    ) -> T {
        let pairs = Self.defaults + [("dbname", conninfo)]
        let keywords = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer {
            for pointer in keywords + values { free(pointer) }
        }
        let keywordArray = keywords.map { UnsafePointer($0) } + [nil]
        let valueArray = values.map { UnsafePointer($0) } + [nil]
        return keywordArray.withUnsafeBufferPointer { keys in
            valueArray.withUnsafeBufferPointer { values in body(keys.baseAddress!, values.baseAddress!) }
        }
    }
}
