import FlagCore
import FlagLock
import FlagSQLite
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// A client with trusted keys activates only what a trusted key signed for its set, never an older version, and
/// starts only from a cache and a bootstrap document that verify. Against `SigningSetServer`, which
/// serves the wire contract of docs/signing.md on real sockets; the client uses its real URLSession transport.
@Suite("Signed flag sets", .serialized, .live)
struct SignedSetTests {
    @Test(arguments: [RefreshMode.stream, .poll])
    func aSignedSetIsActivatedAndCachedAsTheSignedBytes(_ refresh: RefreshMode) async throws {
        try await Signed.withReadyClient(refresh: refresh) { server, client, logs in
            #expect(client.state == .live(version: 1))
            try server.publish(Signed.document(2, items: 30), patch: Signed.patch(2, items: 30))
            // A patch is served at once and cached just after: wait for both.
            try await eventually("v2 in use and cached", timeout: .patience) {
                Signed.served(client) == (30, 2) && (try? client.core.cache?.stored(set: "ios-prod"))??.version == 2
            }
            #expect(logs.refusals.isEmpty)
            let cached = try #require(try client.core.cache?.stored(set: "ios-prod"))
            #expect(cached.version == 2)
            #expect(cached.document.signature != nil)
            // The stream caches the signed patch after the signed document; polling, the whole signed document.
            if refresh == .stream {
                #expect(cached.document.bytes == Signed.document(1, items: 20).encoded())
                #expect(cached.patches.map(\.bytes) == [Signed.patch(2, items: 30).encoded()])
            } else {
                #expect(cached.document.bytes == Signed.document(2, items: 30).encoded())
                #expect(cached.patches.isEmpty)
            }
        }
    }

    /// Each way a signature can be wrong, on the stream (a patch event) and when polling (a whole document): the
    /// client keeps serving v1 and says why in its state and its log.
    @Test(arguments: [RefreshMode.stream, .poll], ["unsigned", "another set", "another key", "garbled"])
    func aWronglySignedUpdateIsRefused(_ refresh: RefreshMode, _ spoil: String) async throws {
        let other = try Signed.key(9)
        let (spoiled, code): (SigningSetServer.Spoil, SetRefusal.Code) =
            switch spoil {
            case "unsigned": (.unsigned, .unsigned)
            case "another set": (.signedForSet("android-prod"), .badSignature)
            case "another key": (.signedBy(other), .untrustedKey)
            default: (.garbled, .badSignature)
            }
        try await Signed.withReadyClient(refresh: refresh) { server, client, logs in
            try server.publish(Signed.document(2, items: 30), patch: Signed.patch(2, items: 30), spoil: spoiled)
            try await eventually("the update refused", timeout: .patience) { Signed.refusal(client) != nil }
            let refusal = try #require(Signed.refusal(client))
            #expect(refusal.code == code)
            #expect(refusal.refusedVersion == 2)
            #expect(client.state.version == 1)
            #expect(logs.refusals.contains { $0.contains(refusal.message) })
            #expect(Signed.served(client) == (20, 1))
            #expect(try client.core.cache?.stored(set: "ios-prod")?.version == 1)
        }
    }

    /// A man in the middle changes one value in a patch on the stream; the client does not activate it. The same
    /// proxy in front of a client that trusts no key shows that the change does get through without verification.
    @Test func aValueChangedInFlightIsNotActivated() async throws {
        try await withTemporaryDirectory { directory in
            let key = try Signed.key(1)
            let server = try SigningSetServer(set: "ios-prod", key: key, document: Signed.document(1, items: 20))
            defer { server.stop() }
            let proxy = try TamperingProxy(upstream: server.port, find: "424242", replace: "999999")
            defer { proxy.stop() }
            let logs = LogSink()
            let verifying = try Signed.client(
                proxy.url, cache: directory.appendingPathComponent("verifying"), trusting: [key.signingKey],
                logs: logs)
            defer { verifying.shutdown() }
            let trusting = try Signed.client(
                proxy.url, cache: directory.appendingPathComponent("trusting"), trusting: [], logs: LogSink())
            defer { trusting.shutdown() }
            #expect(await verifying.ready(timeout: .patience))
            #expect(await trusting.ready(timeout: .patience))
            try server.publish(Signed.document(2, items: 424_242), patch: Signed.patch(2, items: 424_242))
            try await eventually("the changed patch through", timeout: .patience) {
                Signed.served(trusting) == (999_999, 2)
            }
            try await eventually("the changed patch refused", timeout: .patience) {
                Signed.refusal(verifying)?.code == .badSignature
            }
            #expect(proxy.changed >= 2)
            #expect(Signed.served(verifying) == (20, 1))
            #expect(verifying.state.version == 1)
            #expect(try verifying.core.cache?.stored(set: "ios-prod")?.version == 1)
        }
    }

    /// A properly signed older version, replayed (a cache or proxy serving it as current), is refused.
    @Test func aReplayedOlderVersionIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let key = try Signed.key(1)
            let server = try SigningSetServer(set: "ios-prod", key: key, document: Signed.document(1, items: 20))
            defer { server.stop() }
            try server.publish(Signed.document(2, items: 30), patch: Signed.patch(2, items: 30))
            let logs = LogSink()
            let client = try Signed.client(server.url, cache: directory, trusting: [key.signingKey], logs: logs)
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            #expect(Signed.served(client) == (30, 2))
            server.serve(version: 1)
            server.dropStreams()
            try await eventually("the replay refused", timeout: .patience) { Signed.refusal(client) != nil }
            #expect(Signed.refusal(client)?.code == .rollback)
            #expect(Signed.refusal(client)?.refusedVersion == 1)
            #expect(Signed.served(client) == (30, 2))
        }
    }

    /// A fresh install has only its signed bootstrap document, v5: a properly signed v3 from the network is
    /// refused, on the stream and when polling.
    @Test(arguments: [RefreshMode.stream, .poll])
    func aFreshInstallRefusesAVersionOlderThanItsBootstrap(_ refresh: RefreshMode) async throws {
        try await withTemporaryDirectory { directory in
            let key = try Signed.key(1)
            let server = try SigningSetServer(set: "ios-prod", key: key, document: Signed.document(3, items: 30))
            defer { server.stop() }
            let bootstrap = try Signed.export(Signed.document(5, items: 50), key: key)
            let logs = LogSink()
            let client = try Signed.client(server.url, cache: directory, trusting: [key.signingKey], logs: logs) {
                $0.refresh = refresh
                $0.pollInterval = 1
                $0.bootstrap = bootstrap.bytes
                $0.bootstrapSignature = bootstrap.signature
            }
            defer { client.shutdown() }
            #expect(client.state.version == 5)
            try await eventually("v3 refused", timeout: .patience) { Signed.refusal(client) != nil }
            #expect(Signed.refusal(client)?.code == .rollback)
            #expect(client.state.version == 5)
            #expect(Signed.served(client) == (50, 5))
        }
    }

    /// Key A signs v1; the server activates key B and signs v2 with it while the client is connected. A client
    /// that trusts both follows without a refusal.
    @Test func aRotationMidStreamIsFollowedWithoutARefusal() async throws {
        let (old, new) = (try Signed.key(1), try Signed.key(2))
        try await Signed.withReadyClient(trusting: [old.signingKey, new.signingKey]) { server, client, logs in
            server.activate(new)
            try server.publish(Signed.document(2, items: 30), patch: Signed.patch(2, items: 30))
            try await eventually("v2 by the new key", timeout: .patience) { Signed.served(client) == (30, 2) }
            try server.publish(Signed.document(3, items: 40), patch: nil)
            try await eventually("v3 by the new key", timeout: .patience) { Signed.served(client) == (40, 3) }
            #expect(client.state == .live(version: 3))
            #expect(logs.refusals.isEmpty)
        }
    }

    /// With no trusted key nothing is verified: an unsigned server is followed, and the cache holds the patched set
    /// re-encoded, as before sets were signed.
    @Test func withoutTrustedKeysNothingIsVerified() async throws {
        try await Signed.withReadyClient(spoil: .unsigned, trusting: []) { server, client, logs in
            try server.publish(Signed.document(2, items: 30), patch: Signed.patch(2, items: 30), spoil: .unsigned)
            // A patch is served at once and cached just after: wait for both.
            try await eventually("v2 in use and cached", timeout: .patience) {
                Signed.served(client) == (30, 2) && (try? client.core.cache?.stored(set: "ios-prod"))??.version == 2
            }
            let cached = try #require(try client.core.cache?.stored(set: "ios-prod"))
            #expect(cached.version == 2)
            #expect(cached.document.signature == nil)
            #expect(cached.patches.isEmpty)
            #expect(logs.refusals.isEmpty)
        }
    }
}

extension SignedSetTests {
    /// After `Refresher.compactAfter` signed patches the client fetches their version whole from
    /// `versions/{n}` and caches it in their place, so that a launch does not verify patches without end.
    @Test func manyCachedPatchesAreReplacedByTheirVersionFetchedWhole() async throws {
        try await Signed.withReadyClient(document: Signed.document(1, items: 1)) { server, client, logs in
            let last = Refresher.compactAfter + 1
            for version in 2...last {
                try server.publish(
                    Signed.document(version, items: Int64(version)), patch: Signed.patch(version, items: Int64(version))
                )
            }
            try await eventually("the patches compacted", timeout: .patience) {
                let stored = try? client.core.cache?.stored(set: "ios-prod")
                return stored?.document.version == last && stored?.patches.isEmpty == true
            }
            #expect(server.paths.contains("/v1/sets/ios-prod/versions/\(last)"))
            #expect(Signed.served(client) == (last, last))
            #expect(logs.refusals.isEmpty)
        }
    }
}
