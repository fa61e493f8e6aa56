import FlagCore
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// A verifying FlagClient against the real FlagServer, which signs every set it creates: a man in the
/// middle changing a value, a key rotated while the client is connected, another set's key, and a server restored
/// from an older backup. Serialized: one test stops its server and starts it again on the same port.
@Suite("Signed flag sets against a live FlagServer", .serialized, .live)
struct SignedSetLiveTests {
    /// The public keys of `set`, by state, as its clients read them with their SDK key.
    static func keys(_ server: LiveFlagServer, set: String = "ios-prod", token: String) async throws
        -> [(key: SigningKey, state: String)]
    {
        let listing = try await server.request("GET", "/v1/sets/\(set)/signing-keys", token: token)
        guard case .array(let items)? = try listing.json("keys") else {
            throw TestClientError(description: "no keys: \(listing.text)")
        }
        return try items.map { item in
            guard case .object(let members) = item, case .string(let base64)? = members["publicKey"],
                case .string(let state)? = members["state"]
            else { throw TestClientError(description: "a key without publicKey or state: \(listing.text)") }
            return (try SigningKey(base64: base64), state)
        }
    }

    @Test func aValueChangedInFlightIsNotActivatedAndTheLastGoodValueStays() async throws {
        try await LiveFlagServer.withSet("ios-prod", document: LiveFlagServer.iosProd) { server, sdkKey, directory in
            let trusted = try await Self.keys(server, token: sdkKey).map(\.key)
            // The proxy turns the new default, 30, into 99 on its way to the client.
            let proxy = try TamperingProxy(upstream: server.port, find: #""default":30"#, replace: #""default":99"#)
            defer { proxy.stop() }
            let logs = LogSink()
            let client = try Signed.client(
                proxy.url, sdkKey: sdkKey, cache: directory.appendingPathComponent("cache"), trusting: trusted,
                logs: logs)
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            #expect(Signed.served(client) == (20, 1))

            let changed = try await server.admin(
                "PUT", "/v1/admin/sets/ios-prod/flags/max-items/default", #"{"value":30}"#)
            #expect(changed.status == 200, "\(changed.text)")
            try await eventually("the changed patch refused", timeout: .patience) { Signed.refusal(client) != nil }
            #expect(proxy.changed >= 1)
            let refusal = try #require(Signed.refusal(client))
            #expect(refusal.code == .badSignature)
            #expect(refusal.refusedVersion == 2)
            #expect(logs.refusals.contains { $0.contains(refusal.message) })
            #expect(Signed.served(client) == (20, 1))
            #expect(try client.core.cache?.stored(set: "ios-prod")?.version == 1)

            // Straight from the server, the same version verifies and is activated.
            let direct = try Signed.client(
                server.url, sdkKey: sdkKey, cache: directory.appendingPathComponent("cache-direct"),
                trusting: trusted, logs: LogSink())
            defer { direct.shutdown() }
            #expect(await direct.ready(timeout: .patience))
            #expect(Signed.served(direct) == (30, 2))
        }
    }

    @Test func aRotationWhileConnectedRefusesNoUpdate() async throws {
        try await LiveFlagServer.withSet("ios-prod", document: LiveFlagServer.iosProd) { server, sdkKey, directory in
            let rotated = try await server.admin(
                "POST", "/v1/admin/sets/ios-prod/signing-keys", #"{"reason":"yearly"}"#)
            #expect(rotated.status == 201, "\(rotated.text)")
            let keys = try await Self.keys(server, token: sdkKey)
            let oldKey = try #require(keys.first { $0.state == "active" }?.key)
            let newKey = try #require(keys.first { $0.state == "published" }?.key)
            // The app build that ships between the two steps trusts both keys.
            let logs = LogSink()
            let client = try Signed.client(
                server.url, sdkKey: sdkKey, cache: directory.appendingPathComponent("cache"),
                trusting: [oldKey, newKey], logs: logs)
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))

            #expect(
                try await server.admin("POST", "/v1/admin/sets/ios-prod/signing-keys/\(newKey.id)/activate").status
                    == 200)
            for (version, items) in [(2, 30), (3, 40)] {
                let write = try await server.admin(
                    "PUT", "/v1/admin/sets/ios-prod/flags/max-items/default", #"{"value":\#(items)}"#)
                #expect(write.status == 200, "\(write.text)")
                try await eventually("v\(version) in use", timeout: .patience) {
                    Signed.served(client) == (items, version)
                }
            }
            #expect(
                try await server.admin("POST", "/v1/admin/sets/ios-prod/signing-keys/\(oldKey.id)/retire").status
                    == 200)
            _ = try await server.admin("POST", "/v1/admin/sets/ios-prod/flags/max-items/kill")
            try await eventually("v4 in use", timeout: .patience) { Signed.served(client) == (0, 4) }
            #expect(logs.refusals.isEmpty, "\(logs.refusals)")
            #expect(client.state == .live(version: 4))

            // A later build that trusts only the new key starts from the same server without a refusal.
            let later = try Signed.client(
                server.url, sdkKey: sdkKey, cache: directory.appendingPathComponent("cache-later"), trusting: [newKey],
                logs: LogSink())
            defer { later.shutdown() }
            #expect(await later.ready(timeout: .patience))
            #expect(later.state == .live(version: 4))
        }
    }

    @Test func aDocumentSignedByAnotherSetsKeyIsRefused() async throws {
        try await LiveFlagServer.withSet("ios-prod", document: LiveFlagServer.iosProd) { server, sdkKey, directory in
            let otherKey = try await server.createSet(
                "android-prod",
                document: LiveFlagServer.iosProd.replacingOccurrences(of: "ios-prod", with: "android-prod"))
            let android = try await Self.keys(server, set: "android-prod", token: otherKey).map(\.key)
            let ios = try await Self.keys(server, token: sdkKey).map(\.key)
            #expect(Set(android.map(\.id)).isDisjoint(with: ios.map(\.id)))

            let logs = LogSink()
            let client = try Signed.client(
                server.url, sdkKey: sdkKey, cache: directory.appendingPathComponent("cache"), trusting: android,
                logs: logs)
            defer { client.shutdown() }
            try await eventually("the document refused", timeout: .patience) { Signed.refusal(client) != nil }
            #expect(Signed.refusal(client)?.code == .untrustedKey)
            #expect(Signed.served(client).version == nil)
            #expect(try client.core.cache?.stored(set: "ios-prod") == nil)
        }
    }

    @Test func aServerRestoredFromAnOlderBackupIsRefusedAsARollback() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("server")
            let backup = directory.appendingPathComponent("backup")
            var server = try LiveFlagServer(dataDirectory: data)
            let sdkKey = try await server.createSet("ios-prod", document: LiveFlagServer.iosProd)
            let trusted = try await Self.keys(server, token: sdkKey).map(\.key)
            // A backup of the data directory at version 1, key-encryption key included.
            let port = server.port
            server.stop()
            try FileManager.default.copyItem(at: data, to: backup)
            server = try LiveFlagServer(dataDirectory: data, port: port)

            let logs = LogSink()
            let cache = directory.appendingPathComponent("cache")
            let client = try Signed.client(server.url, sdkKey: sdkKey, cache: cache, trusting: trusted, logs: logs) {
                $0.refresh = .poll
                $0.pollInterval = 1
            }
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            for items in [30, 40] {
                _ = try await server.admin(
                    "PUT", "/v1/admin/sets/ios-prod/flags/max-items/default", #"{"value":\#(items)}"#)
            }
            try await eventually("v3 in use", timeout: .patience) { Signed.served(client) == (40, 3) }

            // The server comes back from the backup: version 1, properly signed, and older than what the client has.
            server.stop()
            try FileManager.default.removeItem(at: data)
            try FileManager.default.moveItem(at: backup, to: data)
            server = try LiveFlagServer(dataDirectory: data, port: port)
            defer { server.stop() }
            try await eventually("the rollback refused", timeout: .patience) { Signed.refusal(client) != nil }
            #expect(Signed.refusal(client)?.code == .rollback)
            #expect(Signed.served(client) == (40, 3))
            #expect(logs.refusals.contains { $0.contains("older than v3") }, "\(logs.refusals)")
        }
    }
}
