import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// FlagClient against the real FlagServer, live on a free port with its own data directory; changes go through the
/// admin API. Serialized: some tests stop a server, and a port freed by one must not be taken by another meanwhile.
/// Waits are bounded (`eventually`, 5 s); nothing asserts how fast a change arrives.
@Suite("FlagClient end to end against a live FlagServer", .serialized, .live)
struct EndToEndTests {
    static let document = """
        {"schema": 1, "set": "e2e", "flags": {
          "new-checkout": {"type": "bool", "kind": "ops", "default": true, "killValue": false},
          "dark-mode": {"type": "bool", "kind": "ops", "default": true, "killValue": false},
          "max-items": {"type": "int", "kind": "ops", "default": 20, "killValue": 0}}}
        """

    /// A running server holding set `e2e` (version 1), and an SDK key for it.
    struct Fixture {
        let directory: URL
        let server: LiveFlagServer
        let sdkKey: String

        var cache: URL { directory.appendingPathComponent("cache") }

        /// Creates set `demo` on the server from the repository's config/flagsets/demo.json; an SDK key for it.
        func createDemoSet() async throws -> String {
            let demo = try String(
                contentsOf: BuiltProducts.repositoryRoot.appendingPathComponent("config/flagsets/demo.json"),
                encoding: .utf8)
            return try await server.createSet("demo", document: demo)
        }

        /// A client of set `e2e` built as an application builds it (live URLSession, system clock).
        func client(
            server url: URL? = nil, cache: URL? = nil, logs: LogSink? = nil,
            configure: (inout FlagClient.Configuration) -> Void = { _ in }
        ) throws -> FlagClient {
            var configuration = FlagClient.Configuration(
                server: url ?? server.url, set: "e2e", sdkKey: sdkKey, cacheDirectory: cache)
            configuration.environment = [:]
            configuration.logger = logs?.logger
            configure(&configuration)
            return try FlagClient(configuration: configuration)
        }
    }

    static func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        try await LiveFlagServer.withSet("e2e", document: document) { server, key, directory in
            try await body(Fixture(directory: directory, server: server, sdkKey: key))
        }
    }

    @Test func firstValueComesFromCompiledDefaultsWithNoServerAndNoCache() async throws {
        try await Self.withFixture { fixture in
            fixture.server.stop()
            let client = try fixture.client(cache: fixture.cache)
            defer { client.shutdown() }
            #expect(client.state == .defaultsOnly)
            let detail = client.session(unitID: "u-1").detail(.maxItems)
            #expect(detail.value == 10)
            #expect(detail.errorCode == .providerNotReady)
            #expect(detail.version == nil)
            #expect(await client.ready(timeout: .milliseconds(200)) == false)
        }
    }

    @Test func readyReturnsAfterTheFirstFreshSet() async throws {
        try await Self.withFixture { fixture in
            let client = try fixture.client(cache: fixture.cache)
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            #expect(client.state == .live(version: 1))
            let detail = client.session(unitID: "u-1").detail(.maxItems)
            #expect(detail.value == 20)
            #expect(detail.reason == .static)
            #expect(detail.version == 1)
        }
    }

    @Test func theCacheServesWhileTheServerIsDown() async throws {
        try await Self.withFixture { fixture in
            let first = try fixture.client(cache: fixture.cache)
            #expect(await first.ready(timeout: .patience))
            first.shutdown()
            fixture.server.stop()

            let client = try fixture.client(cache: fixture.cache)
            defer { client.shutdown() }
            #expect(client.state == .cached(version: 1))
            let detail = client.session(unitID: "u-1").detail(.maxItems)
            #expect(detail.value == 20)
            #expect(detail.version == 1)
            #expect(await client.ready(timeout: .milliseconds(300)) == false)
            #expect(client.state == .cached(version: 1))
        }
    }

    /// A cache older than the server is not called live: `ready` answers once the newer set is in use. (Found
    /// against the real server: the client used to call the cached set live as soon as the stream opened.)
    @Test func readyWaitsForTheNewerSetWhenTheCacheIsBehind() async throws {
        try await Self.withFixture { fixture in
            let first = try fixture.client(cache: fixture.cache)
            #expect(await first.ready(timeout: .patience))
            first.shutdown()
            let changed = try await fixture.server.admin(
                "POST", "/v1/admin/sets/e2e/flags/max-items/default", #"{"value": 30}"#)
            #expect(try changed.json("version") == .int(2))

            let client = try fixture.client(cache: fixture.cache)
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            #expect(client.state == .live(version: 2))
            #expect(client.session(unitID: "u-1").value(.maxItems) == 30)

            // And a current cache becomes live on the server's `: current` comment, with no heartbeat wait.
            let current = try fixture.client(cache: fixture.cache)
            defer { current.shutdown() }
            #expect(await current.ready(timeout: .patience))
            #expect(current.state == .live(version: 2))
        }
    }

    @Test func aChangeLeavesAnOpenSessionFrozenAndReachesANewOne() async throws {
        try await Self.withFixture { fixture in
            let client = try fixture.client()
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            let open = client.session(unitID: "u-1")
            #expect(open.value(.maxItems) == 20)

            let changed = try await fixture.server.admin(
                "POST", "/v1/admin/sets/e2e/flags/max-items/default", #"{"value": 30, "reason": "e2e"}"#)
            #expect(changed.status == 200)
            #expect(try changed.json("version") == .int(2))
            try await eventually("version 2 in use") { client.state == .live(version: 2) }

            let fresh = client.session(unitID: "u-1").detail(.maxItems)
            #expect(fresh.value == 30)
            #expect(fresh.version == 2)
            let frozen = open.detail(.maxItems)
            #expect(frozen.value == 20)
            #expect(frozen.version == 1)
        }
    }

    @Test func aKillReachesAnOpenSession() async throws {
        try await Self.withFixture { fixture in
            let client = try fixture.client()
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            let open = client.session(unitID: "u-1")
            #expect(open.value(.newCheckout) == true)
            #expect(open.value(.darkMode) == true)

            let killed = try await fixture.server.admin(
                "POST", "/v1/admin/sets/e2e/flags/new-checkout/kill", #"{"reason": "incident"}"#)
            #expect(killed.status == 200)
            try await eventually("the kill reaches the open session") {
                open.detail(.newCheckout).reason == .disabled
            }
            let detail = open.detail(.newCheckout)
            #expect(detail.value == false)
            #expect(detail.version == 2)
            #expect(open.value(.darkMode) == true)
            #expect(client.session(unitID: "u-2").detail(.newCheckout).reason == .disabled)
        }
    }

    @Test func aPersistedSessionResumesAfterTheClientIsRecreated() async throws {
        try await Self.withFixture { fixture in
            let first = try fixture.client(cache: fixture.cache)
            #expect(await first.ready(timeout: .patience))
            #expect(first.session(id: "checkout-1", unitID: "u-1").value(.maxItems) == 20)
            let changed = try await fixture.server.admin(
                "POST", "/v1/admin/sets/e2e/flags/max-items/default", #"{"value": 30}"#)
            #expect(changed.status == 200)
            try await eventually("version 2 in use") { first.state == .live(version: 2) }
            first.shutdown()

            let client = try fixture.client(cache: fixture.cache)
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            let resumed = client.session(id: "checkout-1", unitID: "u-1").detail(.maxItems)
            #expect(resumed.value == 20)
            #expect(resumed.version == 1)
            #expect(client.session(id: "checkout-2", unitID: "u-1").value(.maxItems) == 30)
        }
    }

    @Test func aCorruptCacheFileYieldsDefaultsAndIsRebuilt() async throws {
        try await Self.withFixture { fixture in
            // The first client must be gone, its database closed and its WAL checkpointed into the file, as after a
            // process exit; an open connection would still serve every page from the WAL.
            let firstCore = WeakReference<ClientCore>()
            do {
                let first = try fixture.client(cache: fixture.cache)
                #expect(await first.ready(timeout: .patience))
                first.shutdown()
                firstCore.value = first.core
            }
            try await eventually("the first client released") { firstCore.value == nil }
            // A weak reference reads nil as soon as `deinit` starts, while the thread that dropped the last reference
            // may still be closing the database, checkpointing the WAL into the file: overwriting the file then let
            // the checkpoint write valid pages back over the garbage (seen under TSan, and 1 run in 3 on a loaded
            // machine). SQLite empties the WAL (kept for app extensions) as the last step of closing, after the
            // checkpoint.
            let file = fixture.cache.appendingPathComponent(FlagCache.fileName)
            try await eventually("the first client's database closed") {
                let size = try? FileManager.default.attributesOfItem(atPath: file.path + "-wal")[.size] as? Int
                return size == 0
            }
            fixture.server.stop()
            try Data(repeating: 0x5A, count: 8192).write(to: file)

            // Server down, cache garbage: defaults, and the garbage moved aside.
            let logs = LogSink()
            let offline = try fixture.client(cache: fixture.cache, logs: logs)
            #expect(offline.state == .defaultsOnly)
            #expect(offline.session(unitID: "u-1").value(.maxItems) == 10)
            offline.shutdown()
            let names = try FileManager.default.contentsOfDirectory(atPath: fixture.cache.path)
            #expect(names.contains { $0.hasPrefix("\(FlagCache.fileName).corrupt-") })
            #expect(logs.messages.contains { $0.level == .warning && $0.message.contains("moved to") })

            // The server back (same store, new port): the new cache fills, and serves on its own afterwards.
            let restarted = try LiveFlagServer(dataDirectory: fixture.server.dataDirectory)
            defer { restarted.stop() }
            let online = try fixture.client(server: restarted.url, cache: fixture.cache)
            #expect(await online.ready(timeout: .patience))
            #expect(online.session(unitID: "u-1").value(.maxItems) == 20)
            online.shutdown()
            let cachedOnly = try fixture.client(server: restarted.url, cache: fixture.cache) { $0.refresh = .off }
            defer { cachedOnly.shutdown() }
            #expect(cachedOnly.state == .cached(version: 1))
            #expect(cachedOnly.session(unitID: "u-1").value(.maxItems) == 20)
        }
    }

    @Test(arguments: [true, false])
    func theEnvFileOverrideWinsUnlessDisabled(enabled: Bool) async throws {
        try await Self.withFixture { fixture in
            let file = fixture.directory.appendingPathComponent("flags.env")
            try Data("# local testing\nmax-items=7\nFLAG_DARK_MODE=false\n".utf8).write(to: file)
            let client = try fixture.client {
                $0.overridesFile = file.path
                $0.overridesEnabled = enabled
            }
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            let session = client.session(unitID: "u-1")
            let items = session.detail(.maxItems)
            let dark = session.detail(.darkMode)
            if enabled {
                #expect(items.value == 7)
                #expect(items.reason == .override)
                #expect(dark.value == false)
                #expect(dark.reason == .override)
            } else {
                #expect(items.value == 20)
                #expect(items.reason == .static)
                #expect(dark.value == true)
                #expect(dark.reason == .static)
            }
            #expect(session.detail(.newCheckout).reason == .static)
        }
    }
}

/// A weak reference the test can poll from another task.
final class WeakReference<Object: AnyObject>: @unchecked Sendable {
    // @unchecked Sendable is safe: `value` is only read and written while holding `lock`.
    private let lock = NSLock()
    private weak var object: Object?

    var value: Object? {
        get { lock.withLock { object } }
        set { lock.withLock { object = newValue } }
    }
}
