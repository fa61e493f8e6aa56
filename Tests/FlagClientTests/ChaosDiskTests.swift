import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// The cache on a file system that is full, for real: a 256 KiB tmpfs mounted on the test's directory (where the
/// sandbox allows mounting; elsewhere the read-only cases of `ChaosCacheTests` stand in).
@Suite("Chaos: the cache's disk is full", .enabled(if: ChaosFileSystem.canMountTmpfs), .live)
struct ChaosDiskTests {
    static func withTmpfs(_ body: (URL, TmpfsMount) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let mountPoint = directory.appendingPathComponent("tmpfs")
            try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
            let mount = try #require(TmpfsMount(at: mountPoint, kilobytes: 256))
            defer { mount.unmount() }
            try await body(mountPoint.appendingPathComponent("cache"), mount)
        }
    }

    /// The disk fills while the client runs: a new set is served from memory, the failed write is logged once, and
    /// the cache catches up at the first heartbeat after space is freed.
    @Test func aFullDiskKeepsNewSetsInMemoryUntilThereIsRoom() async throws {
        try await Self.withTmpfs { cache, mount in
            try seedCache(cache, Chaos.document(1, newCheckout: true), version: 1)
            let (client, transport, logs) = try await Chaos.start(cache)
            defer { client.shutdown() }
            let stream = try await transport.openStream()
            try await Chaos.sendCurrent(1, on: stream, to: client)

            let filler = mount.fill()
            // About 40 KB: more than any page SQLite may still have free.
            try await Chaos.send(2, newCheckout: false, maxItems: 12, padding: 300, on: stream, to: client)
            try await eventually("the failed write logged", timeout: .patience) {
                logs.messages.contains { $0.message.hasPrefix("could not cache set 'ios-prod' v2") }
            }
            _ = try await Chaos.bounded("a persisted session on a full disk") {
                client.session(id: "s", unitID: "u").value(.maxItems)
            }
            _ = try await Chaos.bounded("setOverride on a full disk") { client.setOverride(.maxItems, to: 5) }
            stream.yield(.bytes(Array(": heartbeat\n\n".utf8)))
            try await Task.sleep(nanoseconds: 20_000_000)
            #expect(logs.messages.filter { $0.message.hasPrefix("could not cache") }.count == 1)

            try FileManager.default.removeItem(at: filler)
            stream.yield(.bytes(Array(": heartbeat\n\n".utf8)))
            try await eventually("cached once there is room", timeout: .patience) {
                logs.messages.contains { $0.message == "set 'ios-prod' v2 is cached again" }
            }
            #expect(try Chaos.cachedVersion(cache) == 2)
            #expect(Chaos.movedAside(cache).isEmpty)
        }
    }

    /// A client starting on a full disk with a sound cache: it serves that cache, or defaults when SQLite cannot
    /// even open it there; the file is never moved aside for it, so the next start has the set again.
    @Test func startingOnAFullDiskNeverMovesASoundCacheAside() async throws {
        try await Self.withTmpfs { cache, mount in
            try seedCache(cache, Chaos.document(3, newCheckout: true, maxItems: 13), version: 3)
            let filler = mount.fill()
            let (client, transport, _) = try await Chaos.start(cache)
            switch client.state {
            case .cached(let version): #expect(version == 3)
            case .defaultsOnly: #expect(client.core.cache == nil)
            default: Issue.record("unexpected state \(client.state)")
            }
            try await Chaos.send(
                4, newCheckout: false, maxItems: 14, padding: 300, on: transport.openStream(), to: client)
            _ = try await Chaos.bounded("shutdown") { client.shutdown() }
            #expect(Chaos.movedAside(cache).isEmpty)

            try FileManager.default.removeItem(at: filler)
            let next = try makeClient(directory: cache, transport: ScriptedTransport(), refresh: .off)
            defer { next.shutdown() }
            #expect(next.state == .cached(version: 3))
        }
    }
}
