import FlagCore
import FlagSQLite
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// The cache made read-only, locked by another process, or impossible to create.
extension ChaosCacheTests {
    /// A sound cache file that is read-only: its set is served; new sets are served from memory, the failed writes
    /// logged once; the file is neither changed nor moved aside.
    @Test(.enabled(if: ChaosFileSystem.canMakeReadOnly))
    func aReadOnlyCacheFileServesItsSetAndNewSetsFromMemory() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Chaos.document(1, newCheckout: true, maxItems: 11), version: 1)
            let file = directory.appendingPathComponent(FlagCache.fileName)
            try #require(ChaosFileSystem.setReadOnly(file, true))
            defer { ChaosFileSystem.setReadOnly(file, false) }
            let (client, transport, logs) = try await Chaos.start(directory)
            defer { client.shutdown() }
            #expect(client.state == .cached(version: 1))
            try await Chaos.expectServing(client, version: 1, newCheckout: true, maxItems: 11)
            let stream = try await transport.openStream()
            try await Chaos.send(2, newCheckout: false, maxItems: 12, on: stream, to: client)
            _ = try await Chaos.bounded("a persisted session") { client.session(id: "s", unitID: "u").value(.maxItems) }
            _ = try await Chaos.bounded("setOverride") { client.setOverride(.maxItems, to: 5) }
            for _ in 0..<3 { stream.yield(.bytes(Array(": heartbeat\n\n".utf8))) }
            try await eventually("the failed write logged", timeout: .patience) {
                logs.messages.contains { $0.message.hasPrefix("could not cache set 'ios-prod' v2") }
            }
            #expect(logs.messages.filter { $0.message.hasPrefix("could not cache") }.count == 1)
            #expect(Chaos.movedAside(directory).isEmpty)
            #expect(try Chaos.cachedVersion(directory) == 1)
        }
    }

    /// Another process holds the cache's write lock: `init`, persisted sessions and their queued writes wait at most
    /// the cache's 250 ms busy timeout once (not SQLite's usual 5 s, not once per write), the cached set is served,
    /// a new set is in use at once, and cached once the lock is released.
    @Test func aCacheLockedByAnotherProcessBlocksNothing() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Chaos.document(1, newCheckout: true, maxItems: 11, padding: 20), version: 1)
            let other = try SQLiteDatabase(
                path: directory.appendingPathComponent(FlagCache.fileName).path, configuration: .client)
            try other.writeWithoutTransaction { db in try db.execute("BEGIN EXCLUSIVE") }
            let (client, transport, logs) = try await Chaos.start(directory, seconds: 1)
            defer { client.shutdown() }
            #expect(client.state == .cached(version: 1))
            try await Chaos.expectServing(client, version: 1, newCheckout: true, maxItems: 11)
            let persisted = try await Chaos.bounded("a persisted session", seconds: 1) {
                client.session(id: "s", unitID: "u").value(.maxItems)
            }
            #expect(persisted == 11)
            // Twenty first reads in a persisted session: twenty writes queued, which must not wait 250 ms each.
            let session = client.session(id: "many", unitID: "u")
            for index in 0..<20 { _ = session.value(FlagKey("padding-\(index)", default: false)) }
            _ = try await Chaos.bounded("the queued session writes", seconds: 1) { client.core.flushPersistence() }
            let stream = try await transport.openStream()
            try await Chaos.send(2, newCheckout: false, maxItems: 12, on: stream, to: client)
            try await eventually("the failed write logged", timeout: .patience) {
                logs.messages.contains { $0.message.hasPrefix("could not cache set 'ios-prod' v2") }
            }
            try other.writeWithoutTransaction { db in try db.execute("COMMIT") }
            // Writes fail at once for a second after a busy one: heartbeats until the retry gets through.
            try await eventually("cached once the lock is gone", timeout: .patience) {
                stream.yield(.bytes(Array(": heartbeat\n\n".utf8)))
                return (try? Chaos.cachedVersion(directory)) == 2
            }
            #expect(Chaos.movedAside(directory).isEmpty)
        }
    }

    /// The cache directory made read-only with a sound cache in it (the usual state after a clean exit: the `-wal`,
    /// emptied, and the `-shm` kept beside it for app extensions). SQLite needs to create nothing, so the client
    /// starts from the cache and caches new sets in the files that are there; nothing is moved aside.
    @Test(.enabled(if: ChaosFileSystem.canMakeReadOnly))
    func aReadOnlyCacheDirectoryWithACacheInIt() async throws {
        try await withTemporaryDirectory { directory in
            let cache = directory.appendingPathComponent("cache")
            try seedCache(cache, Chaos.document(1, newCheckout: true, maxItems: 11), version: 1)
            try #require(ChaosFileSystem.setReadOnly(cache, true))
            defer { ChaosFileSystem.setReadOnly(cache, false) }
            let (client, transport, logs) = try await Chaos.start(cache)
            defer { client.shutdown() }
            #expect(client.state == .cached(version: 1))
            #expect(!logs.messages.contains { $0.level == .error })
            try await Chaos.send(2, newCheckout: false, maxItems: 12, on: transport.openStream(), to: client)
            #expect(Chaos.movedAside(cache).isEmpty)
            ChaosFileSystem.setReadOnly(cache, false)
            #expect(try Chaos.cachedVersion(cache) == 2)
        }
    }

    /// The cache file made read-only while the client runs: its writes go on to the WAL, which stays writable, and
    /// another client starting on it (still read-only) finds the newer set there.
    @Test(.enabled(if: ChaosFileSystem.canMakeReadOnly))
    func aCacheFileMadeReadOnlyWhileRunning() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Chaos.document(1, newCheckout: true, maxItems: 11), version: 1)
            let (client, transport, logs) = try await Chaos.start(directory)
            defer { client.shutdown() }
            let stream = try await transport.openStream()
            try await Chaos.sendCurrent(1, on: stream, to: client)
            let file = directory.appendingPathComponent(FlagCache.fileName)
            try #require(ChaosFileSystem.setReadOnly(file, true))
            defer { ChaosFileSystem.setReadOnly(file, false) }
            try await Chaos.send(2, newCheckout: false, maxItems: 12, on: stream, to: client)
            #expect(!logs.messages.contains { $0.level >= .warning })
            let next = try await Chaos.bounded("init of the next client") {
                try makeClient(directory: directory, transport: ScriptedTransport(), refresh: .off)
            }
            defer { next.shutdown() }
            #expect(next.state == .cached(version: 2))
            #expect(Chaos.movedAside(directory).isEmpty)
        }
    }

    /// No cache can be created at all (a read-only, empty directory): the client works in memory.
    @Test(.enabled(if: ChaosFileSystem.canMakeReadOnly))
    func anUnwritableCacheDirectoryLeavesTheClientWorkingInMemory() async throws {
        try await withTemporaryDirectory { directory in
            let cache = directory.appendingPathComponent("cache")
            try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
            try #require(ChaosFileSystem.setReadOnly(cache, true))
            defer { ChaosFileSystem.setReadOnly(cache, false) }
            let (client, transport, logs) = try await Chaos.start(cache)
            defer { client.shutdown() }
            #expect(client.core.cache == nil)
            #expect(logs.messages.contains { $0.level == .error && $0.message.hasPrefix("no flag cache") })
            try await Chaos.send(1, newCheckout: true, maxItems: 12, on: transport.openStream(), to: client)
            let persisted = try await Chaos.bounded("a persisted session") {
                client.session(id: "s", unitID: "u").value(.maxItems)
            }
            #expect(persisted == 12)
        }
    }
}
