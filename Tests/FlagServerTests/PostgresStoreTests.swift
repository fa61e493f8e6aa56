import FlagAPI
import FlagLock
import FlagPostgres
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every PostgreSQL test of this target, in extensions of this suite: a run without a test cluster skips them all,
/// for one reason that says how to run them.
@Suite("PostgreSQL", .enabled(if: PostgresTestDatabase.isConfigured, Comment(rawValue: postgresTestsHowToRun)), .live)
struct PostgresTests {}

/// What PostgreSQL's store must do beyond the contract (`StoreTests` runs that against it too): several servers on
/// one database, notifications, exact times, and a database that goes away and comes back.
extension PostgresTests {
    @Suite("several servers on one database", .live)
    struct SharedDatabase {
        @Test func twoServersStartingTogetherMigrateOnce() throws {
            try withPostgresDatabase { database in
                let failures = Locked<[String]>([])
                onThreads(2) { _ in
                    do {
                        _ = try PostgresFlagStore(info: database.info)
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
                #expect(failures.withLock { $0 } == [])
                let applied = try PostgresConnection(database.info).query(
                    "SELECT version FROM flagstaff_migration ORDER BY version"
                ) { try $0.int(0) }
                #expect(applied == PostgresFlagStore.migrations.map(\.version))
                // A third start finds nothing to do.
                #expect(try PostgresFlagStore(info: database.info).sets() == [])
            }
        }

        @Test func concurrentAppendsWithOneBaseMakeOneVersionEach() throws {
            try withPostgresDatabase { database in
                let stores = [
                    try PostgresFlagStore(info: database.info), try PostgresFlagStore(info: database.info),
                ]
                try stores[0].createSet("race", change: .init(), digest: digest(1), audit: audit("set.create", 1))
                let rounds = 10
                let writers = 6
                for base in 1...rounds {
                    let outcomes = Locked<[Result<Int, StoreError>]>([])
                    onThreads(writers) { writer in
                        let outcome = Result {
                            try stores[writer % 2].append(
                                set: "race", base: base,
                                change: .init(items: [.flag("w\(writer)"): body("\(base)")]),
                                digest: digest(base + 1),
                                audit: audit("flag.update", base + 1, subject: "w\(writer)")
                            ).version
                        }.mapError { $0 as? StoreError ?? StoreError.underlying($0, while: "appending") }
                        outcomes.withLock { $0.append(outcome) }
                    }
                    let all = outcomes.withLock { $0 }
                    let won = all.compactMap { outcome -> Int? in
                        guard case .success(let version) = outcome else { return nil }
                        return version
                    }
                    let lost = all.compactMap { outcome -> StoreError? in
                        guard case .failure(let error) = outcome else { return nil }
                        return error
                    }
                    #expect(won == [base + 1], "round \(base): \(all)")
                    #expect(lost.count == writers - 1)
                    #expect(lost.allSatisfy { $0.currentVersion == base + 1 }, "round \(base): \(lost)")
                }
                let versions = try stores[1].history(set: "race", subject: nil, limit: 100).map(\.version)
                #expect(versions == Array((1...rounds + 1).reversed()))
                #expect(try stores[1].auditLog.records(set: "race", limit: 100).map(\.version) == versions)
                #expect(try stores[0].sets().map(\.version) == [rounds + 1])
            }
        }

        @Test func aSetCreatedByServersAtOnceExistsOnceAndTheLosersLeaveNothing() throws {
            try withPostgresDatabase { database in
                let stores = [
                    try PostgresFlagStore(info: database.info), try PostgresFlagStore(info: database.info),
                ]
                let outcomes = Locked<[Int: Bool]>([:])
                onThreads(4) { writer in
                    let creations = ["shared", "only-\(writer)"].map { name in
                        SetCreation(
                            name: name, change: .init(items: [.flag("a"): body(name)]), digest: digest(1),
                            audit: audit("set.seed", 1, subject: name))
                    }
                    do {
                        _ = try stores[writer % 2].createSets(creations)
                        outcomes.withLock { $0[writer] = true }
                    } catch let error as StoreError where error.isAlreadyExists {
                        outcomes.withLock { $0[writer] = false }
                    } catch {
                        Issue.record("writer \(writer): \(error)")
                    }
                }
                let winners = outcomes.withLock { $0 }.filter(\.value).map(\.key)
                try #require(winners.count == 1, "\(outcomes.withLock { $0 })")
                #expect(try stores[0].sets().map(\.name) == ["only-\(winners[0])", "shared"])
                #expect(try stores[1].auditLog.records(set: nil, limit: 10).count == 2)
            }
        }

        @Test func exclusivelyRunsOneBodyAtATimeAcrossServers() throws {
            try withPostgresDatabase { database in
                // One connection each: the bodies' own calls must not wait for the lock's connection.
                let stores = [
                    try PostgresFlagStore(info: database.info, maxConnections: 1),
                    try PostgresFlagStore(info: database.info, maxConnections: 1),
                ]
                let inside = Locked<(now: Int, most: Int, runs: Int)>((0, 0, 0))
                let failures = Locked<[String]>([])
                onThreads(4) { worker in
                    for _ in 0..<3 {
                        do {
                            try stores[worker % 2].exclusively {
                                inside.withLock { state in
                                    state.now += 1
                                    state.most = max(state.most, state.now)
                                }
                                Thread.sleep(forTimeInterval: 0.02)
                                _ = try stores[worker % 2].sets()
                                inside.withLock { state in
                                    state.now -= 1
                                    state.runs += 1
                                }
                            }
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                }
                #expect(failures.withLock { $0 } == [])
                #expect(inside.withLock { $0.most } == 1)
                #expect(inside.withLock { $0.runs } == 12)
            }
        }

        @Test func exclusivelyReturnsTheBodysValueAndPassesItsErrorOn() throws {
            struct Refusal: Error, Equatable {}
            try withPostgresDatabase { database in
                let store = try PostgresFlagStore(info: database.info)
                #expect(try store.exclusively { 42 } == 42)
                #expect(throws: Refusal()) { try store.exclusively { throw Refusal() } }
                // The lock went with the body: another server takes it at once.
                #expect(try PostgresFlagStore(info: database.info).exclusively { "again" } == "again")
            }
        }
    }

    @Suite("notifications", .live)
    struct Notifications {
        @Test func everyWriteIsAnnouncedOnCommitAndARefusedOneIsNot() throws {
            try withPostgresDatabase { database in
                let listener = try PostgresConnection(database.info)
                try listener.execute("LISTEN \(PostgresFlagStore.channel)")
                let store = try PostgresFlagStore(info: database.info)
                func creation(_ name: String) -> SetCreation {
                    SetCreation(name: name, change: .init(), digest: digest(1), audit: audit("set.create", 1))
                }
                func append(base: Int) throws {
                    _ = try store.append(
                        set: "a", base: base, change: .init(items: [.flag("x"): body("\(base)")]),
                        digest: digest(base + 1), audit: audit("flag.update", base + 1))
                }
                try store.createSets([creation("a"), creation("b")])
                try store.createSet("c", change: .init(), digest: digest(1), audit: audit("set.create", 1))
                try append(base: 1)
                #expect(throws: StoreError.self) { try append(base: 1) }
                #expect(throws: StoreError.self) { try store.createSets([creation("d"), creation("a")]) }
                let token = StoredToken(name: "app", hash: digest(9), role: .sdk(set: "a"), createdAt: time(3))
                try store.tokens.add(token, audit: audit("key.create", 3))
                #expect(throws: StoreError.self) { try store.tokens.add(token, audit: audit("key.create", 3)) }
                #expect(try store.tokens.revoke(name: "app", at: time(4), audit: audit("key.revoke", 4)))
                #expect(try !store.tokens.revoke(name: "app", at: time(5), audit: audit("key.revoke", 5)))
                try store.tokens.recordUses(["app": time(6)])
                try store.auditLog.record(audit("key.create", 7), set: "a")
                try append(base: 2)

                let expected: [StoreChange] = [
                    .set("a", version: 1), .set("b", version: 1), .set("c", version: 1), .set("a", version: 2),
                    .tokens, .tokens, .set("a", version: 3),
                ]
                let received = try notifications(on: listener, count: expected.count, within: 5)
                #expect(received.map(\.channel).allSatisfy { $0 == PostgresFlagStore.channel })
                #expect(received.map(\.payload) == expected.map(\.payload))
                #expect(received.map { PostgresFlagStore.change(fromPayload: $0.payload) } == expected)
                #expect(try notifications(on: listener, count: 1, within: 0.3).map(\.payload) == [])
            }
        }

        /// The notifications that arrive on `listener` within `seconds`, or until `count` have.
        private func notifications(on listener: PostgresConnection, count: Int, within seconds: Double) throws
            -> [PostgresNotification]
        {
            var received: [PostgresNotification] = []
            let deadline = Date().addingTimeInterval(seconds)
            while received.count < count, Date() < deadline {
                var descriptor = pollfd(fd: listener.socket, events: Int16(POLLIN), revents: 0)
                _ = poll(&descriptor, 1, 100)
                try listener.consumeInput()
                while let notification = listener.nextNotification() { received.append(notification) }
            }
            return received
        }
    }

    @Suite("times", .live)
    struct Times {
        /// Microseconds since 1970 through `time(_:)` and back, in SQL, from PostgreSQL's earliest time to the
        /// latest the store keeps.
        @Test func theConversionsAreExactToTheMicrosecond() throws {
            try withPostgresDatabase { database in
                let db = try PostgresConnection(database.info)
                let values: [Int64] = [
                    0, 1, -1, 999_999, -999_999, 1_000_000, -1_000_001, 1_800_000_000_123_457,
                    9_007_199_254_740_993, -9_007_199_254_740_993, 253_402_300_799_999_999,
                    SQLValue.storedTimes.lowerBound, SQLValue.storedTimes.upperBound,
                ]
                for value in values {
                    let back = try db.queryFirst(
                        "SELECT \(SQLDialect.postgres.microseconds(of: SQLDialect.postgres.time(1)))", [.int(value)]
                    ) { try $0.int64(0) }
                    #expect(back == value)
                }
                let shown = try db.queryFirst(
                    "SELECT to_char(\(SQLDialect.postgres.time(1)) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')",
                    [.int(1_800_000_000_123_457)]
                ) { try $0.text(0) }
                #expect(shown == "2027-01-15 08:00:00.123457")
            }
        }

        @Test func storedTimesComeBackUnchanged() throws {
            try withPostgresDatabase { database in
                let store = try PostgresFlagStore(info: database.info)
                let times = [1_800_000_000_123_457, -86_400_000_001, 1, 4_102_444_799_999_999].map {
                    Date(timeIntervalSince1970: Double($0) / 1_000_000)
                }
                let record = AuditEntry(time: times[0], actor: "alice", action: "set.create")
                try store.createSet("s", change: .init(), digest: digest(1), audit: record)
                let token = StoredToken(
                    name: "t", hash: digest(2), role: .admin(.admin, sets: nil), createdAt: times[1],
                    expiresAt: times[3])
                try store.tokens.add(
                    token, audit: AuditEntry(time: times[2], actor: "alice", action: "token.create"))
                try store.tokens.recordUses(["t": times[3]])
                #expect(try store.version(set: "s", 1).createdAt == times[0])
                #expect(try store.sets().map(\.updatedAt) == [times[0]])
                #expect(try store.auditLog.records(set: nil, limit: 10).map(\.time) == [times[2], times[0]])
                let stored = try #require(try store.tokens.all().first)
                #expect([stored.createdAt, stored.expiresAt, stored.lastUsedAt] == [times[1], times[3], times[3]])
                let since = AuditFilter(since: times[0])
                #expect(try store.auditLog.records(set: nil, filter: since, limit: 10).map(\.time) == [times[0]])
            }
        }
    }

    /// A database that goes away and comes back. The tests that stop it stop a cluster of their own
    /// (`PrivateCluster`): stopping the shared one would fail every other test that uses it meanwhile, in this
    /// target and others.
    @Suite("connections", .live)
    struct Connections {
        @Test func aStoppedDatabaseIsUnavailableAndTheSameStoreWorksWhenItIsBack() throws {
            try withPrivateCluster { cluster in
                let store = try PostgresFlagStore(info: cluster.info, maxConnections: 3)
                try store.createSet("ios", change: .init(), digest: digest(1), audit: audit("set.create", 1))
                try cluster.control("stop")

                let calls: [(String, () throws -> Void)] = [
                    ("sets", { _ = try store.sets() }),
                    ("snapshot", { _ = try store.snapshot(set: "ios", version: nil) }),
                    (
                        "append",
                        {
                            _ = try store.append(
                                set: "ios", base: 1, change: .init(), digest: digest(2), audit: audit("x", 2))
                        }
                    ),
                    ("exclusively", { try store.exclusively {} }),
                    ("new store", { _ = try PostgresFlagStore(info: cluster.info) }),
                ]
                for (name, call) in calls {
                    let error = #expect(throws: StoreError.self, "\(name)") { try call() }
                    #expect(error?.isUnavailable == true, "\(name): \(String(describing: error))")
                    #expect(error?.message.contains("the database \(store.database) is unavailable") == true)
                    let everything = error.map { "\($0) \(String(describing: $0.underlying))" } ?? ""
                    #expect(!everything.contains(cluster.password))
                }
                guard case .down(let reason) = store.health else {
                    Issue.record("health is \(store.health) with the database stopped")
                    return
                }
                #expect(reason.contains(store.database))
                #expect(!reason.contains(cluster.password))

                try cluster.control("start")
                #expect(try store.sets().map(\.name) == ["ios"])
                #expect(store.health == .up)
                _ = try store.append(set: "ios", base: 1, change: .init(), digest: digest(2), audit: audit("x", 2))
            }
        }

        @Test func atMostMaxConnectionsAreUsedAndTheyAreUsedAgain() throws {
            try withPostgresDatabase { database in
                let store = try PostgresFlagStore(info: database.info, maxConnections: 2)
                let seen = Locked<(backends: Set<Int>, most: Int)>(([], 0))
                onThreads(6) { _ in
                    do {
                        let (backend, open) = try store.reading("testing the pool") { db in
                            try db.run("SELECT pg_sleep(0.1)", [])
                            return try db.firstRow(
                                """
                                SELECT pg_backend_pid(), count(*) FROM pg_stat_activity
                                WHERE datname = current_database() AND backend_type = 'client backend'
                                """, []
                            ) { (try $0.int(0), try $0.int(1)) } ?? (0, 0)
                        }
                        seen.withLock { seen in
                            seen.backends.insert(backend)
                            seen.most = max(seen.most, open)
                        }
                    } catch {
                        Issue.record("\(error)")
                    }
                }
                #expect(seen.withLock { $0.backends.count } == 2)
                #expect(seen.withLock { $0.most } == 2)
            }
        }

        /// Connections left idle in the pool across a restart are not lent: the first calls after it work.
        @Test func aRestartBetweenCallsCostsNoFailedCall() throws {
            try withPrivateCluster { cluster in
                let store = try PostgresFlagStore(info: cluster.info, maxConnections: 3)
                try store.createSet("ios", change: .init(), digest: digest(1), audit: audit("set.create", 1))
                // Three connections in the pool, idle when the database stops.
                onThreads(3) { _ in
                    do {
                        _ = try store.sets()
                    } catch {
                        Issue.record("before the restart: \(error)")
                    }
                }
                try cluster.control("stop")
                try cluster.control("start")
                let failures = Locked<[String]>([])
                onThreads(3) { _ in
                    do {
                        _ = try store.sets()
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
                #expect(failures.withLock { $0 } == [])
                #expect(store.health == .up)
            }
        }

        @Test func aWrongPasswordIsRefusedWithWhatToCheckAndWithoutThePassword() throws {
            let secret = "wrong-secret-4711"
            let cluster = try #require(PostgresTestDatabase.cluster)
            let wrong = try PostgresConnectionInfo(
                cluster.replacingOccurrences(
                    of: #"://flagstaff:[0-9a-f]+@"#, with: "://flagstaff:\(secret)@", options: .regularExpression))
            let error = #expect(throws: StoreError.self) { try PostgresFlagStore(info: wrong) }
            #expect(error?.isUnavailable == false)
            let message = error?.message ?? ""
            #expect(message.contains(wrong.redacted))
            #expect(message.contains("password authentication failed"))
            #expect(message.contains("Check the user and password (FLAGSERVER_POSTGRES or a PGPASSFILE)"))
            let everything = "\(String(describing: error)) \(String(describing: error?.underlying))"
            #expect(!everything.contains(secret))
        }

        @Test func aDatabaseThatDoesNotExistIsRefusedByName() throws {
            let info = try PostgresConnectionInfo(#require(PostgresTestDatabase.cluster))
                .replacing(database: "no_such_flagstaff_database")
            let error = #expect(throws: StoreError.self) { try PostgresFlagStore(info: info) }
            #expect(error?.isUnavailable == false)
            #expect(error?.message.contains("no_such_flagstaff_database") == true)
            #expect(error?.message.contains("that the role and the database exist") == true)
        }
    }
}

/// The payloads of `PostgresFlagStore.channel`, without a database.
@Suite("PostgreSQL notification payloads", .live)
struct PostgresChangePayloadTests {
    @Test func payloadsAreSmallJSONThatReadsBack() {
        let longest = String(repeating: "a", count: 128)
        let changes: [StoreChange] = [
            .set("ios", version: 7), .set(longest, version: Int.max), .tokens,
        ]
        #expect(changes[0].payload == #"{"set":"ios","version":7}"#)
        #expect(changes[2].payload == #"{"tokens":true}"#)
        #expect(changes.map(\.payload).allSatisfy { $0.utf8.count < 200 })
        #expect(changes.map { PostgresFlagStore.change(fromPayload: $0.payload) } == changes)
    }

    @Test(arguments: [
        "", "ios", "{}", "[1]", #"{"set":"ios"}"#, #"{"set":"ios","version":0}"#, #"{"set":"ios","version":"7"}"#,
        #"{"set":"ios","version":7.5}"#, #"{"set":7,"version":7}"#, #"{"set":"ios","version":7,"x":1}"#,
        #"{"tokens":false}"#, #"{"tokens":true,"set":"ios"}"#, #"{"set":"ios","version":7} trailing"#,
    ])
    func anythingElseIsNotAChange(payload: String) {
        #expect(PostgresFlagStore.change(fromPayload: payload) == nil)
    }
}
