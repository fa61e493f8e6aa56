import FlagCore
import Foundation
import Testing

@testable import FlagServer

/// Imports and set creation read the `document` member straight from the request body (decoded once, not parsed,
/// re-encoded and parsed again); these are the answers a client relies on for every shape of body.
@Suite("Admin: import and create bodies, document read in one pass")
struct ImportBodyTests {
    static let document = #"{"schema":1,"flags":{"only":{"type":"bool","default":true}}}"#

    @Test(arguments: [
        (#"{"document":null}"#, "\"document\" must be a JSON object", "document"),
        (#"{"document":[1]}"#, "\"document\" must be a JSON object", "document"),
        (#"{"reason":"x"}"#, "\"document\" is required", "document"),
        ("[1]", "the body must be a JSON object", nil),
    ])
    func aBadImportBodyIsA400(body: String, message: String, path: String?) async throws {
        try await withHarness { (harness: AppHarness) async throws in
            let response = try harness.send("PUT", "/v1/admin/sets/ios-prod", body: body)
            #expect(response.status == 400)
            #expect(try response.json("error.message") == .string(message))
            #expect(try response.json("error.path") == path.map(JSONValue.string) ?? .null)
            #expect(harness.app.service.state("ios-prod")?.version == 1)
        }
    }

    @Test func malformedJSONInsideTheDocumentIsA400() async throws {
        try await withHarness { (harness: AppHarness) async throws in
            let response = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod", body: #"{"document":{"flags":{"a":{"type":"bool",}}}}"#)
            #expect(response.status == 400)
            #expect(try response.json("error.code") == .string("bad_request"))
        }
    }

    @Test func membersAroundTheDocumentAreStillRead() async throws {
        try await withHarness { (harness: AppHarness) async throws in
            let body = "{ \"document\" :\n \(Self.document) ,\n \"name\": \"late-name\", \"reason\": \"after it\" }"
            let created = try harness.send("POST", "/v1/admin/sets", body: body)
            #expect(created.status == 201)
            let state = try #require(harness.app.service.state("late-name"))
            #expect(state.compiled.readableFlags.map(\.key).sorted() == ["only"])
            let imported = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod", headers: [("If-Match", "\"1\"")],
                body: #"{"reason":"before it","document":\#(Self.document)}"#)
            #expect(imported.status == 200)
            #expect(harness.app.service.state("ios-prod")?.version == 2)
            let stale = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod", headers: [("If-Match", "\"1\"")],
                body: #"{"document":\#(Self.document)}"#)
            #expect(stale.status == 409)
        }
    }

    @Test func aDocumentWithAnUnreadableFlagIsRejectedWhole() async throws {
        try await withHarness { (harness: AppHarness) async throws in
            let response = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod", body: #"{"document":{"flags":{"a":{"type":"bool","default":"no"}}}}"#)
            #expect(response.status == 422)
            #expect(harness.app.service.state("ios-prod")?.version == 1)
        }
    }
}
