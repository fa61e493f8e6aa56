import FlagCore
import FlagLock
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// `Configuration.applyNewVersions`: what waits, what is stored, and the kills that do not wait.
@Suite(.live) struct ApplyPolicyTests {
    /// A client on `directory` under `policy` whose stream opens and puts `document`; its stream's feed.
    static func client(
        _ directory: URL, _ policy: FlagClient.ApplyPolicy
    ) async throws -> (FlagClient, ScriptedTransport.Continuation) {
        let transport = ScriptedTransport()
        let client = try makeClient(directory: directory, transport: transport) { $0.applyNewVersions = policy }
        return (client, try await transport.openStream())
    }

    @Test func nextLaunchStoresANewVersionAndUsesItAfterARestart() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Docs.bytes(version: 1, Docs.flag("new-checkout", false)), version: 1)
            let (client, stream) = try await Self.client(directory, .nextLaunch)
            let updates = client.updates
            stream.yield(.bytes(Docs.sse("put", id: 2, Docs.document(2, Docs.flag("new-checkout", true)))))
            try await eventually("v2 waits") { client.pendingVersion == 2 }
            #expect(client.state == .live(version: 1))
            let detail = client.session(unitID: "u").detail(.newCheckout)
            #expect(detail.value == false)
            #expect(detail.version == 1)
            try await eventually("v2 stored") { (try? client.core.cache?.document(set: "ios-prod")?.version) == 2 }
            for await update in updates where update.pendingVersion == 2 {
                #expect(update == FlagClientUpdate(state: .live(version: 1), version: 1, pendingVersion: 2))
                break
            }
            client.shutdown()

            let restarted = try makeClient(directory: directory, transport: ScriptedTransport()) {
                $0.applyNewVersions = .nextLaunch
            }
            defer { restarted.shutdown() }
            #expect(restarted.state == .cached(version: 2))
            #expect(restarted.pendingVersion == nil)
            #expect(restarted.session(unitID: "u").value(.newCheckout) == true)
        }
    }

    @Test func manualWaitsForActivate() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Docs.bytes(version: 1, Docs.flag("new-checkout", false)), version: 1)
            let (client, stream) = try await Self.client(directory, .manual)
            defer { client.shutdown() }
            let open = client.session(unitID: "u")
            #expect(open.value(.newCheckout) == false)
            stream.yield(.bytes(Docs.sse("put", id: 2, Docs.document(2, Docs.flag("new-checkout", true)))))
            try await eventually("v2 waits") { client.pendingVersion == 2 }
            #expect(client.session(unitID: "u").value(.newCheckout) == false)

            #expect(client.activate())
            #expect(client.pendingVersion == nil)
            #expect(client.state == .live(version: 2))
            let detail = client.session(unitID: "u").detail(.newCheckout)
            #expect(detail.value == true)
            #expect(detail.version == 2)
            #expect(open.value(.newCheckout) == false)  // frozen, as with any new version
            #expect(client.activate() == false)
        }
    }

    /// Under the default, nothing waits: `activate()` has nothing to do.
    @Test func nextSessionUsesANewVersionAtOnce() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Docs.bytes(version: 1, Docs.flag("new-checkout", false)), version: 1)
            let (client, stream) = try await Self.client(directory, .nextSession)
            defer { client.shutdown() }
            stream.yield(.bytes(Docs.sse("put", id: 2, Docs.document(2, Docs.flag("new-checkout", true)))))
            try await eventually("v2 in use") { client.state == .live(version: 2) }
            #expect(client.pendingVersion == nil)
            #expect(client.activate() == false)
            #expect(client.session(unitID: "u").value(.newCheckout) == true)
        }
    }

    /// A kill in a waiting version reaches open and new sessions at once; the rest of the version waits, and so does
    /// a restore in a newer waiting version, until `activate()`. Versions come as patches over the waiting version,
    /// which the refresh loop tracks while the version in use is older.
    @Test(arguments: [FlagClient.ApplyPolicy.nextLaunch, .manual])
    func aKillPiercesAndARestoreWaits(policy: FlagClient.ApplyPolicy) async throws {
        try await withTemporaryDirectory { directory in
            let v1 = Docs.bytes(version: 1, Docs.flag("new-checkout", true), Docs.flag("dark-mode", true))
            try seedCache(directory, v1, version: 1)
            let (client, stream) = try await Self.client(directory, policy)
            defer { client.shutdown() }
            stream.yield(.bytes(Array(": current\n\n".utf8)))
            try await eventually("live") { client.state == .live(version: 1) }
            let open = client.session(unitID: "u")
            #expect(open.value(.newCheckout) == true)

            // v2 kills new-checkout and turns dark-mode off.
            let v2 = Docs.patch(
                version: 2, base: 1,
                flags: [Docs.flag("new-checkout", true, killed: true), Docs.flag("dark-mode", false)])
            stream.yield(.bytes(Docs.sse("patch", id: 2, v2)))
            try await eventually("v2 waits") { client.pendingVersion == 2 }
            // Open sessions get the kill right after the version is taken, outside the client's lock, as today.
            try await eventually("the kill reaches the open session") { open.detail(.newCheckout).reason == .disabled }
            #expect(open.value(.newCheckout) == false)
            #expect(open.value(.darkMode) == true)
            let during = client.session(unitID: "u")
            #expect(during.detail(.newCheckout).reason == .disabled)
            #expect(during.value(.newCheckout) == false)
            #expect(during.detail(.darkMode).value == true)
            #expect(during.detail(.darkMode).version == 1)
            #expect(client.state == .live(version: 1))
            // The debug menu lists the set in use, with the waiting kill over it.
            let listed = client.flagsInUse()
            #expect(Set(listed.keys) == ["new-checkout", "dark-mode"])
            #expect(listed["new-checkout"]??.killed == true)

            // v3 restores new-checkout: the restore waits.
            stream.yield(
                .bytes(
                    Docs.sse("patch", id: 3, Docs.patch(version: 3, base: 2, flags: [Docs.flag("new-checkout", true)])))
            )
            try await eventually("v3 waits") { client.pendingVersion == 3 }
            #expect(client.session(unitID: "u").value(.newCheckout) == false)
            #expect(client.session(unitID: "u").value(.darkMode) == true)
            try await eventually("v3 stored") { (try? client.core.cache?.document(set: "ios-prod")?.version) == 3 }

            #expect(client.activate())
            let after = client.session(unitID: "u")
            #expect(after.value(.newCheckout) == true)
            #expect(after.value(.darkMode) == false)
            #expect(after.detail(.darkMode).version == 3)
            #expect(open.value(.newCheckout) == false)  // a kill stays in an open session
        }
    }

    /// A flag that requires one a waiting version kills follows the kill at once too, as it would in the version that
    /// killed it: the express button goes with the checkout it needs.
    @Test(arguments: [FlagClient.ApplyPolicy.nextLaunch, .manual])
    func theDependentsOfAKilledPrerequisiteFollowTheKill(policy: FlagClient.ApplyPolicy) async throws {
        try await withTemporaryDirectory { directory in
            var express = Docs.flag("dark-mode", false)
            express.rules = [Rule(name: "everyone", target: .conditions([]), serve: .value(.bool(true)))]
            express.prerequisites = [Prerequisite(flag: "new-checkout", values: [.bool(true)])]
            try seedCache(directory, Docs.bytes(version: 1, Docs.flag("new-checkout", true), express), version: 1)
            let (client, stream) = try await Self.client(directory, policy)
            defer { client.shutdown() }
            stream.yield(.bytes(Array(": current\n\n".utf8)))
            try await eventually("live") { client.state == .live(version: 1) }
            #expect(client.session(unitID: "u").value(.darkMode) == true)

            let v2 = Docs.patch(version: 2, base: 1, flags: [Docs.flag("new-checkout", true, killed: true)])
            stream.yield(.bytes(Docs.sse("patch", id: 2, v2)))
            try await eventually("v2 waits") { client.pendingVersion == 2 }
            let during = client.session(unitID: "u")
            let detail = during.detail(.darkMode)
            #expect(detail.value == false)
            #expect(detail.reason == .prerequisiteFailed)
            #expect(detail.variant == "new-checkout")
            #expect(detail.version == 1)
            #expect(during.value(.newCheckout) == false)
        }
    }

    /// A flag killed in the version in use and restored in a waiting one stays killed until the waiting version is
    /// in use.
    @Test func aRestoreOfAFlagKilledInTheVersionInUseWaits() async throws {
        try await withTemporaryDirectory { directory in
            let v1 = Docs.bytes(version: 1, Docs.flag("new-checkout", true, killed: true))
            try seedCache(directory, v1, version: 1)
            let (client, stream) = try await Self.client(directory, .manual)
            defer { client.shutdown() }
            stream.yield(.bytes(Docs.sse("put", id: 2, Docs.document(2, Docs.flag("new-checkout", true)))))
            try await eventually("v2 waits") { client.pendingVersion == 2 }
            #expect(client.session(unitID: "u").detail(.newCheckout).reason == .disabled)
            #expect(client.activate())
            #expect(client.session(unitID: "u").value(.newCheckout) == true)
        }
    }

    /// With trusted keys, a waiting version is verified when it arrives and stored signed (as its signed patch), and
    /// the next launch starts from it, verified again; a signed replay of an older version is refused while it waits.
    @Test func aSignedVersionWaitsVerifiedAndIsUsedAfterARestart() async throws {
        try await withTemporaryDirectory { directory in
            let key = try Signed.key(1)
            let server = try SigningSetServer(set: "ios-prod", key: key, document: Signed.document(1, items: 20))
            defer { server.stop() }
            let logs = LogSink()
            let client = try Signed.client(server.url, cache: directory, trusting: [key.signingKey], logs: logs) {
                $0.applyNewVersions = .nextLaunch
            }
            #expect(await client.ready(timeout: .patience))
            try server.publish(Signed.document(2, items: 30), patch: Signed.patch(2, items: 30))
            try await eventually("v2 waits", timeout: .patience) { client.pendingVersion == 2 }
            #expect(Signed.served(client) == (20, 1))
            #expect(client.state == .live(version: 1))
            // The replay is fetched with `refresh()` rather than awaited from the stream's reconnection, whose timing
            // under Thread Sanitizer with the whole suite running once passed 30 s.
            server.serve(version: 1)
            #expect(await client.refresh() == false)
            #expect(Signed.refusal(client)?.code == .rollback)
            #expect(client.state.version == 1)
            #expect(client.pendingVersion == 2)
            client.shutdown()

            let restarted = try Signed.client(server.url, cache: directory, trusting: [key.signingKey], logs: logs) {
                $0.applyNewVersions = .nextLaunch
                $0.refresh = .off
            }
            defer { restarted.shutdown() }
            #expect(restarted.state == .cached(version: 2))
            #expect(Signed.served(restarted) == (30, 2))
        }
    }
}
