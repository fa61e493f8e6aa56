import FlagCore
import FlagTestSupport
import Testing

@testable import FlagServer

/// An error about a thing names its kind in `error.subject` (docs/admin-api.md, "Errors"), so that a client tells
/// "no such set" from "no such flag" without reading the message.
@Suite("Admin API: the subject of an error")
struct ErrorSubjectTests {
    @Test(arguments: [
        ("GET", "/v1/admin/sets/nope/flags/new-checkout", "", 404, "set"),
        ("GET", "/v1/admin/sets/ios-prod/flags/nope", "", 404, "flag"),
        ("POST", "/v1/admin/sets/ios-prod/flags/nope/kill", "{}", 404, "flag"),
        ("GET", "/v1/admin/sets/ios-prod/cohorts/nope", "", 404, "cohort"),
        ("DELETE", "/v1/admin/sets/ios-prod/flags/new-checkout/rules/nope", "", 404, "rule"),
        ("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/rollout/pause", "{}", 404, "rollout"),
        ("DELETE", "/v1/admin/sets/ios-prod/flags/new-checkout/overrides?unit=nobody", "", 404, "override"),
        ("GET", "/v1/admin/sets/ios-prod/diff?from=1&to=99", "", 404, "version"),
        ("DELETE", "/v1/admin/tokens/nope", "", 404, "token"),
        ("DELETE", "/v1/admin/sets/ios-prod/keys/nope", "", 404, "key"),
        ("GET", "/v1/admin/nothing-here", "", 404, "route"),
        ("POST", "/v1/admin/sets", #"{"name":"ios-prod"}"#, 409, "set"),
    ])
    func aMissingOrTakenThingIsNamed(
        method: String, target: String, body: String, status: Int, subject: String
    ) async throws {
        try await withHarness { harness in
            let answer = try harness.send(method, target, body: body)
            #expect(answer.status == status)
            #expect(try answer.json("error.subject") == .string(subject))
        }
    }

    @Test func aStaleIfMatchNamesTheSet() async throws {
        try await withHarness { harness in
            let answer = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", headers: [("If-Match", "\"7\"")], body: "{}")
            #expect(answer.status == 409)
            #expect(try answer.json("error.code") == .string("conflict"))
            #expect(try answer.json("error.subject") == .string("set"))
        }
    }

    @Test func anErrorAboutTheRequestHasNoSubject() async throws {
        try await withHarness { harness in
            let answer = try harness.send("POST", "/v1/admin/sets", body: #"{"name":"#)
            #expect(answer.status == 400)
            #expect(try answer.json("error.subject") == nil)
        }
    }
}
