import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagHTTP
@testable import FlagServer

/// What the OFREP contract (open-feature/protocol `service/openapi.yaml`) asks beyond plain evaluation; each test
/// pins a fix found by running the OpenFeature Python provider against the server (Tests/ofrep).
@Suite("OFREP: bulk caching and optional context", .live)
struct OFREPRouteTests {
    private static let bulk = "/ofrep/v1/evaluate/flags"

    @Test func bulkAnswersCarryAnETagThatAnswers304() async throws {
        try await withHarness { harness in
            let body = #"{"context":{"targetingKey":"u-1"}}"#
            let first = try harness.send("POST", Self.bulk, token: harness.sdk, body: body)
            #expect(first.status == 200)
            let etag = try #require(first.header("ETag"))
            #expect(etag.hasPrefix("\"ofrep-") && etag.hasSuffix("\"") && etag.count == 24)
            for tag in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
                let again = try harness.send(
                    "POST", Self.bulk, token: harness.sdk, headers: [("If-None-Match", tag)], body: body)
                #expect(again.status == 304, "If-None-Match: \(tag)")
                #expect(again.header("ETag") == etag)
                #expect(again.body.isEmpty)
            }
        }
    }

    @Test func theBulkETagFollowsTheAnswerNotTheVersion() async throws {
        try await withHarness { harness in
            let inBeta = try harness.send(
                "POST", Self.bulk, token: harness.sdk, body: #"{"context":{"targetingKey":"u-1"}}"#)
            let etag = try #require(inBeta.header("ETag"))
            // Same version, another context with another answer: the old tag must not make it a 304.
            let outside = try harness.send(
                "POST", Self.bulk, token: harness.sdk, headers: [("If-None-Match", etag)],
                body: #"{"context":{"targetingKey":"u-9"}}"#)
            #expect(outside.status == 200)
            #expect(outside.header("ETag") != etag)
            // Another context with the same answer shares the tag.
            let alsoInBeta = try harness.send(
                "POST", Self.bulk, token: harness.sdk, headers: [("If-None-Match", etag)],
                body: #"{"context":{"targetingKey":"u-2"}}"#)
            #expect(alsoInBeta.status == 304)
        }
    }

    /// OFREP clients choose the attributes the server tests. A `matches` pattern that backtracks polynomially on a
    /// long value answers at once, as no match. (As a plain search, before the step limit, `a*a*a*b` took 0.9 s on
    /// 200 `a`s and 18 s on 400.)
    @Test func aLongAttributeCannotMakeAPatternRunLong() async throws {
        try await withHarness { harness in
            let document = #"""
                {"document":{"schema":1,"flags":{"promo":{"type":"bool","default":false,"rules":[{"name":"r",
                  "conditions":[{"attribute":"email","op":"matches","values":["a*a*a*b"]}],"value":true}]}}}}
                """#
            #expect(try harness.send("PUT", "/v1/admin/sets/ios-prod", body: document).status == 200)
            func evaluate(_ email: String) throws -> TestResponse {
                try harness.send(
                    "POST", "\(Self.bulk)/promo", token: harness.sdk,
                    body: #"{"context":{"targetingKey":"u-1","email":"\#(email)"}}"#)
            }
            let matching = try evaluate("aab")
            #expect(try matching.json("reason") == .string("TARGETING_MATCH"))
            let hostile = try evaluate(String(repeating: "a", count: 2_000))
            #expect(hostile.status == 200)
            #expect(try hostile.json("value") == .bool(false))
            #expect(try hostile.json("reason") == .string("DEFAULT"))
        }
    }

    @Test(arguments: ["", "{}", #"{"context":null}"#])
    func aMissingContextIsAMissingTargetingKey(body: String) async throws {
        try await withHarness { harness in
            for target in [Self.bulk, "\(Self.bulk)/new-checkout"] {
                let response = try harness.send("POST", target, token: harness.sdk, body: body)
                #expect(response.status == 400)
                #expect(try response.json("errorCode") == .string("TARGETING_KEY_MISSING"))
            }
        }
    }

    @Test(arguments: [#"{"context":"u-1"}"#, #"{"context":[1]}"#])
    func aContextThatIsNotAnObjectIsInvalid(body: String) async throws {
        try await withHarness { harness in
            let response = try harness.send("POST", "\(Self.bulk)/new-checkout", token: harness.sdk, body: body)
            #expect(response.status == 400)
            #expect(try response.json("errorCode") == .string("INVALID_CONTEXT"))
        }
    }
}

/// Every 400 and 404 on `/ofrep/v1/` in OFREP's shapes (open-feature/protocol `service/openapi.yaml`): a single
/// evaluation `{"key","errorCode","errorDetails"}`, the bulk one `{"errorCode","errorDetails"}`. Before, a body that
/// was not JSON and an admin token without `?set=` answered `{"error":{…}}`, and the OpenFeature Python provider
/// raised `KeyError: 'errorCode'` instead of reporting an error.
@Suite("OFREP: errors in OFREP's shapes", .live)
struct OFREPErrorShapeTests {
    private static let bulk = "/ofrep/v1/evaluate/flags"
    private static let single = "/ofrep/v1/evaluate/flags/new-checkout"
    private static let context = #"{"context":{"targetingKey":"u-1"}}"#

    /// The body's members, checked to be exactly OFREP's: `key` only for a single evaluation.
    private func ofrepError(_ response: TestResponse, single: Bool) throws -> (code: String?, details: String?) {
        let object = try jsonMembers(response.body)
        #expect(Set(object.keys) == (single ? ["key", "errorCode", "errorDetails"] : ["errorCode", "errorDetails"]))
        if single { #expect(object["key"] == .string("new-checkout")) }
        return (object["errorCode"]?.text, object["errorDetails"]?.text)
    }

    @Test(arguments: ["{not json", "[1]", #""context""#])
    func aBodyThatIsNotAJSONObjectIsAParseError(body: String) async throws {
        try await withHarness { harness in
            for (target, single) in [(Self.single, true), (Self.bulk, false)] {
                let response = try harness.send("POST", target, token: harness.sdk, body: body)
                #expect(response.status == 400)
                let error = try ofrepError(response, single: single)
                #expect(error.code == ErrorCode.parseError.rawValue)
                #expect(error.details?.hasPrefix("the body ") == true, "\(error.details ?? "")")
            }
        }
    }

    @Test func anAdminTokenWithoutASetIsAGeneralError() async throws {
        try await withHarness { harness in
            for (target, single) in [(Self.single, true), (Self.bulk, false)] {
                let response = try harness.send("POST", target, body: Self.context)
                #expect(response.status == 400)
                let error = try ofrepError(response, single: single)
                #expect(error.code == ErrorCode.general.rawValue)
                #expect(error.details == "an admin token must name the flag set with ?set=NAME")
            }
            let named = try harness.send("POST", "\(Self.single)?set=ios-prod", body: Self.context)
            #expect(named.status == 200)
        }
    }

    @Test func anUnknownSetIsA404() async throws {
        try await withHarness { harness in
            let single = try harness.send("POST", "\(Self.single)?set=nope", body: Self.context)
            #expect(single.status == 404)
            let error = try ofrepError(single, single: true)
            #expect(error.code == ErrorCode.flagNotFound.rawValue)
            #expect(error.details?.contains("nope") == true)
            let bulk = try harness.send("POST", "\(Self.bulk)?set=nope", body: Self.context)
            #expect(bulk.status == 404)
            #expect(try ofrepError(bulk, single: false).code == ErrorCode.general.rawValue)
        }
    }

    @Test func aFlagThatIsNotThereIsFlagNotFound() async throws {
        try await withHarness { harness in
            let response = try harness.send("POST", "\(Self.bulk)/no-such-flag", token: harness.sdk, body: Self.context)
            #expect(response.status == 404)
            let object = try jsonMembers(response.body)
            #expect(Set(object.keys) == ["key", "errorCode", "errorDetails"])
            #expect(object["key"] == .string("no-such-flag"))
            #expect(object["errorCode"] == .string("FLAG_NOT_FOUND"))
        }
    }

    @Test(arguments: ["/ofrep/v1/evaluate/flags/a/b", "/ofrep/v1/configuration", "/ofrep/v1"])
    func anUnknownOFREPPathIsA404InTheBulkShape(path: String) async throws {
        try await withHarness { harness in
            let response = try harness.send("POST", path, token: harness.sdk, body: Self.context)
            #expect(response.status == 404)
            #expect(try ofrepError(response, single: false).code == ErrorCode.general.rawValue)
        }
    }

    /// OFREP defines no body for 401 and 403: those keep the API's error (and its `WWW-Authenticate`).
    @Test func authErrorsKeepTheAPIsShape() async throws {
        try await withHarness { harness in
            let response = try harness.send("POST", Self.single, token: "fss_nope", body: Self.context)
            #expect(response.status == 401)
            #expect(try response.json("error.code") == .string("unauthorized"))
            #expect(response.header("WWW-Authenticate") != nil)
        }
    }

    /// What the HTTP engine refuses before a route is known, over a real socket: OFREP's shape too.
    @Test func aRequestTheEngineRefusesOnAnOFREPPathGetsOFREPsShape() async throws {
        let smallBodies: (inout HTTPServerConfiguration) -> Void = { $0.limits.maxBodyBytes = 64 }
        try await withLiveApp(smallBodies) { harness, _, port in
            let body = #"{"context":{"targetingKey":"\#(String(repeating: "u", count: 100))"}}"#
            let head = "POST \(Self.single) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.sdk)\r\n"
            let tooLarge = Array((head + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)").utf8)
            let large = try await offThePool { try rawExchange(port: port, tooLarge) }
            let refused = try #require(large.responses.first)
            #expect(refused.status == 413)
            let object = try jsonMembers(refused.body)
            #expect(Set(object.keys) == ["key", "errorCode", "errorDetails"])
            #expect(object["errorCode"] == .string("GENERAL"))
            #expect(object["errorDetails"]?.text?.contains("limits.maxBodyBytes") == true)

            let malformed = Array("POST \(Self.bulk) HTTP/1.1\r\nHost: t\r\nContent-Length: 1x\r\n\r\n".utf8)
            let bad = try #require(try await offThePool { try rawExchange(port: port, malformed) }.responses.first)
            #expect(bad.status == 400)
            let bulk = try jsonMembers(bad.body)
            #expect(Set(bulk.keys) == ["errorCode", "errorDetails"])
            #expect(bulk["errorCode"] == .string("GENERAL"))
        }
    }
}
