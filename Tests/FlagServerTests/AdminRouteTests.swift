import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

@Suite("Admin API: sets, flags, cohorts")
struct AdminRouteTests {
    @Test func setsAreListedAndCreated() async throws {
        try await withHarness { harness in
            let created = try harness.send("POST", "/v1/admin/sets", body: #"{"name":"web-prod","reason":"launch"}"#)
            #expect(created.status == 201)
            #expect(try created.json("version") == .int(1))
            #expect(created.header("ETag") == "\"1\"")
            #expect(try harness.send("POST", "/v1/admin/sets", body: #"{"name":"web-prod"}"#).status == 409)
            #expect(try harness.send("POST", "/v1/admin/sets", body: #"{"name":"Web Prod"}"#).status == 400)
            #expect(try harness.send("POST", "/v1/admin/sets", body: #"{"name":"#).status == 400)
            let list = try harness.send("GET", "/v1/admin/sets")
            guard case .array(let sets)? = try list.json("sets") else {
                Issue.record("no sets")
                return
            }
            #expect(sets.count == 3)
            let seeded = #""time":"2027-01-15T08:00:00Z","actor":"test","action":"set.create""#
            let expected = """
                {"sets":[{"name":"android-prod","version":1,"updatedAt":"2027-01-15T08:00:00Z","flags":0,"cohorts":0,
                "stale":0,"lastChange":{\(seeded),"subject":"android-prod","version":1}},
                {"name":"ios-prod","version":1,"updatedAt":"2027-01-15T08:00:00Z","flags":2,"cohorts":2,"stale":0,
                "lastChange":{\(seeded),"subject":"ios-prod","version":1}},
                {"name":"web-prod","version":1,"updatedAt":"2027-01-15T08:00:00Z","flags":0,"cohorts":0,"stale":0,
                "lastChange":{"time":"2027-01-15T08:00:00Z","actor":"root","action":"set.create","subject":"web-prod",
                "reason":"launch","version":1}}]}
                """
            #expect(try list.json() == JSONReader.parse(Array(expected.utf8)))
            #expect(try harness.app.service.audit(nil, limit: 1).first?.reason == "launch")
        }
    }

    @Test func aFlagIsCreatedReadReplacedAndDeleted() async throws {
        try await withHarness { harness in
            let flag =
                #"{"flag":{"type":"string","kind":"experiment","default":"blue","owner":"growth"},"reason":"test"}"#
            let created = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/button-color", headers: [("If-Match", "\"1\"")], body: flag)
            #expect(created.status == 201)
            #expect(try created.json("version") == .int(2))
            #expect(try created.json("changed") == .bool(true))
            #expect(try created.json("flag.default") == .string("blue"))
            let read = try harness.send("GET", "/v1/admin/sets/ios-prod/flags/button-color")
            #expect(read.status == 200)
            #expect(try read.json("flag.kind") == .string("experiment"))
            let replaced = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/button-color",
                body: #"{"flag":{"type":"string","default":"green"}}"#)
            #expect(replaced.status == 200)
            #expect(try replaced.json("version") == .int(3))
            let same = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/button-color",
                body: #"{"flag":{"type":"string","default":"green"}}"#)
            #expect(try same.json("changed") == .bool(false))
            #expect(try same.json("version") == .int(3))
            let list = try harness.send("GET", "/v1/admin/sets/ios-prod/flags?kind=ops")
            guard case .object(let flags)? = try list.json("flags") else {
                Issue.record("no flags")
                return
            }
            #expect(flags.keys.sorted() == ["search-timeout-ms"])
            #expect(try harness.send("DELETE", "/v1/admin/sets/ios-prod/flags/button-color?reason=gone").status == 200)
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/flags/button-color").status == 404)
            #expect(try harness.send("DELETE", "/v1/admin/sets/ios-prod/flags/button-color").status == 404)
            let actions = try harness.app.service.audit("ios-prod", limit: 10).map(\.action)
            #expect(actions.prefix(3) == ["flag.delete", "flag.replace", "flag.create"])
        }
    }

    @Test func anInvalidFlagIsA422NamingEveryPath() async throws {
        try await withHarness { harness in
            let body = #"{"flag":{"type":"bool","default":3,"rules":[{"name":"x","cohort":"nope","value":true}]}}"#
            let response = try harness.send("PUT", "/v1/admin/sets/ios-prod/flags/bad", body: body)
            #expect(response.status == 422)
            #expect(try response.json("error.code") == .string("invalid_flag_set"))
            #expect(try response.json("error.path") == .string("flags.bad.default"))
            #expect(try response.problemPaths() == ["flags.bad.default", "flags.bad.rules[0].cohort"])
            let shape = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/bad",
                body: #"{"flag":{"type":"bool","default":true,"rules":"x"}}"#)
            #expect(shape.status == 422)
            #expect(try shape.json("error.path") == .string("flags.bad.rules"))
            #expect(
                try harness.send(
                    "PUT", "/v1/admin/sets/ios-prod/flags/Bad", body: #"{"flag":{"type":"bool","default":true}}"#
                ).status == 400)
        }
    }

    @Test func aStaleIfMatchIsA409WithTheCurrentVersion() async throws {
        try await withHarness { harness in
            #expect(
                try harness.send(
                    "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", headers: [("If-Match", "\"1\"")]
                ).status == 200)
            let stale = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/restore", headers: [("If-Match", "\"1\"")])
            #expect(stale.status == 409)
            #expect(try stale.json("error.code") == .string("conflict"))
            #expect(try stale.json("error.currentVersion") == .int(2))
            #expect(stale.header("ETag") == "\"2\"")
            #expect(
                try harness.send(
                    "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/restore", headers: [("If-Match", "2")]
                ).status == 400)
        }
    }

    @Test func cohortsAreWrittenAndAReferencedOneCannotBeDeleted() async throws {
        try await withHarness { harness in
            let put = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/cohorts/qa", body: #"{"cohort":{"include":["qa-1"]}}"#)
            #expect(put.status == 201)
            #expect(try put.json("cohort.include") == .array([.string("qa-1")]))
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/cohorts/qa").status == 200)
            guard
                case .object(let cohorts)? = try harness.send("GET", "/v1/admin/sets/ios-prod/cohorts").json("cohorts")
            else {
                Issue.record("no cohorts")
                return
            }
            #expect(cohorts.keys.sorted() == ["beta", "de", "qa"])
            let inUse = try harness.send("DELETE", "/v1/admin/sets/ios-prod/cohorts/beta")
            #expect(inUse.status == 422)
            #expect(try inUse.json("error.path") == .string("flags.new-checkout.rules[0].cohort"))
            #expect(try harness.send("DELETE", "/v1/admin/sets/ios-prod/cohorts/qa").status == 200)
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/cohorts/qa").status == 404)
            let bad = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/cohorts/x",
                body: #"{"cohort":{"groups":[[{"attribute":"a","op":"matches","values":["("]}]]}}"#)
            #expect(bad.status == 422)
        }
    }

    @Test func aWholeSetIsImportedOrDryRun() async throws {
        try await withHarness { harness in
            let document = #"{"schema":1,"flags":{"only":{"type":"bool","default":true}}}"#
            let dry = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod", body: #"{"dryRun":true,"document":\#(document)}"#)
            #expect(dry.status == 200)
            #expect(try dry.json("flags.only") == .string("added"))
            #expect(try dry.json("flags.new-checkout") == .string("removed"))
            #expect(try dry.json("cohorts.beta") == .string("removed"))
            #expect(harness.app.service.state("ios-prod")?.version == 1)
            let applied = try harness.send("PUT", "/v1/admin/sets/ios-prod", body: #"{"document":\#(document)}"#)
            #expect(applied.status == 200)
            #expect(harness.app.service.state("ios-prod")?.compiled.readableFlags.map(\.key).sorted() == ["only"])
            let created = try harness.send("PUT", "/v1/admin/sets/new-set", body: #"{"document":\#(document)}"#)
            #expect(created.status == 201)
            let export = try harness.send("GET", "/v1/admin/sets/new-set")
            #expect(export.body == (try? harness.app.service.servedDocument("new-set"))?.bytes)
        }
    }

    @Test(arguments: [("release", "2027-02-26T08:00:00Z"), ("experiment", "2027-04-15T08:00:00Z"), ("ops", nil)])
    func aNewFlagExpiresAfterItsKindsLifetime(kind: String, expiry: String?) async throws {
        try await withHarness { harness in
            let body = #"{"flag":{"type":"bool","kind":"\#(kind)","default":false}}"#
            let created = try harness.send("PUT", "/v1/admin/sets/ios-prod/flags/f", body: body)
            #expect(created.status == 201)
            #expect(try created.json("flag.expiresAt") == expiry.map(JSONValue.string))
            let explicit =
                #"{"flag":{"type":"bool","kind":"\#(kind)","default":false,"expiresAt":"2030-01-01T00:00:00Z"}}"#
            let replaced = try harness.send("PUT", "/v1/admin/sets/ios-prod/flags/f", body: explicit)
            #expect(try replaced.json("flag.expiresAt") == .string("2030-01-01T00:00:00Z"))
            let again = try harness.send("PUT", "/v1/admin/sets/ios-prod/flags/f", body: body)
            #expect(try again.json("flag.expiresAt") == nil)
        }
    }

    /// The list's `?kind=` filter knows FlagCore's kinds: a misspelt one is a 400 naming them, not an empty list.
    @Test func theKindFilterTakesFlagCoresKinds() async throws {
        try await withHarness { harness in
            for kind in FlagKind.known {
                let list = try harness.send("GET", "/v1/admin/sets/ios-prod/flags?kind=\(kind.name)")
                #expect(list.status == 200, "\(kind.name)")
            }
            let misspelt = try harness.send("GET", "/v1/admin/sets/ios-prod/flags?kind=kill_switch")
            #expect(misspelt.status == 400)
            #expect(
                try misspelt.json("error.message")
                    == .string("unknown kind 'kill_switch' (one of release, experiment, ops, kill-switch, permission)"))
            #expect(try misspelt.json("error.path") == .string("kind"))
        }
    }
}
