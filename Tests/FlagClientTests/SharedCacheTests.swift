import FlagCore
import FlagSQLite
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// A read-only client (an app extension) on the cache another client (the app) writes, in one process: the app's
/// writes go through `FlagCache` as its refresh loop's do. The two-process tests are in SharedCacheLiveTests.
@Suite("Read-only clients of a shared cache", .live)
struct SharedCacheTests {
    /// A read-only client of `ios-prod` on `directory`, with `refresh` left at its default unless `refresh` is given.
    static func extensionClient(
        _ directory: URL, transport: ScriptedTransport = ScriptedTransport(), logs: LogSink? = nil,
        configure: (inout FlagClient.Configuration) -> Void = { _ in }
    ) throws -> FlagClient {
        var configuration = FlagClient.Configuration(
            server: URL(string: "http://flags.test")!, set: "ios-prod", sdkKey: "sdk-secret", cacheDirectory: directory)
        configuration.cacheAccess = .readOnly
        configuration.environment = [:]
        configuration.logger = logs?.logger
        configure(&configuration)
        let dependencies = ClientDependencies(
            now: { Docs.start }, random: { 0.5 }, sleep: { _ in try await Task.sleep(nanoseconds: 2_000_000) },
            transport: transport)
        return try FlagClient(configuration: configuration, dependencies: dependencies)
    }

    /// The app's side: stores `flags` as version `version` of `ios-prod`, as its refresh loop does.
    static func store(_ cache: FlagCache, version: Int, _ flags: Flag...) throws {
        let bytes = Docs.set(version: version, flags: flags).encoded()
        try cache.store(
            set: "ios-prod", document: .init(version: version, etag: "\"\(version)\"", bytes: bytes), now: Docs.start)
    }

    /// What the files of the cache hold and when they were last changed.
    static func snapshot(_ directory: URL) throws -> [String: (bytes: Data, modified: Date)] {
        var files: [String: (Data, Date)] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let url = directory.appendingPathComponent(name)
            let modified = try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date
            files[name] = (try Data(contentsOf: url), modified ?? .distantPast)
        }
        return files
    }

    @Test func refreshIsOffUnlessSetAndReadWriteStillStreams() {
        var configuration = FlagClient.Configuration(
            server: URL(string: "http://flags.test")!, set: "ios-prod", sdkKey: "k", cacheDirectory: nil)
        #expect(configuration.cacheAccess == .readWrite)
        #expect(configuration.refresh == .stream)
        configuration.cacheAccess = .readOnly
        #expect(configuration.refresh == .off)
        configuration.refresh = .poll
        #expect(configuration.refresh == .poll)
        configuration.cacheAccess = .readWrite
        #expect(configuration.refresh == .poll)
    }

    @Test func aReadOnlyClientMakesNoRequestByDefault() async throws {
        try await withTemporaryDirectory { directory in
            let app = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            try Self.store(app, version: 1, Docs.flag("new-checkout", true))
            let transport = ScriptedTransport()
            let client = try Self.extensionClient(directory, transport: transport)
            defer { client.shutdown() }
            #expect(client.session(unitID: "u-1").value(.newCheckout))
            try await Task.sleep(for: .milliseconds(200))
            #expect(transport.fetches.isEmpty)
            #expect(transport.streamRequests.isEmpty)
            #expect(client.state == .cached(version: 1))

            // Set explicitly, it refreshes (and stores nothing: see the next test).
            let refreshing = try Self.extensionClient(directory, transport: transport) { $0.refresh = .poll }
            defer { refreshing.shutdown() }
            try await eventually("a poll") { !transport.fetches.isEmpty }
        }
    }

    @Test func aReadOnlyClientWritesNothing() async throws {
        try await withTemporaryDirectory { directory in
            let app = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            try Self.store(app, version: 1, Docs.flag("new-checkout", true), Docs.flag("dark-mode", false))
            try app.setOverride(set: "ios-prod", key: "dark-mode", text: "true")
            let before = try Self.snapshot(directory)
            #expect(before.keys.sorted() == ["flagclient.sqlite", "flagclient.sqlite-shm", "flagclient.sqlite-wal"])
            try await Task.sleep(for: .milliseconds(20))  // so that a write would show in the modification times

            // A refresh set explicitly brings v2 into use; it must not be stored.
            let transport = ScriptedTransport { _ in
                (
                    TransportHead(status: 200, headers: ["etag": "\"2\""]),
                    Docs.bytes(version: 2, Docs.flag("new-checkout", false))
                )
            }
            let logs = LogSink()
            let client = try Self.extensionClient(directory, transport: transport, logs: logs) { $0.refresh = .poll }
            let persisted = client.session(id: "checkout-1", unitID: "u-1")
            #expect(persisted.value(.darkMode))  // the app's override applies
            _ = persisted.value(.newCheckout)
            client.setOverride(.newCheckout, to: true)
            #expect(client.session(unitID: "u-2").value(.newCheckout))
            client.setOverride(.darkMode, to: nil)
            #expect(client.session(unitID: "u-2").value(.darkMode) == false)  // cleared here, in memory
            try await eventually("v2 in use") { client.state == .live(version: 2) }
            client.reload()
            client.shutdown()

            let after = try Self.snapshot(directory)
            #expect(after.keys.sorted() == before.keys.sorted())
            // SQLite's shared-memory index is left out: in one process the extension's connection shares the app's
            // mapping of it (a reader marks there what it reads), so when it is written depends on the kernel's timing.
            // The two-process test checks that the extension never holds a write lock. The database and its log must
            // not change at all.
            for (name, file) in before where name != "flagclient.sqlite-shm" {
                #expect(after[name]?.modified == file.modified, "\(name) was touched")
                #expect(after[name]?.bytes == file.bytes, "\(name) changed")
            }
            #expect(try app.stored(set: "ios-prod")?.version == 1)
            #expect(try app.overrides(set: "ios-prod") == ["dark-mode": "true"])
            #expect(logs.messages.contains { $0.message.contains("applies in this process only") })
        }
    }

    @Test func aMissingCacheMeansTheBootstrapDocumentUntilTheAppWritesOne() throws {
        try withTemporaryDirectory { root in
            let directory = root.appendingPathComponent("group")
            let client = try Self.extensionClient(directory) {
                $0.bootstrap = Docs.bytes(version: 3, Docs.flag("new-checkout", true))
            }
            defer { client.shutdown() }
            #expect(client.state == .cached(version: 3))
            #expect(client.session(unitID: "u-1").value(.newCheckout))
            // Nothing created: not the cache, not even its directory.
            #expect(FileManager.default.fileExists(atPath: directory.path) == false)

            let app = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            try Self.store(app, version: 4, Docs.flag("new-checkout", false))
            #expect(client.session(unitID: "u-1").value(.newCheckout) == false)
            #expect(client.state == .cached(version: 4))
        }
    }

    @Test func aNewSessionReadsWhatTheAppStoredAndAKillReachesOpenSessions() throws {
        try withTemporaryDirectory { directory in
            let app = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            try Self.store(app, version: 1, Docs.flag("new-checkout", true), Docs.flag("dark-mode", true))
            let client = try Self.extensionClient(directory)
            defer { client.shutdown() }
            let open = client.session(unitID: "u-1")
            #expect(open.value(.newCheckout))
            #expect(open.value(.darkMode))

            try Self.store(app, version: 2, Docs.flag("new-checkout", false), Docs.flag("dark-mode", true))
            #expect(client.state == .cached(version: 1))  // nothing reads until a session starts
            let next = client.session(unitID: "u-1")
            #expect(client.state == .cached(version: 2))
            #expect(next.detail(.newCheckout).value == false)
            #expect(next.detail(.newCheckout).version == 2)
            #expect(open.value(.newCheckout))  // frozen

            try Self.store(
                app, version: 3, Docs.flag("new-checkout", false), Docs.flag("dark-mode", true, killed: true))
            _ = client.session(unitID: "u-9")
            #expect(open.value(.darkMode) == false)  // the kill reached the open session

            // The app's override, set in its debug menu, at the next check.
            try app.setOverride(set: "ios-prod", key: "new-checkout", text: "true")
            #expect(client.session(unitID: "u-1").detail(.newCheckout).reason == .override)
            try app.setOverride(set: "ios-prod", key: "new-checkout", text: nil)
            #expect(client.session(unitID: "u-1").detail(.newCheckout).reason != .override)

            // An older version is never put in use.
            try Self.store(app, version: 2, Docs.flag("new-checkout", true))
            _ = client.session(unitID: "u-1")
            #expect(client.state == .cached(version: 3))
        }
    }

    @Test func reloadReadsWithoutASessionAndDoesNothingForTheWriter() async throws {
        try await withTemporaryDirectory { directory in
            let app = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            try Self.store(app, version: 1, Docs.flag("new-checkout", true))
            let client = try Self.extensionClient(directory)
            defer { client.shutdown() }
            let updates = client.updates
            try Self.store(app, version: 2, Docs.flag("new-checkout", false))
            client.reload()
            #expect(client.state == .cached(version: 2))
            for await update in updates {
                #expect(update.version == 2)
                break
            }

            let writer = try makeClient(directory: directory, transport: ScriptedTransport(), refresh: .off)
            defer { writer.shutdown() }
            #expect(writer.state == .cached(version: 2))
            try Self.store(app, version: 5, Docs.flag("new-checkout", true))
            writer.reload()
            #expect(writer.state == .cached(version: 2))
        }
    }

    @Test func aReplacedCacheFileIsOpenedAgain() throws {
        try withTemporaryDirectory { directory in
            let app = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            try Self.store(app, version: 1, Docs.flag("new-checkout", true))
            let client = try Self.extensionClient(directory)
            defer { client.shutdown() }
            #expect(client.state == .cached(version: 1))
            // The app rebuilds a damaged cache: the file is moved aside and a new one written in its place.
            try app.rebuild(damaged: app.database, now: Docs.start)
            try Self.store(app, version: 7, Docs.flag("new-checkout", false))
            #expect(client.session(unitID: "u-1").value(.newCheckout) == false)
            #expect(client.state == .cached(version: 7))
        }
    }

    @Test func persistedSessionsResumeWhatTheAppStoredAndKeepTheirOwnInMemory() throws {
        try withTemporaryDirectory { directory in
            let app = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            try Self.store(app, version: 1, Docs.flag("new-checkout", true))
            _ = try app.resumeSession(id: "s-1", set: "ios-prod", unitID: "u-1", now: Docs.start, ttl: 3600)
            try app.saveSessionValues(
                id: "s-1", values: [("new-checkout", EvaluationDetail(value: .bool(false), reason: .static))],
                now: Docs.start)
            let client = try Self.extensionClient(directory)
            defer { client.shutdown() }
            #expect(client.session(id: "s-1", unitID: "u-1").value(.newCheckout) == false)
            #expect(client.session(id: "s-2", unitID: "u-1").value(.newCheckout))
            client.shutdown()
            #expect(try app.resumeSession(id: "s-2", set: "ios-prod", unitID: "u-1", now: Docs.start, ttl: 3600) == [:])
        }
    }

    @Test func afterShutdownNothingIsRead() throws {
        try withTemporaryDirectory { directory in
            let app = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            try Self.store(app, version: 1, Docs.flag("new-checkout", true))
            let client = try Self.extensionClient(directory)
            client.shutdown()
            try Self.store(app, version: 2, Docs.flag("new-checkout", false))
            #expect(client.session(unitID: "u-1").value(.newCheckout))
            client.reload()
            #expect(client.state == .cached(version: 1))
        }
    }

    @Test(arguments: [
        (#"{"type":"bool","killed":true}"#, true),
        (#"{"type": "bool", "killed" :  true}"#, true),
        (#"{"type":"bool","killed":false}"#, false),
        (#"{"type":"bool","description":"not \"killed\": true"}"#, false),
        (#"{"type":"bool"}"#, false),
    ])
    func aFlagIsDecodedForItsKillOnlyWhenItsBytesSayKilledTrue(_ json: String, _ mayBeKilled: Bool) {
        #expect(LazySource.mayBeKilled(Array(json.utf8)) == mayBeKilled)
    }

    @Test func aSetFromTheCacheFollowsTheExtensionsApplyPolicy() throws {
        try withTemporaryDirectory { directory in
            let app = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            try Self.store(app, version: 1, Docs.flag("new-checkout", true), Docs.flag("dark-mode", true))
            let client = try Self.extensionClient(directory) { $0.applyNewVersions = .manual }
            defer { client.shutdown() }
            try Self.store(
                app, version: 2, Docs.flag("new-checkout", false), Docs.flag("dark-mode", true, killed: true))
            let session = client.session(unitID: "u-1")
            #expect(client.pendingVersion == 2)
            #expect(client.state == .cached(version: 1))
            #expect(session.value(.newCheckout))  // waits
            #expect(session.value(.darkMode) == false)  // a kill does not wait
            #expect(client.activate())
            #expect(client.session(unitID: "u-1").value(.newCheckout) == false)
        }
    }
}
