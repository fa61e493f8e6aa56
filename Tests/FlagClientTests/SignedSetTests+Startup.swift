import FlagCore
import FlagLock
import FlagSQLite
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// What a verifying client starts from: a cache and a bootstrap document only when they verify.
extension SignedSetTests {
    /// Changes the cached bytes of `ios-prod` in the cache file in `directory`, as another process could.
    static func tamper(_ directory: URL, _ what: String) throws {
        let database = try SQLiteDatabase(
            path: directory.appendingPathComponent(FlagCache.fileName).path, configuration: FlagCache.configuration)
        defer {
            do { try database.close() } catch { Issue.record("closing the tampered cache: \(error)") }
        }
        try database.write { db in
            let (table, column) = what == "document" ? ("flag_set_cache", "document") : ("flag_set_patch", "patch")
            let bytes = try #require(try db.queryFirst("SELECT \(column) FROM \(table)") { try $0.blob(0) })
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.contains("111111") || text.contains("222222"))
            let changed = text.replacingOccurrences(of: "111111", with: "999999")
                .replacingOccurrences(of: "222222", with: "999999")
            try db.execute("UPDATE \(table) SET \(column) = ?", [.blob(Array(changed.utf8))])
        }
    }

    /// The cache holds signed v1 and the signed patch to v2. Changed on disk (the document or the patch), it is
    /// refused at the next start, moved aside, and the client falls back to its bootstrap document (or the
    /// defaults); the next download rebuilds it.
    @Test(arguments: ["document", "patch"], [true, false])
    func aTamperedCacheIsRefusedMovedAsideAndRebuilt(_ what: String, _ withBootstrap: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let key = try Signed.key(1)
            let server = try SigningSetServer(set: "ios-prod", key: key, document: Signed.document(1, items: 111_111))
            defer { server.stop() }
            let trusted = [key.signingKey]
            let first = try Signed.client(server.url, cache: directory, trusting: trusted, logs: LogSink())
            #expect(await first.ready(timeout: .patience))
            try server.publish(Signed.document(2, items: 222_222), patch: Signed.patch(2, items: 222_222))
            try await eventually("v2 cached", timeout: .patience) {
                (try? first.core.cache?.stored(set: "ios-prod"))?.patches.count == 1
            }
            first.shutdown()
            try Self.tamper(directory, what)

            let bootstrap = try Signed.export(Signed.document(1, items: 20), key: key)
            let logs = LogSink()
            let restarted = try Signed.client(server.url, cache: directory, trusting: trusted, logs: logs) {
                $0.refresh = .off
                if withBootstrap {
                    $0.bootstrap = bootstrap.bytes
                    $0.bootstrapSignature = bootstrap.signature
                }
            }
            let refusal = try #require(Signed.refusal(restarted))
            #expect(refusal.code == .badSignature)
            #expect(restarted.state.version == (withBootstrap ? 1 : nil))
            let detail = restarted.session(unitID: "u-1").detail(.maxItems)
            #expect(detail.value == (withBootstrap ? 20 : 10))
            #expect(detail.errorCode == (withBootstrap ? nil : .providerNotReady))
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(files.contains { $0.hasPrefix("\(FlagCache.fileName).corrupt-") })
            #expect(logs.messages.contains { $0.level == .error && $0.message.hasPrefix("the cached set is not used") })
            #expect(logs.messages.contains { $0.message.contains("failed verification; moved to") })
            // The new file holds the bootstrap document, signed, or nothing.
            let stored = try restarted.core.cache?.stored(set: "ios-prod")
            #expect(stored?.document.signature == (withBootstrap ? String(bootstrap.signature.dropLast()) : nil))
            restarted.shutdown()

            let rebuilt = try Signed.client(server.url, cache: directory, trusting: trusted, logs: LogSink())
            defer { rebuilt.shutdown() }
            #expect(await rebuilt.ready(timeout: .patience))
            try await eventually("v2 in use and cached", timeout: .patience) {
                Signed.served(rebuilt) == (222_222, 2)
                    && (try? rebuilt.core.cache?.stored(set: "ios-prod"))?.version == 2
            }
        }
    }

    /// Restarted on its cache of a signed document and a signed patch, a client serves the patched set at once.
    @Test func aVerifiedCacheStartsTheClientWithItsPatches() async throws {
        try await withTemporaryDirectory { directory in
            let key = try Signed.key(1)
            let server = try SigningSetServer(set: "ios-prod", key: key, document: Signed.document(1, items: 20))
            defer { server.stop() }
            let first = try Signed.client(server.url, cache: directory, trusting: [key.signingKey], logs: LogSink())
            #expect(await first.ready(timeout: .patience))
            try server.publish(Signed.document(2, items: 30), patch: Signed.patch(2, items: 30))
            // The patched flags are served before the patch is cached: wait for both.
            try await eventually("v2 in use and cached", timeout: .patience) {
                Signed.served(first) == (30, 2) && (try? first.core.cache?.stored(set: "ios-prod"))?.version == 2
            }
            first.shutdown()
            server.stop()

            let logs = LogSink()
            let restarted = try Signed.client(server.url, cache: directory, trusting: [key.signingKey], logs: logs) {
                $0.refresh = .off
            }
            defer { restarted.shutdown() }
            #expect(restarted.state == .cached(version: 2))
            #expect(Signed.served(restarted) == (30, 2))
            // The background decode of the document and the patch keeps the same values.
            try await eventually("compiled whole", timeout: .patience) { restarted.core.source is CompiledSource }
            #expect(Signed.served(restarted) == (30, 2))
            #expect(!logs.messages.contains { $0.level >= .warning })
        }
    }

    /// A cache written before trusted keys were configured holds no signature: it is not used, and not moved aside
    /// either (nothing in it was changed); the next download replaces it.
    @Test func anUnsignedCacheIsNotUsedButLeftInPlace() throws {
        try withTemporaryDirectory { directory in
            try seedCache(directory, Signed.document(4, items: 40).encoded(), version: 4)
            let key = try Signed.key(1)
            let client = try Signed.client(
                URL(string: "http://127.0.0.1:1")!, cache: directory, trusting: [key.signingKey], logs: LogSink()
            ) { $0.refresh = .off }
            defer { client.shutdown() }
            #expect(Signed.refusal(client)?.code == .unsigned)
            #expect(client.state.version == nil)
            #expect(Signed.served(client).version == nil)
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(!files.contains { $0.contains("corrupt") })
        }
    }

    /// A verified cache older than the app's new bootstrap document gives way to it, without a refusal.
    @Test func aCacheOlderThanTheBootstrapDocumentGivesWay() throws {
        try withTemporaryDirectory { directory in
            let key = try Signed.key(1)
            let old = try Signed.export(Signed.document(2, items: 20), key: key)
            let new = try Signed.export(Signed.document(6, items: 60), key: key)
            for bootstrap in [old, new] {
                let client = try Signed.client(
                    URL(string: "http://127.0.0.1:1")!, cache: directory, trusting: [key.signingKey], logs: LogSink()
                ) {
                    $0.refresh = .off
                    $0.bootstrap = bootstrap.bytes
                    $0.bootstrapSignature = bootstrap.signature
                }
                client.shutdown()
            }
            let client = try Signed.client(
                URL(string: "http://127.0.0.1:1")!, cache: directory, trusting: [key.signingKey], logs: LogSink()
            ) { $0.refresh = .off }
            defer { client.shutdown() }
            #expect(client.state == .cached(version: 6))
            #expect(Signed.served(client) == (60, 6))
        }
    }

    /// With trusted keys, a bootstrap document is used only with a valid signature by a trusted key for this set.
    @Test(arguments: ["missing", "garbled", "another key", "another set", "malformed"])
    func aBootstrapWithoutAValidSignatureIsNotUsed(_ problem: String) throws {
        let key = try Signed.key(1)
        let document = Signed.document(5, items: 50)
        let bytes = document.encoded()
        let message = SignedMessage(set: "ios-prod", version: 5, baseVersion: nil, body: bytes)
        let (signature, code): (String?, SetRefusal.Code) =
            switch problem {
            case "missing": (nil, .unsigned)
            case "garbled":
                (
                    try SigningSetServer.sign(
                        bytes, set: "ios-prod", version: 5, base: nil, key: key, spoil: .garbled), .badSignature
                )
            case "another key": (try Signed.key(7).sign(message).headerValue, .untrustedKey)
            case "another set":
                (
                    try key.sign(SignedMessage(set: "web", version: 5, baseVersion: nil, body: bytes)).headerValue,
                    .badSignature
                )
            default: ("v1; key=nonsense", .malformedSignature)
            }
        let logs = LogSink()
        let client = try Signed.client(
            URL(string: "http://127.0.0.1:1")!, cache: nil, trusting: [key.signingKey], logs: logs
        ) {
            $0.refresh = .off
            $0.bootstrap = bytes
            $0.bootstrapSignature = signature
        }
        defer { client.shutdown() }
        #expect(Signed.refusal(client)?.code == code)
        #expect(client.state.version == nil)
        #expect(client.session(unitID: "u-1").detail(.maxItems).errorCode == .providerNotReady)
        #expect(
            logs.messages.contains { $0.level == .error && $0.message.hasPrefix("the bootstrap document is not used") })
    }
}

/// How refusals meet the refresh loop, with a scripted transport: no sockets, exact backoff.
@Suite(.live) struct SignedSetRefreshTests {
    /// Unsigned patches arrive on each new connection: each one closes it and the loop backs off as after bad data
    /// (1, 2, 4 s with this jitter), and no document is fetched because of them.
    @Test func refusedPatchesBackOffAndFetchNothing() async throws {
        let key = try Signed.key(1)
        let transport = ScriptedTransport()
        let sleeps = Locked<[Double]>([])
        let document = Signed.document(1, items: 20).encoded()
        let message = SignedMessage(set: "ios-prod", version: 1, baseVersion: nil, body: document)
        let put = Array("event: put\nid: 1\nsignature: \(try key.sign(message).headerValue)\ndata: ".utf8) + document
        let client = try makeClient(directory: nil, transport: transport, sleeps: sleeps) {
            $0.trustedKeys = [key.signingKey]
        }
        defer { client.shutdown() }
        let first = try await transport.openStream()
        first.yield(.bytes(put + [0x0A, 0x0A]))
        try await eventually("v1 live", timeout: .patience) { client.state == .live(version: 1) }
        let unsigned = Docs.sse("patch", id: 2, Docs.patch(version: 2, base: 1, flags: [Signed.items(30)]))
        for index in 0..<3 {
            let stream = try await transport.stream(index)
            if index > 0 { stream.yield(eventStreamHead) }
            stream.yield(.bytes(unsigned))
            try await eventually("connection \(index + 2)", timeout: .patience) {
                transport.streamRequests.count > index + 1
            }
        }
        #expect(sleeps.withLock { $0 } == [1, 2, 4])
        #expect(transport.fetches.isEmpty)
        #expect(Signed.refusal(client)?.code == .unsigned)
        #expect(Signed.served(client) == (20, 1))
    }
}

extension SignedSetRefreshTests {
    /// A properly signed patch to an older version, replayed on the stream, is refused as a rollback without a
    /// fetch; the patch to the version in use, delivered again, changes nothing.
    @Test func aReplayedSignedPatchIsRefusedWithoutAFetch() async throws {
        let key = try Signed.key(1)
        let transport = ScriptedTransport()
        func signed(_ type: String, _ id: Int, _ data: [UInt8], base: Int?) throws -> [UInt8] {
            let message = SignedMessage(set: "ios-prod", version: id, baseVersion: base, body: data)
            let header = Array(
                "event: \(type)\nid: \(id)\nsignature: \(try key.sign(message).headerValue)\ndata: ".utf8)
            return header + data + [0x0A, 0x0A]
        }
        let client = try makeClient(directory: nil, transport: transport) { $0.trustedKeys = [key.signingKey] }
        defer { client.shutdown() }
        let stream = try await transport.openStream()
        stream.yield(.bytes(try signed("put", 3, Signed.document(3, items: 30).encoded(), base: nil)))
        stream.yield(.bytes(try signed("patch", 4, Signed.patch(4, items: 40).encoded(), base: 3)))
        try await eventually("v4 live", timeout: .patience) { client.state == .live(version: 4) }
        stream.yield(.bytes(try signed("patch", 4, Signed.patch(4, items: 40).encoded(), base: 3)))
        stream.yield(.bytes(Array(": heartbeat\n\n".utf8)))
        try await Task.sleep(for: .milliseconds(50))
        #expect(client.state == .live(version: 4))
        stream.yield(.bytes(try signed("patch", 3, Signed.patch(3, items: 99).encoded(), base: 2)))
        try await eventually("the replay refused", timeout: .patience) { Signed.refusal(client) != nil }
        #expect(Signed.refusal(client)?.code == .rollback)
        #expect(Signed.served(client) == (40, 4))
        #expect(transport.fetches.isEmpty)
    }
}
