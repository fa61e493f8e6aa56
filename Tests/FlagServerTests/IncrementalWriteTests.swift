import FlagAPI
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagCore
@testable import FlagServer

/// Writes cost what they change: a write compiles and stores the items it touches, shares the rest with
/// the version before, never assembles the whole document, and still refuses anything that would break the set.
@Suite("Writes that cost what they change", .live)
struct IncrementalWriteTests {
    @Test func aKillSharesEveryOtherItemAndAssemblesNoDocument() async throws {
        // An unsigned set: a signed set's write assembles and signs its document, once (SigningRouteTests).
        try await withHarness(signed: false) { harness in
            let service = harness.app.service
            let before = try #require(service.state("ios-prod"))
            let stream = harness.start("GET", "/v1/sets/ios-prod/stream", token: harness.sdk)
            #expect(await eventually { stream.streamBody.count > 0 })
            let response = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: #"{"reason":"x"}"#)
            #expect(response.status == 200)
            let after = try #require(service.state("ios-prod"))
            #expect(after.version == 2)
            // The stream has its patch, and nothing on the write's path built the new version's document.
            #expect(await eventually { String(decoding: stream.streamBody, as: UTF8.self).contains("event: patch") })
            #expect(service.registry.record("ios-prod")?.served == nil)
            #expect(after.compiled.flags["search-timeout-ms"] === before.compiled.flags["search-timeout-ms"])
            #expect(after.compiled.cohorts === before.compiled.cohorts)
            // What the write kept equals what a load of the stored version builds from scratch.
            let reopened = try harness.reopened().service
            let reloaded = reopened.state("ios-prod")
            #expect(try reopened.servedDocument("ios-prod").bytes == service.servedDocument("ios-prod").bytes)
            #expect(reloaded?.digest == after.digest)
            #expect(after.digest == ItemsDigest(after.items.map { (key: $0.key, value: $0.value) }))
        }
    }

    /// Each whole-set invariant, broken by a write: references that resolve (a flag naming a missing cohort, a cohort
    /// deleted while a flag uses it), no `in_cohort` cycle, unique names (rules of a flag, keys of a document), and
    /// values of the flag's type. 422 naming the problems' paths, and no version.
    @Test(arguments: [
        (
            "PUT", "/v1/admin/sets/ios-prod/flags/ghost",
            #"{"flag":{"type":"bool","default":false,"rules":[{"name":"r","cohort":"nobody","value":true}]}}"#,
            ["flags.ghost.rules[0].cohort"]
        ),
        ("DELETE", "/v1/admin/sets/ios-prod/cohorts/beta", "", ["flags.new-checkout.rules[0].cohort"]),
        (
            "PUT", "/v1/admin/sets/ios-prod/cohorts/de",
            #"{"cohort":{"groups":[[{"attribute":"","op":"in_cohort","values":["de"]}]]}}"#, ["cohorts.de"]
        ),
        (
            "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/rules",
            #"{"rule":{"name":"beta-first","cohort":"de","value":true}}"#, ["flags.new-checkout.rules[1].name"]
        ),
        (
            "PUT", "/v1/admin/sets/ios-prod",
            #"{"document":{"schema":1,"flags":{"a":{"type":"bool","default":1}}}}"#, ["flags.a.default"]
        ),
        (
            "PUT", "/v1/admin/sets/ios-prod",
            #"{"document":{"schema":1,"flags":{"a":{"type":"bool","default":false},"a":{"type":"bool","default":true}}}}"#,
            ["flags.a"]
        ),
    ])
    func aWriteThatWouldBreakTheSetIsRefusedAndChangesNothing(
        method: String, path: String, body: String, paths: [String]
    ) async throws {
        try await withHarness { harness in
            let before = try #require(harness.app.service.state("ios-prod"))
            let response = try harness.send(method, path, body: body)
            #expect(response.status == 422, "\(response)")
            #expect(try response.problemPaths() == paths, "\(response)")
            #expect(harness.app.service.state("ios-prod") === before)
        }
    }

    /// The digest stored with a version is checked at load: the items' digest, or a whole document's SHA-256 as
    /// stored by a release before the items digest; anything else is reported once.
    @Test func theStoredDigestIsCheckedWhenTheSetIsLoaded() throws {
        let items: [ItemKey: [UInt8]] = [
            .flag("a"): Array(#"{"type":"bool","default":true}"#.utf8), .cohort("c"): Array(#"{"include":["u"]}"#.utf8),
        ]
        let document = FlagSet.assemble(
            name: "s", version: 1, updatedAt: Date(timeIntervalSince1970: 0), cohorts: [:], flags: [:])
        let itemsDigest = ItemsDigest(items.map { (key: $0.key, value: $0.value) }).bytes
        let legacy = SHA256.hash(
            FlagSet.assemble(
                name: "s", version: 1, updatedAt: Date(timeIntervalSince1970: 0),
                cohorts: ["c": items[.cohort("c")]!], flags: ["a": items[.flag("a")]!]))
        for (digest, reported) in [(itemsDigest, false), (legacy, false), (SHA256.hash(document), true)] {
            let store = try SQLiteFlagStore.inMemory()
            try store.createSet(
                "s", change: VersionChange(items: items.mapValues { .some($0) }), digest: digest,
                audit: AuditEntry(time: Date(timeIntervalSince1970: 0), actor: "t", action: "set.create"))
            let lines = Locked<[String]>([])
            _ = try FlagService(store: store, clock: TestClock().clock) { line in lines.withLock { $0.append(line) } }
            #expect(lines.withLock { $0.contains { $0.contains("differ from their stored digest") } } == reported)
        }
    }

    @Test func valuesMayComeAsTextReadByTheFlagsType() async throws {
        try await withHarness { harness in
            let flag = "/v1/admin/sets/ios-prod/flags/search-timeout-ms"
            let set = try harness.send("POST", "\(flag)/default", body: #"{"valueText":"900"}"#)
            #expect(try set.json("flag.default") == .int(900))
            let wrong = try harness.send("POST", "\(flag)/default", body: #"{"valueText":"fast"}"#)
            #expect(wrong.status == 400)
            #expect(try wrong.json("error.path") == .string("valueText"))
            #expect(try wrong.json("error.message") == .string("'fast' is not an int; use a whole number such as 42"))
            let both = try harness.send("POST", "\(flag)/default", body: #"{"value":1,"valueText":"2"}"#)
            #expect(both.status == 400)
            let expired = try harness.send("POST", "\(flag)/expire", body: #"{"keepText":"1200"}"#)
            #expect(try expired.json("flag.expiredValue") == .int(1200))
            let override = try harness.send("POST", "\(flag)/overrides", body: #"{"unit":"u-1","valueText":"5"}"#)
            #expect(try override.json("flag.overrides[0].value") == .int(5))
            let rollout = try harness.send("PUT", "\(flag)/rollout", body: #"{"percent":10,"valueText":"7"}"#)
            #expect(try rollout.json("flag.rollout.value") == .int(7))
        }
    }

    @Test func aRuleWithoutANameIsNamedAfterItsCohortOrItsPlace() async throws {
        try await withHarness { harness in
            let rules = "/v1/admin/sets/ios-prod/flags/new-checkout/rules"
            let byCohort = try harness.send("POST", rules, body: #"{"rule":{"cohort":"de","valueText":"true"}}"#)
            #expect(try byCohort.json("flag.rules[1].name") == .string("de"))
            #expect(try byCohort.json("flag.rules[1].value") == .bool(true))
            let inline =
                #"{"rule":{"conditions":[{"attribute":"plan","op":"eq","values":["pro"]}],"#
                + #""rollout":{"percent":50,"valueText":"true"}}}"#
            let byPlace = try harness.send("POST", rules, body: inline)
            #expect(try byPlace.json("flag.rules[2].name") == .string("rule-3"))
            #expect(try byPlace.json("flag.rules[2].rollout.value") == .bool(true))
        }
    }

    @Test func ifNoneMatchStarOnlyCreates() async throws {
        try await withHarness { harness in
            let body = #"{"flag":{"type":"bool","default":true}}"#
            let created = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/fresh", headers: [("If-None-Match", "*")], body: body)
            #expect(created.status == 201)
            let again = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/new-checkout", headers: [("If-None-Match", "*")], body: body)
            #expect(again.status == 409)
            #expect(try again.json("error.code") == .string("already_exists"))
            #expect(
                try harness.send("GET", "/v1/admin/sets/ios-prod/flags/new-checkout").json("flag.default")
                    == .bool(false))
            let cohort = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/cohorts/beta", headers: [("If-None-Match", "*")],
                body: #"{"cohort":{"include":["x"]}}"#)
            #expect(cohort.status == 409)
        }
    }
}
