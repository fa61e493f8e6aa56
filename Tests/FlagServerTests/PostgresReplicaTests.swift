import FlagCore
import FlagLock
import FlagPostgres
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// flagserver processes on one PostgreSQL database, each with a data directory of its own, started
/// from the repository root so that the first start seeds config/flagsets.
final class Replicas: Sendable {
    /// The database of the test cluster they share, dropped with them; `nil` on a `PrivateCluster`'s database.
    let database: PostgresTestDatabase?
    /// Their database.
    let info: PostgresConnectionInfo
    let directory: TemporaryDirectory
    /// Accepted as an admin token by every replica (`FLAGSERVER_ADMIN_TOKEN`) unless `environmentAdmin` was false.
    static let admin = "fsa_replica-tests-admin-token-shared-by-all"
    /// The key-encryption key every replica shares (`FLAGSERVER_SIGNING_KEY`), so that the seed sets are signed.
    let signingKey = (try? KeyEncryptionKey.generate().base64) ?? ""
    private let environmentAdmin: Bool
    private let servers = Locked<[ServerProcess]>([])

    /// `count` replicas started at the same moment on a fresh database of the test cluster, or on `cluster`'s.
    init(count: Int, environmentAdmin: Bool = true, on cluster: PrivateCluster? = nil) throws {
        if let cluster {
            (database, info) = (nil, cluster.info)
        } else {
            let database = try PostgresTestDatabase()
            (self.database, info) = (database, database.info)
        }
        directory = try TemporaryDirectory()
        self.environmentAdmin = environmentAdmin
        let started = Locked<[Int: Result<ServerProcess, any Error>]>([:])
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let result = Result { try self.makeServer(index) }
            started.withLock { $0[index] = result }
        }
        let results = started.withLock { $0 }.sorted { $0.key < $1.key }.map(\.value)
        // Those that started are stopped by `deinit` (it runs when an initializer of a class throws this late).
        servers.withLock { $0 = results.compactMap { try? $0.get() } }
        for result in results { _ = try result.get() }
    }

    deinit {
        servers.withLock { servers in
            for server in servers { server.stop(signal: SIGKILL) }
        }
        try? database?.drop()
    }

    /// Replica `index` (from 0).
    subscript(index: Int) -> ServerProcess { servers.withLock { $0[index] } }

    /// Starts one more replica.
    func add() throws -> ServerProcess {
        let server = try makeServer(servers.withLock { $0.count })
        servers.withLock { $0.append(server) }
        return server
    }

    /// The data directory of replica `index`.
    func data(_ index: Int) -> URL { directory.url.appendingPathComponent("replica-\(index)") }

    /// The environment of a replica.
    var environment: [String: String] {
        var environment = [
            "FLAGSERVER_POSTGRES": info.secretConnectionString, "FLAGSERVER_SIGNING_KEY": signingKey,
        ]
        if environmentAdmin { environment["FLAGSERVER_ADMIN_TOKEN"] = Self.admin }
        return environment
    }

    private func makeServer(_ index: Int) throws -> ServerProcess {
        try ServerProcess(
            arguments: ["--data", data(index).path], directory: BuiltProducts.repositoryRoot,
            environment: environment, log: directory.url.appendingPathComponent("replica-\(index).log"),
            timeout: .seconds(30))
    }

    /// Sends a request to replica `index` as the admin.
    func send(
        _ index: Int, _ method: String, _ target: String, token: String? = Replicas.admin,
        headers: [(String, String)] = [], body: String = ""
    ) throws -> TestResponse {
        try LiveClient(port: self[index].port).send(method, target, token: token, headers: headers, body: body)
    }

    /// A new SDK key of `ios-prod`, made through replica `index`, once every replica accepts it (within a second:
    /// the others learn of it from the store's notification).
    func sdkKey(through index: Int, name: String) throws -> String {
        let created = try send(index, "POST", "/v1/admin/sets/ios-prod/keys", body: #"{"name":"\#(name)"}"#)
        guard case .string(let key)? = try created.json("token") else {
            throw TestClientError(description: "no key in \(created.status) \(created.text)")
        }
        let count = servers.withLock { $0.count }
        let everywhere = waitUntil(timeout: .seconds(1), every: .milliseconds(10)) {
            (0..<count).allSatisfy { (try? self.send($0, "GET", "/v1/sets/ios-prod", token: key).status) == 200 }
        }
        guard everywhere else { throw TimedOut("the key \(name) did not work on every replica within a second") }
        return key
    }

    /// An open event stream of `ios-prod` on replica `index`, read past its first `put`.
    func stream(on index: Int, key: String) throws -> TestClient {
        let client = try TestClient(port: self[index].port, receiveTimeout: .seconds(10))
        client.send("GET /v1/sets/ios-prod/stream HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(key)\r\n\r\n")
        let head = try client.readHead()
        guard head.status == 200 else { throw TestClientError(description: "stream answered \(head.status)") }
        _ = client.readUntil("event: put")
        _ = client.readUntil("\n\n")
        return client
    }

    /// The version of `ios-prod` replica `index` serves.
    func version(_ index: Int, key: String) throws -> Int? {
        let response = try send(index, "GET", "/v1/sets/ios-prod", token: key)
        return response.header("ETag").flatMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
    }
}

extension PostgresTests {
    /// Three replicas on one database over real sockets: a change through one reaches the others' streams, keys
    /// count everywhere at once, concurrent writers stay ordered, and neither a killed replica nor a database
    /// that goes away loses an acknowledged write or stops client reads.
    @Suite("Replicas on one PostgreSQL", .enabled(if: ServerProcess.binary != nil), .live)
    struct ReplicaTests {
        @Test func replicasStartingTogetherSeedOnceAndMakeOneAdminToken() throws {
            let replicas = try Replicas(count: 3, environmentAdmin: false)
            let files = (0..<3).filter {
                FileManager.default.fileExists(atPath: replicas.data($0).appendingPathComponent("admin-token").path)
            }
            #expect(files.count == 1, "admin-token files in replicas \(files)")
            let maker = try #require(files.first)
            #expect(replicas[maker].output.contains("created the first admin token"))
            for other in (0..<3) where other != maker {
                #expect(replicas[other].output.contains("an admin token exists in the database already"))
            }
            let token = try String(
                contentsOf: replicas.data(maker).appendingPathComponent("admin-token"), encoding: .utf8
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            let seeded = try replicas.send(0, "GET", "/v1/admin/audit?limit=100", token: token)
            #expect(seeded.status == 200)
            let seeds = seeded.text.components(separatedBy: "\"set.seed\"").count - 1
            let files2 = try FileManager.default.contentsOfDirectory(
                atPath: BuiltProducts.repositoryRoot.appendingPathComponent("config/flagsets").path
            ).filter { $0.hasSuffix(".json") }
            #expect(seeds == files2.count)
            for index in 0..<3 {
                let sets = try replicas.send(index, "GET", "/v1/admin/sets", token: token)
                #expect(sets.status == 200 && sets.text.contains("\"name\":\"ios-prod\""))
                #expect(!replicas[index].output.contains(replicas.info.secretConnectionString))
            }
        }

        @Test func aSignedVersionWrittenThroughOneReplicaIsServedTheSameByEveryOther() throws {
            let replicas = try Replicas(count: 3)
            let key = try replicas.sdkKey(through: 0, name: "ios-signed")
            let listing = try replicas.send(1, "GET", "/v1/sets/ios-prod/signing-keys", token: key)
            guard case .array(let keys)? = try listing.json("keys"), case .object(let first)? = keys.first,
                case .string(let publicKey)? = first["publicKey"]
            else {
                Issue.record("no signing key: \(listing.text)")
                return
            }
            let trusted = try SigningKey(base64: publicKey)
            let stream = try replicas.stream(on: 2, key: key)
            #expect(try replicas.send(0, "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill").status == 200)
            let event = stream.readUntil("\n\n")
            let lines = event.split(separator: "\n").map(String.init).drop { $0 != "event: patch" }
            let signature = try #require(lines.first { $0.hasPrefix("signature: ") }?.dropFirst(11))
            let data = try #require(lines.first { $0.hasPrefix("data: ") }?.dropFirst(6))
            try trusted.verify(
                try Signature(headerValue: String(signature)),
                for: SignedMessage(set: "ios-prod", version: 2, baseVersion: 1, body: Array(data.utf8)))

            #expect(
                waitUntil(timeout: .seconds(2)) {
                    (0..<3).allSatisfy { (try? replicas.version($0, key: key)) == 2 }
                })
            let answers = try (0..<3).map { try replicas.send($0, "GET", "/v1/sets/ios-prod", token: key) }
            for answer in answers.dropFirst() {
                #expect(answer.body == answers[0].body)
                #expect(answer.header("Flagstaff-Signature") == answers[0].header("Flagstaff-Signature"))
            }
            try trusted.verify(
                try Signature(headerValue: try #require(answers[0].header("Flagstaff-Signature"))),
                for: SignedMessage(set: "ios-prod", version: 2, baseVersion: nil, body: answers[0].body))
        }

        @Test func aKillThroughOneReplicaReachesAStreamOnAnother() throws {
            let replicas = try Replicas(count: 3)
            let key = try replicas.sdkKey(through: 0, name: "ios-stream")
            let stream = try replicas.stream(on: 2, key: key)
            let clock = ContinuousClock()
            let start = clock.now
            let kill = try replicas.send(
                0, "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: #"{"reason":"incident"}"#)
            #expect(kill.status == 200)
            let received = stream.readUntil("\n\n")
            let elapsed = clock.now - start
            #expect(received.contains("event: patch"), "\(received)")
            #expect(received.contains("\"new-checkout\"") && received.contains("\"killed\":true"))
            // Milliseconds, measured in BENCHMARKS.md; the bound here only catches a patch that waited for the
            // once-a-second check instead of the notification.
            #expect(elapsed < .milliseconds(900), "the patch took \(elapsed)")
            #expect(try replicas.version(0, key: key) == 2)
            #expect(waitUntil(timeout: .seconds(1)) { (try? replicas.version(1, key: key)) == 2 })
        }

        @Test func anInstanceOnOneReplicaReportsThroughAnotherAndAThirdSeesIt() throws {
            let replicas = try Replicas(count: 3)
            let key = try replicas.sdkKey(through: 0, name: "ios-telemetry")
            let client = try TestClient(port: replicas[2].port, receiveTimeout: .seconds(10))
            client.send("GET /v1/sets/ios-prod/stream HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(key)\r\n\r\n")
            let id = try #require(try client.readHead().header("Flagstaff-Instance"))
            func report(version: Int) -> String {
                let report = TelemetryReport(
                    instance: id, sdk: .init(name: "FlagClient", version: "2.0.0"), version: version,
                    counts: ["new-checkout": ["beta-first": ["TARGETING_MATCH": 2]]])
                return String(decoding: report.encoded(), as: UTF8.self)
            }
            // Replica 2 writes the id to the store within half a second; replica 0 checks it there.
            let taken = waitUntil(timeout: .seconds(3), every: .milliseconds(100)) {
                (try? replicas.send(0, "POST", "/v1/sets/ios-prod/telemetry", token: key, body: report(version: 1)))?
                    .status == 204
            }
            #expect(taken)
            // Replica 0 took the report; it is in the store, for every replica, within its next flush.
            #expect(
                waitUntil(timeout: .seconds(3), every: .milliseconds(100)) {
                    (try? replicas.send(1, "GET", "/v1/admin/sets/ios-prod/clients"))?.text.contains(id) == true
                })
            let kill = try replicas.send(1, "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill")
            #expect(kill.status == 200)
            #expect(
                waitUntil(timeout: .seconds(10), every: .milliseconds(200)) {
                    (try? replicas.send(
                        0, "POST", "/v1/sets/ios-prod/telemetry", token: key, body: report(version: 2)))?
                        .status == 204
                })
            #expect(
                waitUntil(timeout: .seconds(3), every: .milliseconds(100)) {
                    let propagation = try? replicas.send(1, "GET", "/v1/admin/sets/ios-prod/versions/2/propagation")
                    return (try? propagation?.json("applied")) == .int(1)
                        && (try? propagation?.json("active")) == .int(1)
                })
            // Replica 0 took the counts; they are in the store within its next flush.
            #expect(
                waitUntil(timeout: .seconds(3), every: .milliseconds(100)) {
                    let usage = try? replicas.send(
                        2, "GET", "/v1/admin/sets/ios-prod/usage?key=new-checkout&days=1")
                    return usage?.text.contains("\"evaluations\":4") == true
                })
        }

        @Test func aKeyMadeOnOneReplicaWorksOnAnotherAndItsRevocationTooWithinASecond() throws {
            let replicas = try Replicas(count: 3)
            let key = try replicas.sdkKey(through: 1, name: "ios-new")
            let clock = ContinuousClock()
            var start = clock.now
            #expect(
                waitUntil(timeout: .seconds(1), every: .milliseconds(10)) {
                    (try? replicas.send(2, "GET", "/v1/sets/ios-prod", token: key).status) == 200
                })
            let accepted = clock.now - start
            start = clock.now
            #expect(try replicas.send(1, "DELETE", "/v1/admin/sets/ios-prod/keys/ios-new").status == 200)
            #expect(
                waitUntil(timeout: .seconds(1), every: .milliseconds(10)) {
                    (try? replicas.send(2, "GET", "/v1/sets/ios-prod", token: key).status) == 401
                })
            let refused = clock.now - start
            #expect(
                accepted < .seconds(1) && refused < .seconds(1),
                "accepted after \(accepted), refused after \(refused)")
        }

        /// A stream on another replica ends once the revocation reaches it, and a version written after
        /// the revocation never reaches it (the replica applies the store's notifications in commit order).
        @Test func revokingAKeyThroughOneReplicaEndsItsStreamOnAnother() throws {
            let replicas = try Replicas(count: 3)
            let key = try replicas.sdkKey(through: 0, name: "ios-revoked")
            let stream = try replicas.stream(on: 2, key: key)
            let clock = ContinuousClock()
            let start = clock.now
            #expect(try replicas.send(1, "DELETE", "/v1/admin/sets/ios-prod/keys/ios-revoked").status == 200)
            let kill = try replicas.send(
                0, "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: #"{"reason":"after"}"#)
            #expect(kill.status == 200)
            let rest = String(decoding: stream.readUntilClose(), as: UTF8.self)
            let elapsed = clock.now - start
            #expect(stream.sawClose)
            #expect(elapsed < .seconds(1), "closed after \(elapsed)")
            #expect(!rest.contains("event:"), "sent after the revocation: \(rest)")
            #expect(try replicas.send(2, "GET", "/v1/sets/ios-prod/stream", token: key).status == 401)
        }

        @Test func concurrentWritersWithTheSameIfMatchOnTwoReplicas() throws {
            let replicas = try Replicas(count: 3)
            for round in 0..<10 {
                let current = try #require(try replicas.send(0, "GET", "/v1/admin/sets/ios-prod").header("ETag"))
                let answers = Locked<[Int: TestResponse]>([:])
                DispatchQueue.concurrentPerform(iterations: 2) { index in
                    let response = try? replicas.send(
                        index, "PUT", "/v1/admin/sets/ios-prod/flags/search-timeout-ms/default",
                        headers: [("If-Match", current)], body: #"{"value":\#(1000 + round * 2 + index)}"#)
                    answers.withLock { $0[index] = response }
                }
                let statuses = answers.withLock { $0.values.map(\.status) }.sorted()
                #expect(statuses == [200, 409], "round \(round): \(statuses)")
                let loser = try #require(answers.withLock { $0.values.first { $0.status == 409 } })
                let base = Int(current.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) ?? 0
                #expect(try loser.json("error.currentVersion") == .int(Int64(base + 1)))
            }
            // Writers without If-Match on all three replicas at once: every write lands, one version each.
            DispatchQueue.concurrentPerform(iterations: 30) { index in
                let response = try? replicas.send(
                    index % 3, "POST",
                    "/v1/admin/sets/ios-prod/flags/new-checkout/"
                        + (index % 2 == 0 ? "kill" : "restore"), body: "{}")
                #expect(response?.status == 200, "\(String(describing: response?.text))")
            }
            let history = try replicas.send(2, "GET", "/v1/admin/sets/ios-prod/history?limit=1000")
            let versions = try #require(try history.json("versions"))
            guard case .array(let entries) = versions else { throw TestClientError(description: history.text) }
            let numbers = entries.compactMap { entry -> Int? in
                guard case .object(let members) = entry, case .int(let version)? = members["version"] else {
                    return nil
                }
                return Int(version)
            }
            #expect(numbers == Array((1...numbers.count).reversed()), "gap-free and totally ordered")
        }

        @Test func aReplicaKilledDuringWritesLosesNoAcknowledgedWrite() throws {
            let replicas = try Replicas(count: 3)
            let acknowledged = Locked<[Int: Int]>([:])
            let writer = Thread {
                for value in 1...10_000 {
                    guard
                        let response = try? replicas.send(
                            0, "PUT", "/v1/admin/sets/ios-prod/flags/search-timeout-ms/default",
                            body: #"{"value":\#(value)}"#),
                        response.status == 200, case .int(let version)? = try? response.json("version")
                    else { return }
                    acknowledged.withLock { $0[Int(version)] = value }
                }
            }
            writer.start()
            #expect(waitUntil(timeout: .seconds(20)) { acknowledged.withLock { $0.count } >= 20 })
            replicas[0].stop(signal: SIGKILL)
            Thread.sleep(forTimeInterval: 0.2)
            let written = acknowledged.withLock { $0 }
            #expect(written.count >= 20)
            for (version, value) in written.sorted(by: { $0.key < $1.key }) {
                let stored = try replicas.send(1, "GET", "/v1/sets/ios-prod/versions/\(version)")
                #expect(stored.status == 200)
                let flag = try stored.json("flags.search-timeout-ms.default")
                #expect(flag == .int(Int64(value)), "version \(version)")
            }
        }

        @Test func aReplicaStartedLaterServesTheLatestVersionAtOnce() throws {
            let replicas = try Replicas(count: 2)
            let key = try replicas.sdkKey(through: 0, name: "late")
            // Each write waits until the other replica serves it: a kill through a replica that has not yet
            // seen the restore before it would find the flag killed already, and make no version.
            for (index, action) in [
                (1, "kill"), (0, "restore"), (1, "kill"), (0, "restore"), (1, "kill"), (0, "restore"),
            ]
            .enumerated() {
                let write = try replicas.send(
                    action.0, "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/\(action.1)", body: "{}")
                #expect(write.status == 200)
                #expect(
                    waitUntil(timeout: .seconds(2)) { (try? replicas.version(1 - action.0, key: key)) == index + 2 }
                )
            }
            let late = try replicas.add()
            let first = try LiveClient(port: late.port).send("GET", "/v1/sets/ios-prod", token: key)
            #expect(first.status == 200)
            #expect(first.header("ETag") == "\"7\"")
        }

        /// The database stopped and started again while clients read and write: reads go on from memory, writes
        /// are 503 `store_unavailable` with `Retry-After`, `/healthz` is 200 "degraded", and everything resumes
        /// without a restart, the listening connection included.
        @Test func theDatabaseStoppedAndStartedAgainWhileClientsReadAndWrite() throws {
            try withPrivateCluster { cluster in
                let replicas = try Replicas(count: 2, on: cluster)
                let key = try replicas.sdkKey(through: 0, name: "outage")
                let stream = try replicas.stream(on: 1, key: key)
                let etag = try #require(try replicas.send(1, "GET", "/v1/sets/ios-prod", token: key).header("ETag"))
                try cluster.control("stop")

                for index in 0..<2 {
                    let document = try replicas.send(index, "GET", "/v1/sets/ios-prod", token: key)
                    #expect(document.status == 200 && document.header("ETag") == etag)
                    let unchanged = try replicas.send(
                        index, "GET", "/v1/sets/ios-prod", token: key, headers: [("If-None-Match", etag)])
                    #expect(unchanged.status == 304)
                    let ofrep = try replicas.send(
                        index, "POST", "/ofrep/v1/evaluate/flags/new-checkout", token: key,
                        body: #"{"context":{"targetingKey":"u-9"}}"#)
                    #expect(ofrep.status == 200)
                    let write = try replicas.send(
                        index, "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}")
                    #expect(write.status == 503, "\(write.text)")
                    #expect(try write.json("error.code") == .string("store_unavailable"))
                    #expect(write.header("Retry-After") == "2")
                    #expect(write.text.contains(replicas.info.redacted) && !write.text.contains(cluster.password))
                    let health = try replicas.send(index, "GET", "/healthz", token: nil)
                    #expect(health.status == 200)
                    #expect(try health.json("status") == .string("degraded"))
                    #expect(health.text.contains(replicas.info.redacted) && !health.text.contains(cluster.password))
                    let metrics = try replicas.send(index, "GET", "/metrics")
                    #expect(metrics.text.contains("flagserver_store_up 0\n"))
                }

                try cluster.control("start")
                var resumed: TestResponse?
                #expect(
                    waitUntil(timeout: .seconds(10), every: .milliseconds(100)) {
                        resumed = try? replicas.send(
                            0, "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill",
                            body: #"{"reason":"back"}"#)
                        return resumed?.status == 200
                    }, "\(String(describing: resumed?.text))")
                let patch = stream.readUntil("\n\n")
                #expect(patch.contains("event: patch") && patch.contains("\"killed\":true"), "\(patch)")
                #expect(
                    waitUntil {
                        (try? replicas.send(1, "GET", "/healthz", token: nil).json("status")) == .string("ok")
                    })
                for index in 0..<2 {
                    #expect(!replicas[index].output.contains(cluster.password))
                }
            }
        }

        /// A replica started while the database is unreachable waits, saying so about once a second, and
        /// listens only once the database answers; one with a wrong password stops at once.
        @Test func aReplicaWaitsForAnUnreachableDatabaseAndStopsOnAWrongPassword() throws {
            try withPrivateCluster { cluster in
                try cluster.control("stop")
                let directory = try TemporaryDirectory()
                let log = directory.url.appendingPathComponent("log")
                let binary = try #require(ServerProcess.binary)
                let environment = [
                    "FLAGSERVER_POSTGRES": cluster.info.secretConnectionString, "PATH": "/usr/bin:/bin",
                ]
                let pid = try Spawn.start(
                    binary.path,
                    ["--listen", "127.0.0.1:0", "--data", directory.url.appendingPathComponent("d").path],
                    environment: environment, directory: BuiltProducts.repositoryRoot.path, stdout: log.path)
                defer { _ = Spawn.stop(pid, signal: SIGKILL) }
                let spawned = Date()
                func written() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
                func said(_ text: String) -> Int {
                    text.components(separatedBy: "waiting for \(cluster.info.redacted)").count - 1
                }
                // Twice, then no more often than once a second since the start (a loaded machine starts it late).
                #expect(waitUntil(every: .milliseconds(50)) { said(written()) >= 2 }, "\(written())")
                let waiting = written()
                let seconds = Date().timeIntervalSince(spawned)
                #expect(Double(said(waiting)) <= seconds + 1, "\(waiting) in \(seconds) s")
                #expect(!waiting.contains("listening on") && !waiting.contains(cluster.password))
                #expect(!Spawn.hasEnded(pid))
                try cluster.control("start")
                #expect(waitUntil(every: .milliseconds(50)) { written().contains("listening on") }, "\(written())")

                let wrong = cluster.info.secretConnectionString.replacingOccurrences(
                    of: cluster.password, with: "not-the-password")
                let refusedLog = directory.url.appendingPathComponent("refused")
                let refused = try Spawn.start(
                    binary.path,
                    ["--listen", "127.0.0.1:0", "--data", directory.url.appendingPathComponent("e").path],
                    environment: ["FLAGSERVER_POSTGRES": wrong], directory: BuiltProducts.repositoryRoot.path,
                    stdout: refusedLog.path)
                let ended = Spawn.wait(refused)
                let text = try String(contentsOf: refusedLog, encoding: .utf8)
                #expect(ended.status == 1 && ended.exitedNormally)
                #expect(
                    text.contains("password authentication failed") && !text.contains("not-the-password"), "\(text)"
                )
            }
        }
    }
}
