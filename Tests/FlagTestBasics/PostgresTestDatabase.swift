import FlagPostgres
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A database of its own for one test, on the cluster that `FLAGSTAFF_TEST_POSTGRES` names
/// (`Tests/postgres/with-postgres` starts one and sets it); dropped by `drop()`.
public struct PostgresTestDatabase: Sendable {
    /// The variable naming the test cluster.
    public static let variable = "FLAGSTAFF_TEST_POSTGRES"

    /// The cluster the tests use, if one is configured.
    public static var cluster: String? {
        ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether PostgreSQL tests can run: a cluster is configured, and this build links libpq.
    public static var isConfigured: Bool { PostgresConnection.isAvailable && cluster != nil }

    /// The test database's connection.
    public let info: PostgresConnectionInfo
    /// Its name.
    public let name: String
    private let admin: PostgresConnectionInfo

    /// Creates an empty database with a fresh name.
    public init() throws {
        guard let cluster = Self.cluster else {
            throw PostgresError.refused("\(Self.variable) is not set: \(postgresTestsHowToRun)")
        }
        admin = try PostgresConnectionInfo(cluster)
        name = "flagstaff_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try PostgresConnection(admin).execute("CREATE DATABASE \(name)")
        info = try admin.replacing(database: name)
    }

    /// Drops the database, ending the sessions still connected to it.
    public func drop() throws {
        try PostgresConnection(admin).execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

/// A PostgreSQL cluster of its own for a test that stops it: `Tests/postgres/with-postgres` on a free port,
/// running until the test's body returns, then deleted with everything in it.
public struct PrivateCluster: Sendable {
    /// Its database `flagstaff`, as the role `flagstaff` (CREATEDB) with a password.
    public let info: PostgresConnectionInfo
    /// The password, which no error may show.
    public let password: String
    /// The script that stops and starts it.
    public let controlScript: String

    /// Stops (`"stop"`) or starts (`"start"`) the cluster.
    ///
    /// Not with Foundation's `Process`: its `waitUntilExit` never returns from `start`, because the server that
    /// `pg_ctl` leaves running inherits the socket by which `Process` learns that its child has ended.
    public func control(_ action: String) throws {
        let directory = try TemporaryDirectory()
        let output = directory.url.appendingPathComponent("output").path
        let pid = try Spawn.start(
            controlScript, [action], environment: ProcessInfo.processInfo.environment,
            directory: directory.url.path, stdout: output)
        let (status, exitedNormally) = Spawn.wait(pid)
        guard exitedNormally, status == 0 else {
            throw ClusterFailure("\(controlScript) \(action) failed (\(status)): \(Self.read(output))")
        }
    }

    static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(no output)"
    }
}

/// Why a `PrivateCluster` could not be had or controlled.
public struct ClusterFailure: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Runs `body` with a `PrivateCluster`, deleted afterwards whatever state `body` left it in.
public func withPrivateCluster<T>(_ body: (PrivateCluster) throws -> T) throws -> T {
    let directory = try TemporaryDirectory()
    let keep = directory.url.appendingPathComponent("keep").path
    let ready = directory.url.appendingPathComponent("ready").path
    let output = directory.url.appendingPathComponent("output").path
    try directory.write("keep", "")
    var environment = ProcessInfo.processInfo.environment
    environment["FLAGSTAFF_PG_PORT"] = String(try freePort())
    // with-postgres runs this until `keep` is gone, then stops the cluster and deletes it.
    let script = #"""
        printf '%s\n%s\n' "$FLAGSTAFF_TEST_POSTGRES" "$FLAGSTAFF_TEST_POSTGRES_CONTROL" > ready.tmp && mv ready.tmp ready
        while [ -e keep ]; do sleep 0.1; done
        """#
    let pid = try Spawn.start(
        BuiltProducts.repositoryRoot.appendingPathComponent("Tests/postgres/with-postgres").path,
        ["/bin/sh", "-c", script], environment: environment, directory: directory.url.path, stdout: output)
    defer {
        try? FileManager.default.removeItem(atPath: keep)
        _ = Spawn.wait(pid)
    }
    guard
        waitUntil(timeout: .seconds(60), { FileManager.default.fileExists(atPath: ready) || Spawn.hasEnded(pid) }),
        let lines = try? String(contentsOfFile: ready, encoding: .utf8).split(separator: "\n"), lines.count == 2
    else {
        throw TimedOut("with-postgres did not start a cluster: \(PrivateCluster.read(output))")
    }
    let uri = String(lines[0])
    guard let match = uri.range(of: #"(?<=://flagstaff:)[0-9a-f]+(?=@)"#, options: .regularExpression) else {
        throw ClusterFailure("with-postgres gave no password in its URI")
    }
    let cluster = PrivateCluster(
        info: try PostgresConnectionInfo(uri), password: String(uri[match]), controlScript: String(lines[1]))
    return try body(cluster)
}

/// A TCP port on 127.0.0.1 that nothing listens on now.
public func freePort() throws -> Int {
    #if canImport(Glibc)
        let stream = Int32(SOCK_STREAM.rawValue)
    #else
        let stream = SOCK_STREAM
    #endif
    let descriptor = socket(AF_INET, stream, 0)
    guard descriptor >= 0 else { throw ClusterFailure("socket: \(errno)") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
            bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
        }
    }
    guard bound else { throw ClusterFailure("bind: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// How to run the PostgreSQL tests, for the line that says they were skipped.
public let postgresTestsHowToRun =
    "PostgreSQL tests skipped: run them with `Tests/postgres/with-postgres swift test --traits Postgres` "
    + "(or set FLAGSTAFF_TEST_POSTGRES=CONNINFO and build with --traits Postgres)"
