import FlagCore
import FlagSQLite
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// Under `.manual` a version waits across relaunches until `activate()`; under the other policies a launch starts
/// from the newest version stored.
@Suite(.live) struct ApplyPolicyRelaunchTests {
    /// v1 serves both flags on; v2 kills `new-checkout` and turns `dark-mode` off.
    static let v1 = Docs.bytes(version: 1, Docs.flag("new-checkout", true), Docs.flag("dark-mode", true))
    static let v2 = Docs.document(
        2, Docs.flag("new-checkout", true, killed: true), Docs.flag("dark-mode", false))

    static func relaunch(
        _ directory: URL, _ policy: FlagClient.ApplyPolicy, transport: ScriptedTransport = ScriptedTransport()
    ) throws -> FlagClient {
        try makeClient(directory: directory, transport: transport) { $0.applyNewVersions = policy }
    }

    @Test func aWaitingVersionWaitsAcrossARelaunchUntilActivate() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Self.v1, version: 1)
            let (client, stream) = try await ApplyPolicyTests.client(directory, .manual)
            stream.yield(.bytes(Array(": current\n\n".utf8)))
            try await eventually("live") { client.state == .live(version: 1) }
            stream.yield(.bytes(Docs.sse("put", id: 2, Self.v2)))
            try await eventually("v2 waits") { client.pendingVersion == 2 }
            try await eventually("v2 stored") { (try? client.core.cache?.document(set: "ios-prod")?.version) == 2 }
            #expect(try client.core.cache?.activated(set: "ios-prod")?.version == 1)
            client.shutdown()

            // Offline: v1 in use, v2 waits, and v2's kill applies; its other change does not.
            let transport = ScriptedTransport()
            let restarted = try Self.relaunch(directory, .manual, transport: transport)
            #expect(restarted.state == .cached(version: 1))
            #expect(restarted.pendingVersion == 2)
            let session = restarted.session(unitID: "u")
            #expect(session.detail(.newCheckout).reason == .disabled)
            #expect(session.value(.newCheckout) == false)
            #expect(session.value(.darkMode) == true)
            #expect(session.detail(.darkMode).version == 1)
            // The refresh loop carries on from the newest version, not from the one in use.
            _ = try await transport.stream(0)
            #expect(transport.streamRequests.first?.headers["Last-Event-ID"] == "2")
            // Both are compiled whole in the background, and the newest keeps waiting.
            try await eventually("compiled") {
                restarted.core.current.withLock {
                    $0.versions.inUse is CompiledSource && $0.versions.pending is CompiledSource
                }
            }
            #expect(restarted.state == .cached(version: 1))
            #expect(restarted.session(unitID: "u").value(.darkMode) == true)

            #expect(restarted.activate())
            #expect(restarted.state == .cached(version: 2))
            #expect(restarted.pendingVersion == nil)
            #expect(restarted.session(unitID: "u").value(.darkMode) == false)
            #expect(try restarted.core.cache?.activated(set: "ios-prod") == nil)
            restarted.shutdown()

            let again = try Self.relaunch(directory, .manual)
            defer { again.shutdown() }
            #expect(again.state == .cached(version: 2))
            #expect(again.pendingVersion == nil)
            #expect(again.session(unitID: "u").value(.darkMode) == false)
        }
    }

    /// The cache as a `.manual` client leaves it when v2 arrived while v1 was in use: v2 stored, v1 set aside.
    static func seedWaiting(_ directory: URL) throws {
        try seedCache(directory, Self.v1, version: 1)
        let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
        let v2 = Array(Self.v2.utf8)
        try cache.store(
            set: "ios-prod", document: .init(version: 2, etag: "\"2\"", bytes: v2), keepingActivated: { 1 },
            now: Docs.start)
        cache.close()
    }

    /// Stores `version` of the set (new-checkout on) as a client does when it arrives while `activated` is in use.
    static func store(version: Int, in cache: FlagCache, activated: Int) throws {
        let bytes = Docs.bytes(version: version, Docs.flag("new-checkout", true))
        try cache.store(
            set: "ios-prod", document: .init(version: version, etag: nil, bytes: bytes),
            keepingActivated: { activated }, now: Docs.start)
    }

    /// Only `.manual` starts from the version set aside; the other policies start from the newest and forget it.
    @Test(arguments: [FlagClient.ApplyPolicy.nextSession, .nextLaunch, .manual])
    func aLaunchStartsFromTheActivatedVersionOnlyUnderManual(policy: FlagClient.ApplyPolicy) throws {
        try withTemporaryDirectory { directory in
            try Self.seedWaiting(directory)
            let client = try Self.relaunch(directory, policy)
            defer { client.shutdown() }
            let manual = policy == .manual
            #expect(client.state == .cached(version: manual ? 1 : 2))
            #expect(client.pendingVersion == (manual ? 2 : nil))
            #expect(client.session(unitID: "u").value(.darkMode) == manual)
            #expect(client.session(unitID: "u").detail(.newCheckout).reason == .disabled)
            #expect(try client.core.cache?.activated(set: "ios-prod")?.version == (manual ? 1 : nil))
        }
    }

    /// An app extension reads the newest version the app stored, as before (and writes nothing).
    @Test func aReadOnlyClientReadsTheNewest() throws {
        try withTemporaryDirectory { directory in
            try Self.seedWaiting(directory)
            let client = try makeClient(directory: directory, transport: ScriptedTransport()) {
                $0.applyNewVersions = .manual
                $0.cacheAccess = .readOnly
            }
            defer { client.shutdown() }
            #expect(client.state == .cached(version: 2))
            #expect(client.pendingVersion == nil)
            let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            defer { cache.close() }
            #expect(try cache.activated(set: "ios-prod")?.version == 1)
        }
    }

    /// Once a version is set aside, newer ones leave it alone while it is in use: it is the one activated.
    @Test func laterArrivalsKeepTheVersionSetAside() throws {
        try withTemporaryDirectory { directory in
            try Self.seedWaiting(directory)
            let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            defer { cache.close() }
            try Self.store(version: 3, in: cache, activated: 1)
            #expect(try cache.activated(set: "ios-prod")?.document.bytes == Self.v1)
            #expect(try cache.stored(set: "ios-prod")?.version == 3)
            // The same version again (a document replacing its patches) sets nothing aside.
            try Self.store(version: 3, in: cache, activated: 3)
            #expect(try cache.activated(set: "ios-prod")?.version == 1)
        }
    }

    /// `activate()` forgets the copy only when the newest cached is the version activated: when a newer one was
    /// stored meanwhile, the copy stays, and the next arrival replaces a copy of a version no longer in use.
    @Test func activationAndArrivalInEitherOrder() throws {
        try withTemporaryDirectory { directory in
            try Self.seedWaiting(directory)  // v1 aside, v2 cached
            let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            defer { cache.close() }
            try Self.store(version: 3, in: cache, activated: 1)
            // v2 activated while v3 was being stored: v1 stays the version a relaunch starts from.
            try cache.discardActivated(set: "ios-prod", activated: { 2 }, now: Docs.start)
            #expect(try cache.activated(set: "ios-prod")?.version == 1)
            // v3 activated: nothing newer is cached, the copy goes.
            try cache.discardActivated(set: "ios-prod", activated: { 3 }, now: Docs.start)
            #expect(try cache.activated(set: "ios-prod") == nil)

            // A copy left from before an activation whose removal failed: v4 arriving while v3 is in use replaces it.
            try Self.seedWaiting(directory)  // v1 aside again, v2 cached
            try Self.store(version: 4, in: cache, activated: 2)
            #expect(try cache.activated(set: "ios-prod")?.version == 2)
        }
    }

    /// A cache written before the activated version was kept opens, keeps its set, and gains the new tables.
    @Test func aCacheOfTheEarlierSchemaOpens() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent(FlagCache.fileName).path
            let old = try SQLiteDatabase(path: path, configuration: FlagCache.configuration)
            let earlier = FlagCache.migrator.migrations.filter { $0.version <= 3 }
            _ = try SQLiteMigrator(earlier).migrate(old)
            try old.write { db in
                try db.execute(
                    "INSERT INTO flag_set_cache (set_name, version, etag, document, stored_at) VALUES (?, 1, NULL, ?, 0)",
                    [.text("ios-prod"), .blob(Self.v1)])
            }
            try old.close()

            let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            defer { cache.close() }
            #expect(try FlagCache.migrator.appliedVersions(cache.database).contains(4))
            #expect(try cache.stored(set: "ios-prod")?.document.bytes == Self.v1)
            #expect(try cache.activated(set: "ios-prod") == nil)
        }
    }

    /// With trusted keys the version set aside is the signed document, and the waiting one its signed patch after
    /// it; both verify at the relaunch.
    @Test func aSignedWaitingVersionWaitsAcrossARelaunch() async throws {
        try await withTemporaryDirectory { directory in
            let key = try Signed.key(1)
            let server = try SigningSetServer(set: "ios-prod", key: key, document: Signed.document(1, items: 20))
            defer { server.stop() }
            let logs = LogSink()
            let client = try Signed.client(server.url, cache: directory, trusting: [key.signingKey], logs: logs) {
                $0.applyNewVersions = .manual
            }
            #expect(await client.ready(timeout: .patience))
            let killed = Docs.flag("new-checkout", true, killed: true)
            var v2 = Signed.document(2, items: 30)
            v2.flags["new-checkout"] = killed
            var patch = Signed.patch(2, items: 30)
            patch.flags["new-checkout"] = killed.encoded()
            try server.publish(v2, patch: patch)
            try await eventually("v2 waits", timeout: .patience) { client.pendingVersion == 2 }
            try await eventually("v2 stored as a patch", timeout: .patience) {
                (try? client.core.cache?.stored(set: "ios-prod")?.patches.count) == 1
            }
            client.shutdown()

            let restart = {
                try Signed.client(server.url, cache: directory, trusting: [key.signingKey], logs: logs) {
                    $0.applyNewVersions = .manual
                    $0.refresh = .off
                }
            }
            let restarted = try restart()
            #expect(restarted.state == .cached(version: 1))
            #expect(restarted.pendingVersion == 2)
            #expect(Signed.served(restarted) == (20, 1))
            #expect(restarted.session(unitID: "u").detail(.newCheckout).reason == .disabled)
            #expect(restarted.activate())
            #expect(Signed.served(restarted) == (30, 2))
            restarted.shutdown()

            let again = try restart()
            defer { again.shutdown() }
            #expect(again.state == .cached(version: 2))
            #expect(again.pendingVersion == nil)
            #expect(logs.refusals.isEmpty)
        }
    }
}
