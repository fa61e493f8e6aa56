import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// Change requests (docs/reviews.md): a write held back with `?propose=`, approved by another person, applied as one
/// version; and a set's `reviews` setting, which holds direct writes back but never a kill.
@Suite("Change requests and reviews")
struct ChangeRequestTests {
    static let set = "/v1/admin/sets/ios-prod"

    /// A token of the admin API with `role`, made through the API; its secret.
    static func token(_ harness: AppHarness, _ name: String, role: String, sets: String = "") throws -> String {
        let scope = sets.isEmpty ? "" : #","sets":["\#(sets)"]"#
        let made = try harness.send(
            "POST", "/v1/admin/tokens", body: #"{"name":"\#(name)","role":"\#(role)"\#(scope)}"#)
        guard case .string(let token)? = try made.json("token") else {
            throw JSONShapeError(description: "no token in \(made)")
        }
        return token
    }

    /// Proposes `body` to `target` as `token`; the change request's id.
    static func propose(
        _ harness: AppHarness, _ method: String, _ target: String, body: String, token: String, title: String = "t"
    ) throws -> Int {
        let separator = target.contains("?") ? "&" : "?"
        let answer = try harness.send(method, "\(target)\(separator)propose=\(title)", token: token, body: body)
        #expect(answer.status == 202, "\(answer)")
        #expect(try answer.json("changed") == .bool(false))
        guard case .int(let id)? = try answer.json("changeRequest") else {
            throw JSONShapeError(description: "no id in \(answer)")
        }
        return Int(id)
    }

    static func state(_ harness: AppHarness, _ id: Int) throws -> JSONValue? {
        try harness.send("GET", "\(set)/changes/\(id)").json("change.state")
    }

    @Test func aProposedWriteIsHeldUntilAnotherPersonApprovesAndItIsApplied() async throws {
        try await withHarness { harness in
            let alice = try Self.token(harness, "alice", role: "editor")
            let bob = try Self.token(harness, "bob", role: "editor")
            let kill = "\(Self.set)/flags/new-checkout/kill"
            let id = try Self.propose(
                harness, "POST", kill, body: #"{"reason":"errors"}"#, token: alice, title: "Kill+it")
            let flag = try harness.send("GET", "\(Self.set)/flags/new-checkout")
            #expect(try flag.json("version") == .int(1))
            #expect(try flag.json("flag.killed") == .bool(false))

            let shown = try harness.send("GET", "\(Self.set)/changes/\(id)")
            #expect(try shown.json("change.title") == .string("Kill it"))
            #expect(try shown.json("change.author") == .string("alice"))
            #expect(try shown.json("change.state") == .string("open"))
            #expect(try shown.json("change.baseVersion") == .int(1))
            #expect(try shown.json("conflicts") == .array([]))
            guard case .array(let flags)? = try shown.json("flags"), let item = flags.first else {
                Issue.record("no flags in \(shown)")
                return
            }
            #expect(item.member("key") == .string("new-checkout"))
            #expect(item.member("after")?.member("killed") == .bool(true))
            #expect(item.member("before")?.member("killed") == .bool(false))

            let own = try harness.send("POST", "\(Self.set)/changes/\(id)/approve", token: alice, body: "{}")
            #expect(own.status == 403, "\(own)")
            #expect(try Self.state(harness, id) == .string("open"))

            let approved = try harness.send(
                "POST", "\(Self.set)/changes/\(id)/approve", token: bob, body: #"{"reason":"looks right"}"#)
            #expect(approved.status == 200, "\(approved)")
            #expect(try approved.json("state") == .string("approved"))
            #expect(try approved.json("approvals[0].actor") == .string("bob"))

            let applied = try harness.send("POST", "\(Self.set)/changes/\(id)/apply", token: alice, body: "{}")
            #expect(applied.status == 200, "\(applied)")
            #expect(try applied.json("state") == .string("applied"))
            #expect(try applied.json("appliedVersion") == .int(2))
            #expect(applied.header("ETag") == "\"2\"")
            #expect(try harness.send("GET", "\(Self.set)/flags/new-checkout").json("flag.killed") == .bool(true))

            let audit = try harness.send("GET", "\(Self.set)/audit").json("records")
            guard case .array(let records)? = audit else {
                Issue.record("no audit records")
                return
            }
            let actions = records.compactMap { $0.member("action")?.text }
            #expect(Array(actions.prefix(3)) == ["change.apply", "change.approve", "change.propose"])
            let write = records.first { $0.member("action") == .string("change.apply") }
            #expect(write?.member("version") == .int(2))
            #expect(write?.member("reason")?.text?.contains("proposed by alice, approved by bob") == true)

            let again = try harness.send("POST", "\(Self.set)/changes/\(id)/apply", token: bob, body: "{}")
            #expect(again.status == 409)
            #expect(try again.json("error.code") == .string("change_state"))
        }
    }

    @Test func applyingARequestWhoseItemChangedSinceIsAConflictAndOtherItemsMayChange() async throws {
        try await withHarness { harness in
            let alice = try Self.token(harness, "alice", role: "editor")
            let bob = try Self.token(harness, "bob", role: "editor")
            let id = try Self.propose(
                harness, "POST", "\(Self.set)/flags/search-timeout-ms/default", body: #"{"valueText":"900"}"#,
                token: alice)
            let other = try Self.propose(
                harness, "POST", "\(Self.set)/flags/new-checkout/archive", body: "{}", token: alice)
            for change in [id, other] {
                #expect(
                    try harness.send("POST", "\(Self.set)/changes/\(change)/approve", token: bob, body: "{}").status
                        == 200)
            }
            // Someone changes the same flag directly: the request no longer applies.
            let direct = try harness.send(
                "POST", "\(Self.set)/flags/search-timeout-ms/default", body: #"{"valueText":"1000"}"#)
            #expect(direct.status == 200)
            let shown = try harness.send("GET", "\(Self.set)/changes/\(id)")
            #expect(try shown.json("conflicts[0].key") == .string("search-timeout-ms"))
            #expect(try shown.json("flags[0].before.default") == .int(1000))
            let refused = try harness.send("POST", "\(Self.set)/changes/\(id)/apply", body: "{}")
            #expect(refused.status == 409)
            #expect(try refused.json("error.code") == .string("change_conflict"))
            #expect(try refused.json("error.subject") == .string("change"))
            #expect(refused.text.contains("flag search-timeout-ms"))
            #expect(try Self.state(harness, id) == .string("approved"))

            // The other request touches another flag: it applies on top of the direct write.
            let applied = try harness.send("POST", "\(Self.set)/changes/\(other)/apply", body: "{}")
            #expect(applied.status == 200, "\(applied)")
            #expect(try applied.json("appliedVersion") == .int(3))
            let flags = try harness.send("GET", "\(Self.set)/flags")
            #expect(try flags.json("flags.search-timeout-ms.default") == .int(1000))
            #expect(try flags.json("flags.new-checkout.archived") == .bool(true))
        }
    }

    @Test func aRequestTheSetNoLongerAcceptsFailsWithTheServersMessage() async throws {
        try await withHarness { harness in
            let alice = try Self.token(harness, "alice", role: "editor")
            let bob = try Self.token(harness, "bob", role: "editor")
            let rule = #"{"rule":{"name":"qa","cohort":"qa","valueText":"true"}}"#
            #expect(
                try harness.send("PUT", "\(Self.set)/cohorts/qa", body: #"{"cohort":{"include":["q"]}}"#).status == 201)
            let id = try Self.propose(harness, "POST", "\(Self.set)/flags/new-checkout/rules", body: rule, token: alice)
            #expect(try harness.send("POST", "\(Self.set)/changes/\(id)/approve", token: bob, body: "{}").status == 200)
            // The cohort the rule needs goes; the request touches only the flag, so this is no conflict.
            #expect(try harness.send("DELETE", "\(Self.set)/cohorts/qa", body: "{}").status == 200)
            let failed = try harness.send("POST", "\(Self.set)/changes/\(id)/apply", token: bob, body: "{}")
            #expect(failed.status == 422, "\(failed)")
            let shown = try harness.send("GET", "\(Self.set)/changes/\(id)")
            #expect(try shown.json("change.state") == .string("failed"))
            #expect(try shown.json("change.failure")?.text?.isEmpty == false)
            #expect(try harness.send("GET", "\(Self.set)/flags/new-checkout").json("version") == .int(3))
        }
    }

    @Test func rejectingAndWithdrawingEndARequestAndOnlyItsAuthorOrAnAdminWithdraws() async throws {
        try await withHarness { harness in
            let alice = try Self.token(harness, "alice", role: "editor")
            let bob = try Self.token(harness, "bob", role: "editor")
            let archive = "\(Self.set)/flags/new-checkout/archive"
            let rejected = try Self.propose(harness, "POST", archive, body: "{}", token: alice)
            let answer = try harness.send(
                "POST", "\(Self.set)/changes/\(rejected)/reject", token: bob, body: #"{"reason":"not yet"}"#)
            #expect(try answer.json("state") == .string("rejected"))
            #expect(try answer.json("decidedBy") == .string("bob"))
            #expect(try answer.json("decisionReason") == .string("not yet"))
            let late = try harness.send("POST", "\(Self.set)/changes/\(rejected)/approve", token: bob, body: "{}")
            #expect(try late.json("error.code") == .string("change_state"))

            let withdrawn = try Self.propose(harness, "POST", archive, body: "{}", token: alice)
            #expect(
                try harness.send("DELETE", "\(Self.set)/changes/\(withdrawn)", token: bob, body: "{}").status == 403)
            #expect(
                try harness.send("DELETE", "\(Self.set)/changes/\(withdrawn)", token: alice, body: "{}").status == 200)
            #expect(try Self.state(harness, withdrawn) == .string("withdrawn"))
            let byAdmin = try Self.propose(harness, "POST", archive, body: "{}", token: alice)
            #expect(try harness.send("DELETE", "\(Self.set)/changes/\(byAdmin)", body: "{}").status == 200)

            let open = try harness.send("GET", "\(Self.set)/changes?state=open")
            #expect(try open.json("changes") == .array([]))
            guard case .array(let all)? = try harness.send("GET", "\(Self.set)/changes").json("changes") else {
                Issue.record("no list")
                return
            }
            let ids = all.compactMap { change -> Int64? in
                guard case .int(let id)? = change.member("id") else { return nil }
                return id
            }
            #expect(ids == [byAdmin, withdrawn, rejected].map(Int64.init))
            #expect(try harness.send("GET", "\(Self.set)/changes?state=pending").status == 400)
            #expect(try harness.send("GET", "\(Self.set)/changes/99").json("error.subject") == .string("change"))
            #expect(try harness.send("GET", "\(Self.set)/changes/x").status == 400)
        }
    }

    @Test func withReviewsRequiredEditorsMustProposeButKillsGoAtOnce() async throws {
        try await withHarness { harness in
            let alice = try Self.token(harness, "alice", role: "editor")
            let bob = try Self.token(harness, "bob", role: "editor")
            let limited = try Self.token(harness, "lia", role: "admin", sets: "ios-prod")
            #expect(
                try harness.send("PUT", "\(Self.set)/settings", token: alice, body: #"{"reviews":"required"}"#).status
                    == 403)
            let settings = try harness.send("PUT", "\(Self.set)/settings", body: #"{"reviews":"required"}"#)
            #expect(try settings.json("reviews") == .string("required"))

            let target = "\(Self.set)/flags/search-timeout-ms/default"
            let held = try harness.send("POST", target, token: alice, body: #"{"valueText":"900"}"#)
            #expect(held.status == 409)
            #expect(try held.json("error.code") == .string("review_required"))
            #expect(try harness.send("POST", target, token: limited, body: #"{"valueText":"900"}"#).status == 409)
            let kill = try harness.send("POST", "\(Self.set)/flags/new-checkout/kill", token: alice, body: "{}")
            #expect(kill.status == 200)
            #expect(
                try harness.send("POST", "\(Self.set)/flags/new-checkout/restore", token: bob, body: "{}").status == 200
            )

            // An open request cannot be applied: it needs an approval first.
            let id = try Self.propose(harness, "POST", target, body: #"{"valueText":"900"}"#, token: alice)
            let early = try harness.send("POST", "\(Self.set)/changes/\(id)/apply", token: alice, body: "{}")
            #expect(try early.json("error.code") == .string("change_state"))
            #expect(try harness.send("POST", "\(Self.set)/changes/\(id)/approve", token: bob, body: "{}").status == 200)
            #expect(try harness.send("POST", "\(Self.set)/changes/\(id)/apply", token: alice, body: "{}").status == 200)

            // Only an admin not limited to sets writes at once, and the audit log says so.
            let refused = try harness.send(
                "POST", "\(target)?withoutReview=incident", token: limited, body: #"{"valueText":"950"}"#)
            #expect(refused.status == 403)
            let urgent = try harness.send("POST", "\(target)?withoutReview=incident+7", body: #"{"valueText":"950"}"#)
            #expect(urgent.status == 200, "\(urgent)")
            let last = try harness.send("GET", "\(Self.set)/audit?limit=1").json("records[0].reason")
            #expect(last == .string("without review: incident 7"))
        }
    }

    @Test func aProposalNeedsATitleAndKeepsAcrossARestart() async throws {
        try await withHarness { harness in
            let target = "\(Self.set)/flags/new-checkout/archive"
            #expect(try harness.send("POST", "\(target)?propose=", body: "{}").json("error.path") == .string("propose"))
            let long = String(repeating: "a", count: 201)
            #expect(try harness.send("POST", "\(target)?propose=\(long)", body: "{}").status == 400)
            let id = try Self.propose(harness, "POST", target, body: "{}", token: harness.admin, title: "Archive")
            let imported = try harness.send(
                "PUT", "/v1/admin/sets/android-prod?propose=Seed",
                body: #"{"document":{"schema":1,"set":"android-prod","flags":{"f":{"type":"bool","default":true}}}}"#)
            #expect(imported.status == 202, "\(imported)")
            #expect(try imported.json("changes.flags.f.after.default") == .bool(true))
            #expect(try imported.json("version") == .int(1))

            let reopened = InProcessClient(handler: try harness.reopened().handler)
            let shown = try reopened.send("GET", "\(Self.set)/changes/\(id)", token: harness.admin)
            #expect(try shown.json("change.title") == .string("Archive"))
            #expect(try shown.json("flags[0].after.archived") == .bool(true))
        }
    }
}
