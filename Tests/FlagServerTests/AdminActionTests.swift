import FlagCore
import Foundation
import Testing

@testable import FlagServer

@Suite("Admin API: flag actions, versions, evaluation, keys, audit")
struct AdminActionTests {
    static let flagPath = "/v1/admin/sets/ios-prod/flags/new-checkout"

    @Test func killAndRestore() async throws {
        try await withHarness { harness in
            let kill = try harness.send("POST", "\(Self.flagPath)/kill", body: #"{"reason":"incident 7"}"#)
            #expect(kill.status == 200)
            #expect(try kill.json("flag.killed") == .bool(true))
            let restore = try harness.send("POST", "\(Self.flagPath)/restore")
            #expect(try restore.json("version") == .int(3))
            #expect(try restore.json("flag.killed") == .bool(false))
            let audit = try harness.app.service.audit("ios-prod", limit: 2)
            #expect(audit.map(\.action) == ["flag.restore", "flag.kill"])
            #expect(audit.map(\.actor) == ["root", "root"])
            #expect(audit[1].reason == "incident 7")
            #expect(audit[1].subject == "new-checkout")
            #expect(try harness.send("POST", "/v1/admin/sets/ios-prod/flags/ghost/kill").status == 404)
            #expect(try harness.send("GET", "\(Self.flagPath)/kill").status == 405)
            #expect(try harness.send("POST", "\(Self.flagPath)/explode").status == 404)
        }
    }

    @Test func overridesAreAddedWithADurationAndRemoved() async throws {
        try await withHarness { harness in
            let add = try harness.send(
                "POST", "\(Self.flagPath)/overrides", body: #"{"unit":"u-9","value":true,"for":"2h"}"#)
            #expect(add.status == 200)
            #expect(
                try add.json("flag.overrides")
                    == .array([
                        .object([
                            "unit": .string("u-9"), "value": .bool(true), "until": .string("2027-01-15T10:00:00Z"),
                        ])
                    ]))
            let cohort = try harness.send(
                "POST", "\(Self.flagPath)/overrides",
                body: #"{"cohort":"de","value":true,"until":"2027-02-01T00:00:00Z"}"#)
            #expect(try cohort.json("version") == .int(3))
            let wrongType = try harness.send(
                "POST", "\(Self.flagPath)/overrides", body: #"{"unit":"u-1","value":"yes"}"#)
            #expect(wrongType.status == 422)
            #expect(try harness.send("POST", "\(Self.flagPath)/overrides", body: #"{"value":true}"#).status == 400)
            #expect(try harness.send("DELETE", "\(Self.flagPath)/overrides?unit=u-9").status == 200)
            #expect(try harness.send("DELETE", "\(Self.flagPath)/overrides?unit=u-9").status == 404)
            let flag = try #require(harness.app.service.state("ios-prod")?.compiled.flag("new-checkout"))
            #expect(flag.overrides.map(\.target) == [.cohort("de")])
        }
    }

    @Test func rolloutsAreSetPausedResumedAndRemoved() async throws {
        try await withHarness { harness in
            let percent = try harness.send("PUT", "\(Self.flagPath)/rollout", body: #"{"value":true,"percent":25}"#)
            #expect(try percent.json("flag.rollout") == .object(["value": .bool(true), "percent": .int(25)]))
            let preset = try harness.send("PUT", "\(Self.flagPath)/rollout", body: #"{"value":true,"preset":"apple"}"#)
            guard case .array(let steps)? = try preset.json("flag.rollout.schedule") else {
                Issue.record("no schedule")
                return
            }
            #expect(steps.count == 7)
            #expect(steps.first == .object(["at": .string("2027-01-15T08:00:00Z"), "percent": .int(1)]))
            #expect(steps.last == .object(["at": .string("2027-01-21T08:00:00Z"), "percent": .int(100)]))
            harness.clock.advance(seconds: 3600)
            let paused = try harness.send("POST", "\(Self.flagPath)/rollout/pause", body: #"{"reason":"crash rate"}"#)
            #expect(try paused.json("flag.rollout.pausedAt") == .string("2027-01-15T09:00:00Z"))
            harness.clock.advance(seconds: 86_400)
            let resumed = try harness.send("POST", "\(Self.flagPath)/rollout/resume")
            #expect(try resumed.json("flag.rollout.pausedAt") == nil)
            guard case .array(let moved)? = try resumed.json("flag.rollout.schedule") else {
                Issue.record("no schedule")
                return
            }
            #expect(moved[1] == .object(["at": .string("2027-01-17T08:00:00Z"), "percent": .int(2)]))
            let stepped = try harness.send(
                "PUT", "\(Self.flagPath)/rollout",
                body: #"{"value":true,"steps":"0h:1,24h:5,72h:100","start":"2027-02-01T00:00:00Z"}"#)
            #expect(
                try stepped.json("flag.rollout.schedule")
                    == .array([
                        .object(["at": .string("2027-02-01T00:00:00Z"), "percent": .int(1)]),
                        .object(["at": .string("2027-02-02T00:00:00Z"), "percent": .int(5)]),
                        .object(["at": .string("2027-02-04T00:00:00Z"), "percent": .int(100)]),
                    ]))
            #expect(
                try harness.send("PUT", "\(Self.flagPath)/rollout", body: #"{"value":true,"percent":120}"#).status
                    == 422)
            #expect(
                try harness.send("PUT", "\(Self.flagPath)/rollout", body: #"{"value":true,"preset":"android"}"#).status
                    == 400)
            #expect(try harness.send("DELETE", "\(Self.flagPath)/rollout").status == 200)
            #expect(try harness.send("POST", "\(Self.flagPath)/rollout/pause").status == 404)
        }
    }

    @Test func expireArchiveDefaultAndRules() async throws {
        try await withHarness { harness in
            let expire = try harness.send("POST", "\(Self.flagPath)/expire", body: #"{"keep":true}"#)
            #expect(try expire.json("flag.expiresAt") == .string("2027-01-15T08:00:00Z"))
            #expect(try expire.json("flag.expiredValue") == .bool(true))
            let later = try harness.send(
                "POST", "\(Self.flagPath)/expire", body: #"{"at":"2027-03-01T00:00:00Z","keep":false}"#)
            #expect(try later.json("flag.expiresAt") == .string("2027-03-01T00:00:00Z"))
            #expect(try harness.send("POST", "\(Self.flagPath)/expire", body: #"{}"#).status == 400)
            let defaulted = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/search-timeout-ms/default", body: #"{"value":1200}"#)
            #expect(try defaulted.json("flag.default") == .int(1200))
            let rule = try harness.send(
                "POST", "\(Self.flagPath)/rules",
                body: #"{"rule":{"name":"germany","cohort":"de","rollout":{"percent":10,"value":true}}}"#)
            #expect(rule.status == 200)
            #expect(
                harness.app.service.state("ios-prod")?.compiled.flag("new-checkout")?.rules.map(\.name) == [
                    "beta-first", "germany",
                ])
            let badRule = try harness.send(
                "POST", "\(Self.flagPath)/rules", body: #"{"rule":{"name":"x","cohort":"nobody","value":true}}"#)
            #expect(badRule.status == 422)
            #expect(try badRule.json("error.path") == .string("flags.new-checkout.rules[2].cohort"))
            #expect(try harness.send("DELETE", "\(Self.flagPath)/rules/germany").status == 200)
            #expect(try harness.send("DELETE", "\(Self.flagPath)/rules/germany").status == 404)
            let archived = try harness.send("POST", "\(Self.flagPath)/archive")
            #expect(try archived.json("flag.archived") == .bool(true))
        }
    }

    @Test func historyDiffAndRollback() async throws {
        try await withHarness { harness in
            _ = try harness.send("POST", "\(Self.flagPath)/kill", body: #"{"reason":"r1"}"#)
            _ = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/search-timeout-ms/default", body: #"{"value":900}"#)
            let history = try harness.send("GET", "/v1/admin/sets/ios-prod/history?key=new-checkout")
            guard case .array(let versions)? = try history.json("versions") else {
                Issue.record("no versions")
                return
            }
            #expect(versions.count == 2)
            #expect(
                versions.first
                    == .object([
                        "version": .int(2), "createdAt": .string("2027-01-15T08:00:00Z"), "actor": .string("root"),
                        "action": .string("flag.kill"), "subject": .string("new-checkout"), "reason": .string("r1"),
                        "changed": .array([.object(["kind": .string("flag"), "key": .string("new-checkout")])]),
                    ]))
            let limited = try harness.send("GET", "/v1/admin/sets/ios-prod/history?limit=1")
            guard case .array(let one)? = try limited.json("versions") else {
                Issue.record("no versions")
                return
            }
            #expect(one.count == 1)

            let diff = try harness.send("GET", "/v1/admin/sets/ios-prod/diff?from=1&to=3")
            #expect(diff.status == 200)
            guard case .array(let flags)? = try diff.json("flags") else {
                Issue.record("no flags")
                return
            }
            #expect(flags.count == 2)
            guard case .object(let first) = flags[0] else {
                Issue.record("not an object")
                return
            }
            #expect(first["key"] == .string("new-checkout"))
            guard case .object(let before)? = first["before"], case .object(let after)? = first["after"] else {
                Issue.record("no before/after")
                return
            }
            #expect(before["killed"] == .bool(false))
            #expect(after["killed"] == .bool(true))
            #expect(try diff.json("cohorts") == .array([]))
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/diff?from=1&to=9").status == 404)
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/diff?from=1").status == 400)

            let rollback = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/rollback", headers: [("If-Match", "\"3\"")],
                body: #"{"version":1,"reason":"bad day"}"#)
            #expect(rollback.status == 200)
            #expect(try rollback.json("version") == .int(4))
            let document = try harness.send("GET", "/v1/sets/ios-prod/versions/4")
            let original = try harness.send("GET", "/v1/sets/ios-prod/versions/1")
            #expect(try document.json("flags") == original.json("flags"))
            #expect(try harness.app.service.audit("ios-prod", limit: 1).first?.action == "set.rollback")
            #expect(
                try harness.send("POST", "/v1/admin/sets/ios-prod/rollback", body: #"{"version":99}"#).status == 404)
        }
    }

    @Test func evaluationExplainsEachStep() async throws {
        try await withHarness { harness in
            let beta = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/evaluate", body: #"{"key":"new-checkout","unitID":"u-1"}"#)
            #expect(beta.status == 200)
            #expect(try beta.json("value") == .bool(true))
            #expect(try beta.json("reason") == .string("TARGETING_MATCH"))
            #expect(try beta.json("variant") == .string("beta-first"))
            #expect(try beta.json("steps") == .array([.string("rule 'beta-first': match")]))
            let other = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/evaluate",
                body: #"{"key":"new-checkout","unit":"u-7","attributes":{"country":"DE"}}"#)
            #expect(try other.json("value") == .bool(false))
            #expect(
                try other.json("steps")
                    == .array([.string("rule 'beta-first': no match"), .string("serving the flag's default")]))
            let missing = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/evaluate", body: #"{"key":"nope","unit":"u-7"}"#)
            #expect(try missing.json("errorCode") == .string("FLAG_NOT_FOUND"))
            #expect(
                try harness.send("POST", "/v1/admin/sets/ios-prod/evaluate", body: #"{"key":"nope"}"#).status == 400)
        }
    }

    @Test func sdkKeysAreCreatedShownOnceListedAndRevoked() async throws {
        try await withHarness { harness in
            let created = try harness.send("POST", "/v1/admin/sets/android-prod/keys", body: #"{"name":"android-app"}"#)
            #expect(created.status == 201)
            guard case .string(let token)? = try created.json("token") else {
                Issue.record("no token")
                return
            }
            #expect(token.hasPrefix("fss_"))
            #expect(try harness.send("GET", "/v1/sets/android-prod", token: token).status == 200)
            #expect(try harness.send("GET", "/v1/sets/ios-prod", token: token).status == 403)
            let list = try harness.send("GET", "/v1/admin/sets/android-prod/keys")
            #expect(
                try list.json()
                    == .object([
                        "keys": .array([
                            .object([
                                "name": .string("android-app"), "set": .string("android-prod"),
                                "createdAt": .string("2027-01-15T08:00:00Z"),
                            ])
                        ])
                    ]))
            #expect(!list.text.contains(token))
            #expect(
                try harness.send("POST", "/v1/admin/sets/android-prod/keys", body: #"{"name":"android-app"}"#).status
                    == 409)
            #expect(try harness.send("POST", "/v1/admin/sets/nowhere/keys", body: #"{"name":"k"}"#).status == 404)
            #expect(try harness.send("DELETE", "/v1/admin/sets/ios-prod/keys/android-app").status == 404)
            #expect(try harness.send("DELETE", "/v1/admin/sets/android-prod/keys/android-app").status == 200)
            #expect(try harness.send("GET", "/v1/sets/android-prod", token: token).status == 401)
            let audit = try harness.send("GET", "/v1/admin/audit?limit=2")
            guard case .array(let records)? = try audit.json("records") else {
                Issue.record("no records")
                return
            }
            #expect(records.count == 2)
            #expect(
                records.first.flatMap { if case .object(let m) = $0 { m["action"] } else { nil } }
                    == .string("key.revoke"))
            let setAudit = try harness.send("GET", "/v1/admin/sets/ios-prod/audit")
            #expect(setAudit.status == 200)
        }
    }

    @Test func metricsCountRequestsWritesAndVersions() async throws {
        try await withHarness { harness in
            _ = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            _ = try harness.send("POST", "\(Self.flagPath)/kill")
            _ = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/x", body: #"{"flag":{"type":"bool","default":1}}"#)
            let metrics = try harness.send("GET", "/metrics")
            #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            let text = metrics.text
            #expect(text.contains("flagserver_requests_total{route=\"GET /v1/sets/{set}\",status=\"200\"} 1\n"))
            #expect(
                text.contains(
                    "flagserver_requests_total{route=\"PUT /v1/admin/sets/{set}/flags/{key}\",status=\"422\"} 1\n"))
            #expect(text.contains("flagserver_set_version{set=\"ios-prod\"} 2\n"))
            #expect(text.contains("flagserver_writes_total 3\n"))  // two sets created, one kill
            #expect(text.contains("flagserver_write_rejections_total{reason=\"invalid\"} 1\n"))
            #expect(text.contains("flagserver_request_duration_seconds_count 3\n"))
            #expect(text.contains("flagserver_open_streams 0\n"))
        }
    }
}
