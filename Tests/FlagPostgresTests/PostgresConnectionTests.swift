import FlagPostgres
import FlagTestBasics
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The libpq wrapper against a real server (`Tests/postgres/with-postgres`).
@Suite(.enabled(if: PostgresTestDatabase.isConfigured, Comment(rawValue: postgresTestsHowToRun)), .serialized, .live)
struct PostgresConnectionTests {
    /// Runs `body` on a connection to a database of its own, dropped afterwards.
    private func withDatabase(_ body: (PostgresConnection, PostgresTestDatabase) throws -> Void) throws {
        let database = try PostgresTestDatabase()
        defer { try? database.drop() }
        try body(try PostgresConnection(database.info), database)
    }

    @Test func valuesGoInAndComeBackUnchanged() throws {
        try withDatabase { db, _ in
            try db.execute("CREATE TABLE t (id int8 PRIMARY KEY, name text, body bytea)")
            let everyByte = (0...255).map(UInt8.init) + [0, 0, 92, 120]
            try db.execute(
                "INSERT INTO t VALUES ($1, $2, $3)",
                [.int(Int64.max), .text("naïve 'quoted' \\ \"x\""), .bytes(everyByte)])
            try db.execute("INSERT INTO t VALUES ($1, $2, $3)", [.int(-1), .null, .bytes([])])
            let rows = try db.query("SELECT id, name, body FROM t ORDER BY id") { row in
                (try row.int64(0), try row.optionalText(1), try row.bytes(2))
            }
            #expect(rows.count == 2)
            #expect(rows[0].0 == -1 && rows[0].1 == nil && rows[0].2 == [])
            #expect(rows[1].0 == Int64.max && rows[1].1 == "naïve 'quoted' \\ \"x\"" && rows[1].2 == everyByte)
            #expect(try db.queryFirst("SELECT body FROM t WHERE id = 7") { try $0.bytes(0) } == nil)
        }
    }

    @Test func aFailedStatementNamesItsStateAndLeavesTheConnectionUsable() throws {
        try withDatabase { db, _ in
            try db.execute("CREATE TABLE t (id int8 PRIMARY KEY)")
            try db.execute("INSERT INTO t VALUES (1)")
            let error = #expect(throws: PostgresError.self) {
                try db.execute("INSERT INTO t VALUES ($1)", [.int(1)])
            }
            #expect(error?.isUniqueViolation == true)
            #expect(error?.isUnreachable == false)
            #expect(error?.description.contains("duplicate key") == true)
            #expect(try db.queryFirst("SELECT count(*) FROM t") { try $0.int(0) } == 1)
        }
    }

    @Test func aTransactionCommitsOrRollsBackAsAWhole() throws {
        try withDatabase { db, _ in
            try db.execute("CREATE TABLE t (id int8 PRIMARY KEY)")
            try db.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                try db.execute("INSERT INTO t VALUES (2)")
            }
            #expect(throws: PostgresError.self) {
                try db.transaction { db in
                    try db.execute("INSERT INTO t VALUES (3)")
                    try db.execute("INSERT INTO t VALUES (1)")
                }
            }
            #expect(try db.query("SELECT id FROM t ORDER BY id") { try $0.int(0) } == [1, 2])
            #expect(try db.execute("UPDATE t SET id = id + 10").affectedRows == 2)
        }
    }

    @Test func notificationsArriveOnTheListeningSocket() throws {
        try withDatabase { db, database in
            let listener = try PostgresConnection(database.info)
            try listener.execute("LISTEN changes")
            try db.execute("SELECT pg_notify('changes', $1)", [.text("{\"set\":\"ios\",\"version\":7}")])
            try db.transaction { db in
                try db.execute("NOTIFY changes, 'second'")
                try db.execute("NOTIFY changes, 'third'")
            }
            var received: [PostgresNotification] = []
            let deadline = Date().addingTimeInterval(5)
            while received.count < 3, Date() < deadline {
                var descriptor = pollfd(fd: listener.socket, events: Int16(POLLIN), revents: 0)
                _ = poll(&descriptor, 1, 100)
                try listener.consumeInput()
                while let notification = listener.nextNotification() { received.append(notification) }
            }
            #expect(received.map(\.payload) == ["{\"set\":\"ios\",\"version\":7}", "second", "third"])
            #expect(received.allSatisfy { $0.channel == "changes" && $0.senderPID == db.backendPID })
        }
    }

    @Test func aWrongPasswordIsRefusedWithoutEchoingIt() throws {
        let database = try PostgresTestDatabase()
        defer { try? database.drop() }
        let secret = "wrong-secret-4711"
        let cluster = try #require(PostgresTestDatabase.cluster)
        let wrong = cluster.replacingOccurrences(
            of: #"://flagstaff:[0-9a-f]+@"#, with: "://flagstaff:\(secret)@", options: .regularExpression)
        #expect(wrong != cluster)
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(PostgresConnectionInfo(wrong)) }
        #expect(error?.isRefused == true)
        #expect(error?.description.contains("password authentication failed") == true)
        #expect(error?.description.contains(secret) == false)
        #expect(try PostgresConnectionInfo(wrong).description.contains(secret) == false)
    }

    @Test func aDatabaseThatDoesNotExistIsRefused() throws {
        let info = try PostgresConnectionInfo(#require(PostgresTestDatabase.cluster)).replacing(
            database: "no_such_database_here")
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(info) }
        #expect(error?.isRefused == true)
        #expect(error?.description.contains("no_such_database_here") == true)
    }

    /// A server that lets a login run out its `connect_timeout` and then answers a ping (one busy starting its
    /// backends) is unreachable, to be waited for, not a refusal that stops a replica's start.
    @Test func aConnectionThatTimesOutIsUnreachableThoughTheServerAnswersAPingAfter() throws {
        let cluster = try #require(PostgresTestDatabase.cluster)
        let port = try #require(
            cluster.firstMatch(of: #/@127\.0\.0\.1:(\d+)\//#).flatMap { Int($0.1) }, "the test cluster's port")
        let proxy = try TamperingProxy(upstream: port, silentFirst: 1)
        defer { proxy.stop() }
        let slow = cluster.replacingOccurrences(of: ":\(port)/", with: ":\(proxy.port)/") + "?connect_timeout=2"
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(PostgresConnectionInfo(slow)) }
        #expect(error?.isUnreachable == true)
        #expect(error?.description.contains("timeout") == true)
        _ = try PostgresConnection(PostgresConnectionInfo(slow))  // the next login goes through, so pings do too
    }

    @Test func aPortNobodyListensOnIsUnreachable() throws {
        let error = #expect(throws: PostgresError.self) {
            try PostgresConnection(PostgresConnectionInfo("postgresql://flagstaff:pw@127.0.0.1:1/flagstaff"))
        }
        #expect(error?.isUnreachable == true)
        #expect(error?.description.contains("pw@") == false)
    }
}

/// Connection strings, checked by libpq's parser and described without a server.
@Suite(.enabled(if: PostgresConnection.isAvailable, "libpq's parser is linked only with the Postgres trait"), .live)
struct PostgresConnectionInfoTests {
    @Test(arguments: [
        (
            "postgresql://alice:s3cret@db.internal:6432/flags?sslmode=verify-full",
            "postgresql://alice@db.internal:6432/flags"
        ),
        (
            "host=db.internal port=6432 dbname=flags user=alice password=s3cret",
            "postgresql://alice@db.internal:6432/flags"
        ),
        ("host=/run/postgresql dbname=flags", "postgresql://[socket /run/postgresql]/flags"),
        ("postgresql:///flags", "postgresql:///flags"),
    ])
    func theDescriptionLeavesThePasswordOut(conninfo: String, described: String) throws {
        let info = try PostgresConnectionInfo(conninfo)
        #expect(info.description == described)
        #expect(!info.description.contains("s3cret"))
    }

    @Test(arguments: ["host=db password s3cret", "postgresql://alice:s3cret@db/flags?bogus_option=s3cret", "   "])
    func aBadStringIsRefusedWithoutQuotingIt(conninfo: String) {
        let error = #expect(throws: PostgresError.self) { try PostgresConnectionInfo(conninfo) }
        #expect(error?.isRefused == true)
        #expect(error?.description.contains("s3cret") == false)
        #expect(error?.description.contains("postgresql://USER@HOST:5432/DATABASE") == true)
    }

    @Test func anotherDatabaseKeepsTheRest() throws {
        let info = try PostgresConnectionInfo("postgresql://alice:it's\\x@db:6432/flags?sslmode=require")
        let other = try info.replacing(database: "other")
        #expect(other.description == "postgresql://alice@db:6432/other")
        #expect(other.secretConnectionString.contains("password='it\\'s\\\\x'"))
        #expect(other.secretConnectionString.contains("sslmode='require'"))
    }
}

/// A build without the `Postgres` trait has the same API but links no libpq: what a connection needs says how to
/// build one that has it, and no connection string is quoted.
@Suite(.disabled(if: PostgresConnection.isAvailable, "this build links libpq"), .live)
struct PostgresWithoutLibpqTests {
    @Test(arguments: ["postgresql://alice:s3cret@db.internal/flags", "host=db password s3cret"])
    func aConnectionStringSaysHowToBuildWithPostgreSQL(conninfo: String) {
        let error = #expect(throws: PostgresError.self) { try PostgresConnectionInfo(conninfo) }
        #expect(error?.isNotBuilt == true)
        #expect(error?.isRefused == false)
        #expect(error?.isUnreachable == false)
        #expect(error?.description.contains("--traits Postgres") == true)
        #expect(error?.description.contains("s3cret") == false)
    }

    @Test func anEmptyStringIsRefusedAsWithLibpq() {
        let error = #expect(throws: PostgresError.self) { try PostgresConnectionInfo("   ") }
        #expect(error?.isRefused == true)
    }
}
