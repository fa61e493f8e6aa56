import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// Servers sharing one store, here two apps on one SQLite file: what one writes, the other loads as the
/// items that changed and publishes as a local write would; a write made on a stale version lands on top or is a
/// 409; tokens made or revoked on one count on the other. The PostgreSQL suites run the same over the network.
@Suite("Servers sharing a store", .live)
struct ReplicaSyncTests {
    /// The harness's app (`one`), a second app on the same file (`two`), and the sync of the second.
    private func withTwoServers(_ body: (AppHarness, FlagServerApp, ReplicaSync) async throws -> Void) async throws {
        try await withHarness { one in
            let opened = try one.reopened()
            let sync = ReplicaSync(service: opened.service, tokens: opened.tokens, log: { _ in })
            let two = FlagServerApp(
                service: opened.service, tokens: opened.tokens, clock: one.clock.clock, replicas: sync)
            try await body(one, two, sync)
        }
    }

    @Test func aKillOnOneServerReachesAStreamOnTheOtherAsAPatch() async throws {
        try await withTwoServers { one, two, sync in
            let sdk = InProcessClient(handler: two.handler)
            let stream = sdk.start("GET", "/v1/sets/ios-prod/stream", headers: [("Authorization", "Bearer \(one.sdk)")])
            #expect(await eventually { String(decoding: stream.streamBody, as: UTF8.self).contains("event: put") })
            #expect(try one.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}").status == 200)
            #expect(two.service.state("ios-prod")?.version == 1)

            sync.setChanged("ios-prod", version: 2)
            let served = try #require(two.service.state("ios-prod"))
            #expect(served.version == 2)
            #expect(
                (try two.service.servedDocument("ios-prod")).bytes
                    == (try? one.app.service.servedDocument("ios-prod"))?.bytes)
            let text = { String(decoding: stream.streamBody, as: UTF8.self) }
            #expect(await eventually { text().contains("event: patch") })
            let frame = try #require(text().components(separatedBy: "event: patch\n").last)
            let data = try #require(frame.split(separator: "\n").first { $0.hasPrefix("data: ") })
            let parsed = try SetPatch.decode(Array(data.dropFirst("data: ".count).utf8))
            #expect(parsed.base == 1 && parsed.version == 2)
            #expect(Array(parsed.flags.keys) == ["new-checkout"] && parsed.cohorts.isEmpty)
            // A notification of a version it serves already (its own write, say) costs nothing.
            sync.setChanged("ios-prod", version: 2)
            #expect(sync.status.catchUps == 1 && sync.status.notifications == 2)
        }
    }

    @Test func theCheckCatchesUpOnEverySetAndOnSetsMadeElsewhere() async throws {
        try await withTwoServers { one, two, sync in
            for reason in ["a", "b", "c"] {
                _ = try one.send(
                    "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: #"{"reason":"\#(reason)"}"#)
                _ = try one.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/restore", body: "{}")
            }
            #expect(try one.send("POST", "/v1/admin/sets", body: #"{"name":"web-prod"}"#).status == 201)
            sync.check()
            #expect(sync.status.lag == ["ios-prod": 6, "android-prod": 0, "web-prod": 1])
            #expect(two.service.state("ios-prod")?.version == 7)
            #expect(
                (try? two.service.servedDocument("ios-prod"))?.bytes
                    == (try? one.app.service.servedDocument("ios-prod"))?.bytes)
            #expect(two.service.state("web-prod")?.version == 1)
            sync.check()
            #expect(sync.status.lag.values.allSatisfy { $0 == 0 })
            let metrics = try InProcessClient(handler: two.handler).send("GET", "/metrics", token: one.admin, body: "")
            #expect(metrics.text.contains("flagserver_store_up 1\n"))
            #expect(metrics.text.contains("flagserver_set_version_lag{set=\"ios-prod\"} 0\n"))
        }
    }

    @Test func aWriteOnAStaleServerLandsOnTopUnlessItNamedTheVersion() async throws {
        try await withTwoServers { one, two, _ in
            #expect(try one.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}").status == 200)
            let admin = InProcessClient(handler: two.handler)
            // Without If-Match: the server loads version 2, then writes 3 on top of it, as one server would.
            let onTop = try admin.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/search-timeout-ms/default", token: one.admin,
                body: #"{"value":900}"#)
            #expect(onTop.status == 200)
            #expect(try onTop.json("version") == .int(3))
            let state = try #require(two.service.state("ios-prod"))
            #expect(state.version == 3 && state.compiled.flag("new-checkout")?.killed == true)
            // With the If-Match of a version the other server has since replaced: 409 with the current version.
            #expect(
                try one.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/restore", body: "{}").status == 200)
            let stale = try admin.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/search-timeout-ms/default", token: one.admin,
                headers: [("If-Match", "\"3\"")], body: #"{"value":950}"#)
            #expect(stale.status == 409)
            #expect(stale.header("ETag") == "\"4\"")
            #expect(try stale.json("error.currentVersion") == .int(4))
            // With the If-Match of a version this server has not loaded yet (read from the other): it loads it first.
            #expect(try one.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}").status == 200)
            let ahead = try admin.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/search-timeout-ms/default", token: one.admin,
                headers: [("If-Match", "\"5\"")], body: #"{"value":975}"#)
            #expect(ahead.status == 200)
            #expect(try ahead.json("version") == .int(6))
            #expect(try one.app.service.catchUp("ios-prod"))
            #expect(
                (try? one.app.service.servedDocument("ios-prod"))?.bytes
                    == (try? two.service.servedDocument("ios-prod"))?.bytes)
        }
    }

    /// A kill sent to a server whose copy still has the flag killed, just after the other server restored it: the
    /// write looks unchanged here, so the store is asked before answering, and the flag is killed.
    @Test func aKillThatLooksUnchangedOnAStaleServerStillKills() async throws {
        try await withTwoServers { one, two, sync in
            #expect(try one.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}").status == 200)
            sync.setChanged("ios-prod", version: 2)
            #expect(two.service.state("ios-prod")?.compiled.flag("new-checkout")?.killed == true)
            #expect(
                try one.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/restore", body: "{}").status == 200)
            // No notification yet: the second server still serves version 2, killed.
            let admin = InProcessClient(handler: two.handler)
            let kill = try admin.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", token: one.admin, body: "{}")
            #expect(kill.status == 200)
            #expect(try kill.json("changed") == .bool(true))
            #expect(try kill.json("version") == .int(4))
            #expect(two.service.state("ios-prod")?.compiled.flag("new-checkout")?.killed == true)
            // Killing it again changes nothing, and asks the store once to be sure.
            let again = try admin.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", token: one.admin, body: "{}")
            #expect(try again.json("changed") == .bool(false))
            #expect(try again.json("version") == .int(4))
        }
    }

    @Test func keysMadeOrRevokedOnOneServerCountOnTheOtherAfterASync() async throws {
        try await withTwoServers { one, two, sync in
            let created = try one.send("POST", "/v1/admin/sets/ios-prod/keys", body: #"{"name":"ios-2"}"#)
            #expect(created.status == 201)
            guard case .string(let key)? = try created.json("token") else {
                Issue.record("no token in \(created.text)")
                return
            }
            let reader = InProcessClient(handler: two.handler)
            #expect(try reader.send("GET", "/v1/sets/ios-prod", token: key, body: "").status == 401)
            sync.check()
            #expect(try reader.send("GET", "/v1/sets/ios-prod", token: key, body: "").status == 200)
            let revoked = try one.send("DELETE", "/v1/admin/sets/ios-prod/keys/ios-2")
            #expect(revoked.status == 200, "\(revoked.text)")
            sync.tokensChanged()
            #expect(try reader.send("GET", "/v1/sets/ios-prod", token: key, body: "").status == 401)
        }
    }
}
