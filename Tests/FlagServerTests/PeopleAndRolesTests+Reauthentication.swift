import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// Making or revoking tokens and SDK keys from a dashboard session asks for the person's own token again
/// (`Flagstaff-Confirm-Token`), so that a stolen 12-hour session cannot become lasting access.
extension PeopleAndRolesTests {
    /// The routes that ask a session for its person's own token (docs/admin-api.md, "People and roles").
    static let credentialRoutes: [Route] = [.createToken, .revokeToken, .createKey, .revokeKey]

    /// A dashboard session of `token`.
    static func session(_ harness: AppHarness, of token: String) throws -> String {
        let started = try harness.send("POST", "/v1/admin/sessions", token: token)
        #expect(started.status == 201, "\(started)")
        return try #require(try started.json("token")?.text)
    }

    /// Sends `route`'s sample request (SecurityRouteSamples.swift) as `token`, with one `Flagstaff-Confirm-Token`
    /// field for each of `confirm`.
    static func sendSample(
        _ harness: AppHarness, _ route: Route, token: String, confirm: [String] = []
    ) throws -> TestResponse {
        let sample = try RouteSample.of(route)
        return try harness.send(
            String(route.method), try sample.target(in: harness), token: token,
            headers: confirm.map { ("Flagstaff-Confirm-Token", $0) }, body: sample.body)
    }

    /// A 403 with `code`, that neither signs the dashboard out (no 401, no challenge) nor echoes `presented`.
    static func expectRefused(_ response: TestResponse, _ code: String, presented: [String], _ label: String) throws {
        #expect(response.status == 403, "\(label): \(response)")
        #expect(try response.json("error.code") == .string(code), "\(label)")
        #expect(response.header("WWW-Authenticate") == nil, "\(label)")
        for token in presented where !token.trimmingCharacters(in: .whitespaces).isEmpty {
            #expect(!response.text.contains(token), "\(label): the answer echoes the presented token")
        }
    }

    @Test(arguments: credentialRoutes)
    func aSessionMustConfirmWithItsPersonsOwnToken(_ route: Route) async throws {
        let sample = try RouteSample.of(route)
        try await withHarness { harness in
            try sample.prepare(harness)
            let session = try Self.session(harness, of: harness.admin)
            let otherSession = try Self.session(harness, of: harness.admin)
            let otherPerson = try Self.create(harness, #"{"name":"bob","role":"admin"}"#)
            let revoked = try Self.create(harness, #"{"name":"gone","role":"admin"}"#)
            #expect(try harness.send("DELETE", "/v1/admin/tokens/gone").status == 200)
            let recordsBefore = try harness.app.service.audit(nil, limit: 1000).count
            // Which tokens exist and which are revoked (a presented token's `lastUsedAt` moves: it was used).
            func tokens() throws -> [String] {
                try harness.app.tokens.tokens(set: nil).map { "\($0.name) \($0.revokedAt == nil)" }
            }
            let tokensBefore = try tokens()

            for confirm in [[], ["   "]] {
                let asked = try Self.sendSample(harness, route, token: session, confirm: confirm)
                try Self.expectRefused(asked, "reauthentication_required", presented: [], "\(route) \(confirm)")
                let message = try #require(try asked.json("error.message")?.text)
                #expect(message.contains("Flagstaff-Confirm-Token"), "the refusal says what to send: \(message)")
            }
            let admin = harness.admin
            // Right length, right prefix, wrong secret.
            let almost = String(admin.dropLast()) + (admin.hasSuffix("0") ? "1" : "0")
            let wrong: [(String, [String])] = [
                ("another person's token", [otherPerson]), ("an SDK key", [harness.sdk]),
                ("a revoked token", [revoked]), ("the session's own token", [session]),
                ("another session of the person", [otherSession]), ("the environment token", ["env-secret-token"]),
                ("the person's token with its last digit changed", [almost]),
                ("a token that is not one", ["not-a-token"]), ("the person's token twice", [admin, admin]),
            ]
            for (label, confirm) in wrong {
                let refused = try Self.sendSample(harness, route, token: session, confirm: confirm)
                try Self.expectRefused(refused, "reauthentication_failed", presented: confirm, "\(route): \(label)")
            }
            #expect(try harness.app.service.audit(nil, limit: 1000).count == recordsBefore, "a refusal wrote")
            #expect(try tokens() == tokensBefore, "a refusal changed the tokens")
            // A refusal leaves the session as it was: the person may try again.
            #expect(try harness.send("GET", "/v1/admin/whoami", token: session).status == 200)

            let confirmed = try Self.sendSample(harness, route, token: session, confirm: [" \(admin) "])
            #expect(confirmed.status == sample.success, "\(route): \(confirmed)")
            let record = try #require(try harness.app.service.audit(nil, limit: 1).first)
            #expect((record.actor, record.action) == ("root", sample.action), "the person acts, as without a session")
        }
    }

    @Test(arguments: credentialRoutes)
    func aNamedTokenIsNotAskedForItselfAgain(_ route: Route) async throws {
        let sample = try RouteSample.of(route)
        try await withHarness { harness in
            try sample.prepare(harness)
            let response = try Self.sendSample(harness, route, token: harness.admin)
            #expect(response.status == sample.success, "\(route): \(response)")
        }
    }

    @Test(arguments: credentialRoutes)
    func aSessionOfTheEnvironmentTokenConfirmsWithIt(_ route: Route) async throws {
        let sample = try RouteSample.of(route)
        try await withHarness { harness in
            try sample.prepare(harness)
            let session = try Self.session(harness, of: "env-secret-token")
            let refused = try Self.sendSample(harness, route, token: session, confirm: [harness.admin])
            try Self.expectRefused(refused, "reauthentication_failed", presented: [harness.admin], "\(route)")
            let confirmed = try Self.sendSample(harness, route, token: session, confirm: ["env-secret-token"])
            #expect(confirmed.status == sample.success, "\(route): \(confirmed)")
            #expect(try harness.app.service.audit(nil, limit: 1).first?.actor == "env")
        }
    }
}
