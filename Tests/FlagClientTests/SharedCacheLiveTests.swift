import FlagCore
import FlagLock
import FlagSQLite
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The built `flagshareprobe` beside the test bundle: the app and the extension of these tests.
let flagshareprobeBinary = BuiltProducts.executable("flagshareprobe")

/// An app and its extension as two processes on one cache directory: the app (`.readWrite`) live against the real
/// FlagServer, the extension (`.readOnly`) opening a session every 50 ms.
@Suite("Two processes share one cache", .serialized, .live)
struct SharedCacheLiveTests {
    /// Version N of set `share` has `counter` N - 1 up to v50, v51 kills `gate`, and from then on `counter` is N - 2:
    /// a version read with another's values shows.
    static let document = """
        {"schema": 1, "set": "share", "flags": {
          "counter": {"type": "int", "kind": "ops", "default": 0, "killValue": 0},
          "gate": {"type": "bool", "kind": "ops", "default": true, "killValue": false}}}
        """

    /// One line of the extension: what a new session saw, and what the session it keeps open reads.
    struct Seen: Equatable {
        var version: Int
        var counter: Int
        var heldGate: Bool

        init?(_ line: Substring) {
            let words = line.split(separator: " ")
            guard words.count == 6, words[0] == "seen", words[1].hasPrefix("v"),
                let version = Int(words[1].dropFirst()),
                let counter = Int(words[3])
            else { return nil }
            self.version = version
            self.counter = counter
            self.heldGate = words[5] == "true"
        }
    }

    /// A live server that has set `share`, and the cache directory that the app and the extension share.
    struct Probes {
        let server: LiveFlagServer
        let key: String
        /// The test's temporary directory, where the processes run and write their output.
        let directory: URL
        /// The shared cache directory.
        let group: URL
        let probe: String

        /// Starts `flagshareprobe ROLE` on the shared cache: its pid, and what it has printed so far. Each start has
        /// its own output files, so that a role may start again.
        func start(_ role: String, _ extra: [String] = []) throws -> (pid: pid_t, output: () -> String) {
            let output = directory.appendingPathComponent("\(role)-\(UUID().uuidString).out")
            let pid = try Spawn.start(
                probe, [role, group.path, server.url.absoluteString, key] + extra, environment: [:],
                directory: directory.path, stdout: output.path, stderr: output.path + ".err")
            return (pid, { (try? String(contentsOf: output, encoding: .utf8)) ?? "" })
        }
    }

    /// Runs `body` in a temporary directory, with the server stopped after it.
    static func withProbes(_ body: (Probes) async throws -> Void) async throws {
        try await LiveFlagServer.withSet("share", document: Self.document) { server, key, directory in
            try await body(
                Probes(
                    server: server, key: key, directory: directory, group: directory.appendingPathComponent("group"),
                    probe: try #require(flagshareprobeBinary).path))
        }
    }

    @Test(.enabled(if: flagshareprobeBinary != nil))
    func anExtensionSeesOnlyCommittedVersionsInOrderAndSurvivesTheAppsDeath() async throws {
        try await Self.withProbes { probes in
            let (server, group) = (probes.server, probes.group)
            let app = try probes.start("app")
            var appAlive = true
            defer { if appAlive { _ = Spawn.stop(app.pid, signal: SIGKILL) } }
            func inUse() -> [Int] {
                app.output().split(separator: "\n").compactMap { $0.hasPrefix("in use v") ? Int($0.dropFirst(8)) : nil }
            }
            try await eventually("the app has v1") { inUse().contains(1) }

            let appExtension = try probes.start("extension", ["50"])
            defer { _ = Spawn.stop(appExtension.pid, signal: SIGKILL) }
            func seen() -> [Seen] { appExtension.output().split(separator: "\n").compactMap(Seen.init) }
            try await eventually("the extension saw v1") { seen().contains { $0.version == 1 } }

            // The extension never holds a write lock: probed from this process all along (POSIX locks of other
            // processes are visible to F_GETLK; the app's show while it writes).
            let locks = LockProbe(database: group.appendingPathComponent(FlagCache.fileName).path)
            let probing = Task.detached { locks.run() }

            // A burst of writes: v2 … v50.
            for counter in 1...49 {
                let written = try await server.admin(
                    "POST", "/v1/admin/sets/share/flags/counter/default", #"{"value": \#(counter)}"#)
                #expect(written.status == 200)
            }
            try await eventually("the app has v50") { inUse().contains(50) }
            try await eventually("the extension saw v50") { seen().contains { $0.version == 50 } }

            // A kill the app stores reaches the session the extension keeps open, at its next check.
            #expect(seen().allSatisfy { $0.heldGate })
            let killed = try await server.admin("POST", "/v1/admin/sets/share/flags/gate/kill", #"{"reason": "e2e"}"#)
            #expect(killed.status == 200)
            try await eventually("the kill reached the open session") { seen().last?.heldGate == false }
            #expect(seen().last?.version == 51)

            // SIGKILL of the app in the middle of another burst.
            let burst = Task {
                for counter in 50...89 {
                    _ = try await server.admin(
                        "POST", "/v1/admin/sets/share/flags/counter/default", #"{"value": \#(counter)}"#)
                }
            }
            try await eventually("the app has v60") { inUse().contains { $0 >= 60 } }
            _ = Spawn.stop(app.pid, signal: SIGKILL)
            appAlive = false
            let lastInUse = inUse().max() ?? 0
            try await burst.value
            try await Task.sleep(for: .milliseconds(300))
            let settled = try #require(seen().last)
            try await Task.sleep(for: .milliseconds(300))
            locks.stop()
            await probing.value

            let lines = seen()
            #expect(lines.last == settled, "the extension keeps serving the last version the app committed")
            // The app caches a patch right after putting it in use, one at a time: the last one may not be stored.
            #expect(settled.version >= lastInUse - 1 && settled.version <= 91)
            // Only committed versions, in order, never torn.
            #expect(
                lines.allSatisfy { $0.counter == $0.version - ($0.version <= 50 ? 1 : 2) },
                "a version read with another's values")
            #expect(zip(lines, lines.dropFirst()).allSatisfy { $0.version <= $1.version })
            // The app prints a version once it is in use, and caches it after: one it stored just before the
            // SIGKILL may never have been printed. Any other version the extension saw, the app reported.
            let versions = Set(inUse())
            let lastReported = versions.max() ?? 0
            #expect(
                lines.allSatisfy { versions.contains($0.version) || $0.version > lastReported },
                "a version the app never had")
            #expect(lines.last.map { !$0.heldGate } == true)

            let probed = locks.result
            #expect(probed.rounds > 100)
            #expect(probed.holders.contains(appExtension.pid) == false, "the extension held a write lock")
            // The probe works: it saw the app's write locks during the bursts.
            #expect(probed.holders.contains(app.pid))

            // What the extension serves is what the cache holds, and nothing keeps a writer out while it reads.
            let database = try SQLiteDatabase(
                path: group.appendingPathComponent(FlagCache.fileName).path,
                configuration: .init(journalMode: .wal, synchronous: .normal, busyTimeout: .zero))
            let version = try database.write { db in
                try db.queryFirst("SELECT version FROM flag_set_cache WHERE set_name = 'share'") { try $0.int(0) }
            }
            #expect(version == settled.version)
            try database.close()
            #expect(Spawn.hasEnded(appExtension.pid) == false, "the extension is still running")
        }
    }

    /// The extension started while the app is not running (it closed the cache on SIGTERM: its `-wal` emptied, and
    /// its `-shm`, kept) reads the cache without any process to maintain SQLite's shared memory, and follows the app once it
    /// starts again and stores newer versions; it takes no write lock meanwhile either.
    @Test(.enabled(if: flagshareprobeBinary != nil))
    func anExtensionStartedWhileTheAppIsNotRunningFollowsTheAppWhenItStarts() async throws {
        try await Self.withProbes { probes in
            let (server, group) = (probes.server, probes.group)
            let first = try probes.start("app")
            try await eventually("the app has v1") { first.output().contains("in use v1") }
            let written = try await server.admin(
                "POST", "/v1/admin/sets/share/flags/counter/default", #"{"value": 1}"#)
            #expect(written.status == 200)
            try await eventually("the app has v2") { first.output().contains("in use v2") }
            let ended = Spawn.stop(first.pid, signal: SIGTERM)
            #expect(ended.status == 0 && ended.exitedNormally, "the app closes its client on SIGTERM")
            // The -wal (emptied) and -shm stay for the extension; nobody maintains the shared memory now.
            let files = try FileManager.default.contentsOfDirectory(atPath: group.path).sorted()
            #expect(files == ["flagclient.sqlite", "flagclient.sqlite-shm", "flagclient.sqlite-wal"])
            let wal = group.appendingPathComponent(FlagCache.fileName + "-wal").path
            #expect(try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int == 0)

            let appExtension = try probes.start("extension", ["50"])
            defer { _ = Spawn.stop(appExtension.pid, signal: SIGKILL) }
            func seen() -> [Seen] { appExtension.output().split(separator: "\n").compactMap(Seen.init) }
            // v2, or v1 when the app ended between putting the patch to v2 in use and caching it.
            try await eventually("the extension serves what the app cached, with no app running") {
                seen().last.map { [1, 2].contains($0.version) } == true
            }

            let locks = LockProbe(database: group.appendingPathComponent(FlagCache.fileName).path)
            let probing = Task.detached { locks.run() }
            let second = try probes.start("app")
            defer { _ = Spawn.stop(second.pid, signal: SIGKILL) }
            try await eventually("the app runs again") { second.output().contains("in use v2") }
            for counter in 2...4 {
                let written = try await server.admin(
                    "POST", "/v1/admin/sets/share/flags/counter/default", #"{"value": \#(counter)}"#)
                #expect(written.status == 200)
            }
            try await eventually("the extension follows the app") { seen().last?.version == 5 }
            locks.stop()
            await probing.value
            let lines = seen()
            #expect(lines.allSatisfy { $0.counter == $0.version - 1 })
            #expect(zip(lines, lines.dropFirst()).allSatisfy { $0.version <= $1.version })
            #expect(locks.result.holders.contains(appExtension.pid) == false, "the extension held a write lock")
        }
    }
}

/// Probes SQLite's lock bytes of a database file and its `-shm` with `F_GETLK` until stopped, and records which
/// processes held a write lock on one: the database's PENDING, RESERVED and SHARED bytes, and the WAL index's write,
/// checkpoint, recovery and read-mark bytes.
final class LockProbe: Sendable {
    private let database: String
    private let state = Locked<(stop: Bool, rounds: Int, holders: Set<pid_t>)>((false, 0, []))

    init(database: String) {
        self.database = database
    }

    var result: (rounds: Int, holders: Set<pid_t>) { state.withLock { ($0.rounds, $0.holders) } }

    func stop() { state.withLock { $0.stop = true } }

    func run() {
        // Opened once and kept: closing a descriptor drops the process's own locks on the file, which it has none of,
        // but reopening at every round would cost more than the probes.
        let databaseFD = open(database, O_RDONLY)
        let shmFD = open(database + "-shm", O_RDONLY)
        defer {
            if databaseFD >= 0 { close(databaseFD) }
            if shmFD >= 0 { close(shmFD) }
        }
        let pending: off_t = 0x4000_0000
        let regions: [(fd: Int32, start: off_t, length: off_t)] =
            [(databaseFD, pending, 1), (databaseFD, pending + 1, 1), (databaseFD, pending + 2, 510)]
            + (120..<128).map { (shmFD, off_t($0), 1) }
        while state.withLock({ !$0.stop }) {
            var holders: [pid_t] = []
            for region in regions where region.fd >= 0 {
                // A read-lock probe conflicts only with write locks: a reader's shared locks do not show.
                var lock = flock()
                lock.l_type = Int16(F_RDLCK)
                lock.l_whence = Int16(SEEK_SET)
                lock.l_start = region.start
                lock.l_len = region.length
                if fcntl(region.fd, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) { holders.append(lock.l_pid) }
            }
            state.withLock {
                $0.rounds += 1
                $0.holders.formUnion(holders)
            }
            usleep(500)
        }
    }
}
