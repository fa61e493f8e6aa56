import FlagCore
import FlagLock
import FlagSQLite
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

@Suite(.live) struct ClientStartupTests {
    @Test func firstValueFromCompiledDefaultsWithNoServerAndNoCache() async throws {
        var configuration = FlagClient.Configuration(
            server: URL(string: "http://127.0.0.1:1")!, set: "ios-prod", sdkKey: "k", cacheDirectory: nil)
        configuration.environment = [:]
        let client = try FlagClient(configuration: configuration)
        #expect(client.state == .defaultsOnly)
        let session = client.session(unitID: "u-1")
        #expect(session.value(.newCheckout) == false)
        #expect(session.value(.maxItems) == 10)
        let detail = session.detail(.maxItems)
        #expect(detail.reason == .default)
        #expect(detail.errorCode == .providerNotReady)
        #expect(detail.version == nil)
        client.shutdown()
    }

    @Test func valuesFromTheCacheWithTheServerUnreachable() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Docs.bytes(version: 4, Docs.flag("new-checkout", true)), version: 4)
            var configuration = FlagClient.Configuration(
                server: URL(string: "http://127.0.0.1:1")!, set: "ios-prod", sdkKey: "k", cacheDirectory: directory)
            configuration.environment = [:]
            let client = try FlagClient(configuration: configuration)
            #expect(client.state == .cached(version: 4))
            let detail = client.session(unitID: "u-1").detail(.newCheckout)
            #expect(detail.value == true)
            #expect(detail.reason == .static)
            #expect(detail.version == 4)
            #expect(await client.ready(timeout: .milliseconds(300)) == false)
            #expect(client.state == .cached(version: 4))
            client.shutdown()
        }
    }

    @Test func corruptCacheIsMovedAsideAndRebuiltWhileDefaultsAreServed() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent(FlagCache.fileName).path
            try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))
            let logs = LogSink()
            let client = try makeClient(directory: directory, transport: ScriptedTransport(), refresh: .off) {
                $0.logger = logs.logger
            }
            #expect(client.state == .defaultsOnly)
            #expect(client.session(unitID: "u").detail(.newCheckout).errorCode == .providerNotReady)
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            let aside = "\(FlagCache.fileName).corrupt-\(Int(Docs.start.timeIntervalSince1970))"
            #expect(files.contains(aside))
            #expect(logs.messages.contains { $0.level == .warning && $0.message.contains("moved to") })
            // The rebuilt file works.
            let cache = try #require(client.core.cache)
            try cache.store(set: "ios-prod", document: .init(version: 1, etag: nil, bytes: [1]), now: Docs.start)
            #expect(try cache.document(set: "ios-prod")?.version == 1)
            #expect(try cache.database.quickCheck().isEmpty)
        }
    }

    @Test func moveAsideTakesTheWALAndSHMFilesAlong() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("x.sqlite").path
            for suffix in ["", "-wal", "-shm"] {
                try Data(suffix.utf8).write(to: URL(fileURLWithPath: path + suffix))
            }
            let aside = try FlagCache.moveAside(path: path, now: Date(timeIntervalSince1970: 7))
            #expect(aside == path + ".corrupt-7")
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(files == ["x.sqlite.corrupt-7", "x.sqlite.corrupt-7-shm", "x.sqlite.corrupt-7-wal"])
        }
    }

    @Test func cacheStoresAndLoadsTheLastDocumentWithItsETag() async throws {
        try withTemporaryDirectory { directory in
            let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            #expect(try cache.document(set: "ios-prod") == nil)
            try cache.store(
                set: "ios-prod", document: .init(version: 1, etag: "\"1\"", bytes: [1, 2]), now: Docs.start)
            try cache.store(set: "ios-prod", document: .init(version: 2, etag: "\"2\"", bytes: [3]), now: Docs.start)
            try cache.store(set: "other", document: .init(version: 9, etag: nil, bytes: [9]), now: Docs.start)
            #expect(try cache.document(set: "ios-prod") == .init(version: 2, etag: "\"2\"", bytes: [3]))
            #expect(
                try cache.database.read { db in try db.queryFirst("PRAGMA journal_mode") { try $0.text(0) } }
                    == "wal")
            #expect(try cache.database.read { db in try db.queryFirst("PRAGMA synchronous") { try $0.int(0) } } == 1)
        }
    }

    @Test func bootstrapSeedsAnEmptyCache() async throws {
        try withTemporaryDirectory { directory in
            let client = try makeClient(directory: directory, transport: ScriptedTransport(), refresh: .off) {
                $0.bootstrap = Docs.bytes(version: 2, Docs.flag("new-checkout", true))
            }
            #expect(client.state == .cached(version: 2))
            #expect(client.session(unitID: "u").value(.newCheckout))
            #expect(try client.core.cache?.document(set: "ios-prod")?.version == 2)
        }
    }

    /// `shutdown` closes the cache while the client is still referenced: the last connection's close checkpoints
    /// and empties the `-wal` file (kept, with the `-shm`, for read-only clients of app extensions), and the next
    /// client on the directory reads the set at once.
    @Test func shutdownReleasesTheCacheFile() async throws {
        try withTemporaryDirectory { directory in
            let client = try makeClient(directory: directory, transport: ScriptedTransport(), refresh: .off) {
                $0.bootstrap = Docs.bytes(version: 2, Docs.flag("new-checkout", true))
            }
            let wal = directory.appendingPathComponent(FlagCache.fileName + "-wal").path
            #expect(try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int ?? 0 > 0)
            client.shutdown()
            #expect(try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int == 0)
            #expect(client.session(unitID: "u").value(.newCheckout))
            let next = try makeClient(directory: directory, transport: ScriptedTransport(), refresh: .off)
            defer { next.shutdown() }
            #expect(next.state == .cached(version: 2))
            withExtendedLifetime(client) {}
        }
    }

    @Test func lazyCachedSetEvaluatesLikeTheCompiledSet() async throws {
        let set = try FlagSet.decode(Array(Self.targetedSet.utf8))
        let bytes = set.encoded()
        let lazy = LazySource(index: try DocumentIndex(scanning: bytes))
        let compiled = CompiledSource(CompiledFlagSet(set))
        let now = Docs.start
        for unit in ["u-1", "u-2", "beta-1", "qa-1"] {
            for country in ["DE", "FR"] {
                let context = EvaluationContext(unitID: unit, attributes: ["country": country])
                for key in ["new-checkout", "limit", "missing"] {
                    let type: FlagType = key == "limit" ? .int : .bool
                    let a = lazy.evaluate(key, type: type, default: .null, context: context, at: now)
                    let b = compiled.evaluate(key, type: type, default: .null, context: context, at: now)
                    #expect(a == b, "\(key) for \(unit) in \(country)")
                }
            }
        }
        #expect(lazy.version == 3)
    }

    @Test func storedIndexReadsBackTheSameRanges() throws {
        let bytes = try FlagSet.decode(Array(Self.targetedSet.utf8)).encoded()
        let scanned = try DocumentIndex(scanning: bytes)
        let stored = try #require(DocumentIndex(bytes: bytes, encodedIndex: scanned.encoded()))
        #expect(stored.name == "ios-prod")
        #expect(stored.version == 3)
        #expect(stored.schema == 1)
        #expect(stored.cohorts == scanned.cohorts)
        for key in ["new-checkout", "limit"] {
            #expect(stored.flag(key) == scanned.flag(key))
            let flag = try Flag.decode(try #require(stored.flag(key)), key: key)
            #expect(flag.flag != nil)
        }
        #expect(stored.flag("missing") == nil)
    }

    @Test(arguments: [0, 1, 5, 20])
    func damagedStoredIndexIsRejected(_ cut: Int) throws {
        let bytes = try FlagSet.decode(Array(Self.targetedSet.utf8)).encoded()
        let encoded = try DocumentIndex(scanning: bytes).encoded()
        #expect(DocumentIndex(bytes: bytes, encodedIndex: Array(encoded.dropLast(cut + 1))) == nil)
        // Ranges beyond the document are rejected too.
        #expect(DocumentIndex(bytes: Array(bytes.prefix(10)), encodedIndex: encoded) == nil)
    }

    @Test func launchUsesTheStoredIndex() async throws {
        try withTemporaryDirectory { directory in
            let bytes = try FlagSet.decode(Array(Self.targetedSet.utf8)).encoded()
            let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
            let index = try DocumentIndex(scanning: bytes).encoded()
            try cache.store(
                set: "ios-prod", document: .init(version: 3, etag: nil, bytes: bytes, index: index), now: Docs.start)
            let client = try makeClient(directory: directory, transport: ScriptedTransport(), refresh: .off)
            #expect(client.state == .cached(version: 3))
            #expect(client.session(unitID: "qa-1").detail(.newCheckout).variant == "override:qa")
            client.shutdown()
        }
    }

    @Test func invalidConfigurationThrows() {
        #expect(throws: FlagClientError.self) {
            _ = try makeClient(directory: nil, transport: ScriptedTransport()) { $0.set = "Bad Set" }
        }
        #expect(throws: FlagClientError.self) {
            _ = try makeClient(directory: nil, transport: ScriptedTransport()) {
                $0.server = URL(string: "ftp://flags.test")!
            }
        }
    }

    static let targetedSet = """
        {"schema":1,"set":"ios-prod","version":3,
         "cohorts":{"beta":{"include":["beta-1"],"groups":[[{"attribute":"country","op":"eq","values":["DE"]}]]},
                    "qa":{"include":["qa-1"]}},
         "flags":{"new-checkout":{"type":"bool","default":false,
                    "overrides":[{"cohort":"qa","value":true}],
                    "rules":[{"name":"beta","cohort":"beta","value":true}]},
                  "limit":{"type":"int","default":5,"rollout":{"percent":50,"value":9}}}}
        """
}

@Suite(.live) struct CacheRebuildTests {
    @Test func damagedCacheFoundAfterOpeningIsMovedAsideAndRebuilt() async throws {
        try withTemporaryDirectory { directory in
            let messages = Locked<[String]>([])
            let cache = try FlagCache.open(directory: directory, now: Docs.start) { _, message in
                messages.withLock { $0.append(message) }
            }
            try cache.store(set: "ios-prod", document: .init(version: 1, etag: nil, bytes: [1]), now: Docs.start)
            let old = cache.database
            try cache.rebuild(damaged: old, now: Docs.start)
            #expect(try cache.document(set: "ios-prod") == nil)
            #expect(throws: (any Error).self) { try old.read { _ in () } }  // the old one is closed
            let aside = directory.appendingPathComponent("\(FlagCache.fileName).corrupt-1795000000").path
            #expect(FileManager.default.fileExists(atPath: aside))
            #expect(messages.withLock { $0.count } == 1)
            // Rebuilding a database already replaced does nothing.
            try cache.rebuild(damaged: old, now: Docs.start)
            #expect(messages.withLock { $0.count } == 1)
        }
    }
}

@Suite(.live) struct BackgroundCompileTests {
    @Test func cachedSetIsCompiledWholeInTheBackgroundWithoutReapplyingKills() async throws {
        try await withTemporaryDirectory { directory in
            let killed = Docs.flag("dark-mode", true, killed: true)
            try seedCache(directory, Docs.bytes(version: 4, Docs.flag("new-checkout", true), killed), version: 4)
            let transport = ScriptedTransport()
            let client = try makeClient(directory: directory, transport: transport)
            let early = client.session(unitID: "u")
            #expect(early.value(.newCheckout) == true)
            try await eventually("compiled") { client.core.source is CompiledSource }
            #expect(client.state == .cached(version: 4))
            // The killed flag was not read by `early` before: the same version in another form kills nothing new,
            // so a restore in v5 reaches it like any other session.
            let stream = try await transport.openStream()
            let restored = Docs.set(version: 5, flags: [Docs.flag("new-checkout", true), Docs.flag("dark-mode", true)])
            stream.yield(.bytes(Docs.sse("put", id: 5, String(decoding: restored.encoded(), as: UTF8.self))))
            try await eventually("v5") { client.state == .live(version: 5) }
            #expect(early.detail(.darkMode).reason == .static)
            #expect(early.detail(.newCheckout).version == 4)
            client.shutdown()
        }
    }
}
