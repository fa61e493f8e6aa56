import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The cache file damaged before the client starts or while it runs: the client starts with the last good values or
/// the compiled-in defaults, never crashes or blocks, and rebuilds the cache as soon as it can.
@Suite("Chaos: the cache file damaged, deleted, read-only", .live)
struct ChaosCacheTests {
    /// A way to damage the cache file, named for the test's output.
    struct Damage: Sendable, CustomTestStringConvertible {
        var name: String
        /// Whether a client starting on it still has the cached set.
        var keepsTheSet = false
        var apply: @Sendable (String) throws -> Void
        var testDescription: String { name }
    }

    static let atRest: [Damage] = [
        Damage(name: "replaced by garbage") { path in
            try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        },
        Damage(name: "truncated to 100 bytes") { path in try Self.truncate(path, to: 100) },
        Damage(name: "truncated to half") { path in try Self.truncate(path, to: Self.size(path) / 2) },
        Damage(name: "pages after the header overwritten") { path in
            try Self.overwrite(path, at: 4096, count: Self.size(path) - 4096)
        },
        Damage(name: "emptied (an empty file is an empty database)") { path in try Self.truncate(path, to: 0) },
        Damage(name: "deleted") { path in try FileManager.default.removeItem(atPath: path) },
        Damage(name: "replaced by a directory") { path in
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        },
    ]

    /// A cache seeded with v1 (a hundred flags, so that the document fills several pages), then damaged.
    @Test(arguments: atRest)
    func aDamagedCacheAtStartServesDefaultsAndIsRebuilt(_ damage: Damage) async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Chaos.document(1, newCheckout: true, padding: 100), version: 1)
            try damage.apply(directory.appendingPathComponent(FlagCache.fileName).path)
            let (client, transport, logs) = try await Chaos.start(directory)
            defer { client.shutdown() }
            #expect(client.state == .defaultsOnly)
            try await Chaos.expectServing(client, version: nil, newCheckout: false, maxItems: 10)
            try await Chaos.send(2, newCheckout: true, maxItems: 12, on: transport.openStream(), to: client)
            #expect(try Chaos.cachedVersion(directory) == 2)
            #expect(!logs.messages.contains { $0.level == .error })
        }
    }

    /// Damage the running client notices at its next write (the file's device and inode changed, or its header is
    /// gone), or only the next process can (`keepsTheSet` false: pages changed under an open connection, which reads
    /// its own page cache and WAL).
    static let whileRunning: [Damage] = [
        Damage(name: "deleted with its WAL", keepsTheSet: true) { path in
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.removeItem(atPath: path + suffix)
            }
        },
        Damage(name: "deleted", keepsTheSet: true) { path in try FileManager.default.removeItem(atPath: path) },
        Damage(name: "replaced by garbage (a new file renamed over it)", keepsTheSet: true) { path in
            try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path + ".new"))
            guard rename(path + ".new", path) == 0 else { throw FileProblem(message: "rename failed: \(errno)") }
        },
        Damage(name: "overwritten with garbage in place", keepsTheSet: true) { path in
            try Self.overwrite(path, at: 0, count: max(8192, Self.size(path)))
        },
        Damage(name: "truncated in place", keepsTheSet: true) { path in try Self.truncate(path, to: 0) },
        Damage(name: "truncated to half in place") { path in try Self.truncate(path, to: Self.size(path) / 2) },
    ]

    /// The client runs on a cached v1 when its file is damaged; v2 arrives: it is served, and cached in a file
    /// the next process reads (the old one is reopened or rebuilt).
    @Test(arguments: whileRunning)
    func aCacheDamagedWhileRunningNeverStopsTheClient(_ damage: Damage) async throws {
        try await withTemporaryDirectory { directory in
            try await runOnDamagedCache(damage, directory)
        }
    }

    /// Runs a client on a cached v1, damages the cache, serves v2, shuts the client down and waits until it is gone
    /// (its database closed, as at a process exit).
    func runOnDamagedCache(_ damage: Damage, _ directory: URL) async throws {
        let core = try await runClient(damage, directory)
        try await eventually("the client released", timeout: .patience) { core.value == nil }
    }

    private func runClient(_ damage: Damage, _ directory: URL) async throws -> WeakReference<ClientCore> {
        try seedCache(directory, Chaos.document(1, newCheckout: true, padding: 100), version: 1)
        let transport = ScriptedTransport()
        let logs = LogSink()
        // Made here rather than on `Chaos.start`'s thread: the caller waits for this client to be released.
        let client = try makeClient(directory: directory, transport: transport) { $0.logger = logs.logger }
        let stream = try await transport.openStream()
        try await Chaos.sendCurrent(1, on: stream, to: client)
        let open = client.session(id: "s-1", unitID: "u-1")
        #expect(open.value(.maxItems) == 10)

        try damage.apply(directory.appendingPathComponent(FlagCache.fileName).path)
        try await Chaos.expectServing(client, version: 1, newCheckout: true, maxItems: 10)
        try await Chaos.send(2, newCheckout: false, maxItems: 12, on: stream, to: client)
        #expect(open.value(.maxItems) == 10)
        _ = try await Chaos.bounded("a persisted session after the damage") {
            client.session(id: "s-2", unitID: "u-1").value(.maxItems)
        }
        if damage.keepsTheSet {
            try await eventually("v2 cached for the next process", timeout: .patience) {
                (try? Chaos.cachedVersion(directory)) == 2
            }
        }
        _ = try await Chaos.bounded("shutdown") { client.shutdown() }
        #expect(!logs.messages.contains { $0.level == .error })
        let core = WeakReference<ClientCore>()
        core.value = client.core
        return core
    }

    /// The process after one whose cache was damaged: it starts with the set it can trust — the last good one, or
    /// (after damage only it can see) the defaults with the damaged file moved aside — and caches the next set.
    @Test(arguments: whileRunning)
    func theNextProcessAfterDamageStartsFromATrustedSet(_ damage: Damage) async throws {
        try await withTemporaryDirectory { directory in
            try await runOnDamagedCache(damage, directory)
            let transport = ScriptedTransport()
            let next = try await Chaos.bounded("init") { try makeClient(directory: directory, transport: transport) }
            defer { next.shutdown() }
            if damage.keepsTheSet { #expect(next.state == .cached(version: 2)) }
            switch next.state {
            case .cached(let version):
                #expect(version == 2)
                try await Chaos.expectServing(next, version: 2, newCheckout: false, maxItems: 12)
            case .defaultsOnly:
                #expect(!Chaos.movedAside(directory).isEmpty)
                try await Chaos.expectServing(next, version: nil, newCheckout: false, maxItems: 10)
            default:
                Issue.record("unexpected state \(next.state)")
            }
            let stream = try await transport.openStream()
            stream.yield(.bytes(Chaos.put(3, newCheckout: true, maxItems: 13)))
            try await eventually("live v3", timeout: .patience) { next.state == .live(version: 3) }
            try await eventually("v3 cached", timeout: .patience) { (try? Chaos.cachedVersion(directory)) == 3 }
        }
    }

    static func size(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    static func truncate(_ path: String, to length: Int) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(length))
    }

    struct FileProblem: Error {
        var message: String
    }

    /// Overwrites `count` bytes at `offset` with garbage, in place (the same inode, as a disk error would).
    static func overwrite(_ path: String, at offset: Int, count: Int) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 0x5A) }))
    }
}
