import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// Named tokens with roles, limited to sets, expiring; the dashboard's sessions; who acts in the audit log.
@Suite("People and roles: named tokens, sets, expiry, sessions")
struct PeopleAndRolesTests {
    /// Creates a token through the API as the harness's admin; returns its secret.
    static func create(_ harness: AppHarness, _ body: String) throws -> String {
        let created = try harness.send("POST", "/v1/admin/tokens", body: body)
        #expect(created.status == 201, "\(created)")
        return try #require(try created.json("token")?.text)
    }

    @Test func aTokenIsCreatedListedAndRevokedWithItsRoleAndSets() async throws {
        try await withHarness { harness in
            let created = try harness.send(
                "POST", "/v1/admin/tokens",
                body:
                    #"{"name":"ed","role":"editor","sets":["ios-prod","ios-prod"],"expires":"90d","reason":"on call"}"#)
            #expect(created.status == 201)
            #expect(try created.json("role") == .string("editor"))
            #expect(try created.json("sets") == .array([.string("ios-prod")]))
            let expires = harness.clock.now.addingTimeInterval(90 * 86_400)
            #expect(try created.json("expiresAt") == .string(ISO8601.format(expires)))
            let token = try #require(try created.json("token")?.text)
            #expect(token.hasPrefix("fsa_"))

            let whoami = try harness.send("GET", "/v1/admin/whoami", token: token)
            #expect(
                try whoami.json()
                    == JSONReader.parse(
                        Array(
                            #"""
                            {"name":"ed","role":"editor","sets":["ios-prod"],"session":false,
                             "expiresAt":"\#(ISO8601.format(expires))"}
                            """#.utf8)))
            let kill = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", token: token, body: #"{"reason":"x"}"#)
            #expect(kill.status == 200)
            #expect(try harness.app.service.audit("ios-prod", limit: 1).first?.actor == "ed")

            try harness.app.tokens.recordUses()
            let listed = try harness.send("GET", "/v1/admin/tokens")
            guard case .array(let tokens)? = try listed.json("tokens") else {
                Issue.record("no tokens in \(listed)")
                return
            }
            let ed = try #require(tokens.first { $0.member("name") == .string("ed") })
            #expect(ed.member("lastUsedAt") == .string(ISO8601.format(harness.clock.now)))
            #expect(tokens.allSatisfy { $0.member("token") == nil && $0.member("hash") == nil })

            #expect(try harness.send("DELETE", "/v1/admin/tokens/ed?reason=left").status == 200)
            #expect(try harness.send("GET", "/v1/admin/whoami", token: token).status == 401)
            #expect(try harness.send("DELETE", "/v1/admin/tokens/ed").status == 404)
            #expect(try harness.send("DELETE", "/v1/admin/tokens/ios-app").status == 404)
        }
    }

    @Test(arguments: [
        (#"{"name":"x","role":"owner"}"#, "role"), (#"{"name":"X Y","role":"viewer"}"#, "name"),
        (#"{"name":"x","role":"viewer","sets":[]}"#, "sets"), (#"{"name":"x","role":"viewer","sets":"a"}"#, "sets"),
        (#"{"name":"x","role":"viewer","expires":"soon"}"#, "expires"), (#"{"name":"root","role":"viewer"}"#, nil),
    ])
    func aBadTokenRequestSaysWhatIsWrong(body: String, path: String?) async throws {
        try await withHarness { harness in
            let response = try harness.send("POST", "/v1/admin/tokens", body: body)
            #expect(response.status == (path == nil ? 409 : 400), "\(response)")
            if let path { #expect(try response.json("error.path") == .string(path)) }
        }
    }

    @Test func aTokenLimitedToSetsSeesOnlyThem() async throws {
        try await withHarness { harness in
            let token = try Self.create(harness, #"{"name":"ivy","role":"viewer","sets":["ios-prod"]}"#)
            _ = try harness.send("POST", "/v1/admin/sets/android-prod/keys", body: #"{"name":"droid"}"#)
            let sets = try harness.send("GET", "/v1/admin/sets", token: token)
            guard case .array(let listed)? = try sets.json("sets") else {
                Issue.record("no sets")
                return
            }
            #expect(listed.map { $0.member("name") } == [.string("ios-prod")])
            let audit = try harness.send("GET", "/v1/admin/audit?limit=100", token: token)
            guard case .array(let records)? = try audit.json("records") else {
                Issue.record("no records")
                return
            }
            #expect(!records.isEmpty)
            #expect(!records.contains { $0.member("subject") == .string("droid") })
            #expect(try harness.send("GET", "/v1/admin/audit?set=android-prod", token: token).status == 403)
            #expect(try harness.send("GET", "/v1/admin/sets/android-prod/flags", token: token).status == 403)
            #expect(try harness.send("GET", "/v1/sets/android-prod", token: token).status == 403)
            #expect(try harness.send("GET", "/v1/sets/ios-prod", token: token).status == 200)
        }
    }

    @Test func anExpiredTokenIsRefusedWithWhen() async throws {
        try await withHarness { harness in
            let token = try Self.create(harness, #"{"name":"temp","role":"viewer","expires":"1h"}"#)
            #expect(try harness.send("GET", "/v1/admin/whoami", token: token).status == 200)
            harness.clock.advance(seconds: 3601)
            let refused = try harness.send("GET", "/v1/admin/whoami", token: token)
            #expect(refused.status == 401)
            #expect(try refused.json("error.message")?.text?.hasPrefix("the token expired at ") == true)
        }
    }

    @Test func aSessionActsAsItsPersonUntilItEndsExpiresOrThePersonIsRevoked() async throws {
        try await withHarness { harness in
            let person = try Self.create(harness, #"{"name":"alice","role":"editor","sets":["ios-prod"]}"#)
            let started = try harness.send("POST", "/v1/admin/sessions", token: person)
            #expect(started.status == 201)
            #expect(try started.json("actor") == .string("alice"))
            #expect(try started.json("role") == .string("editor"))
            #expect(try started.json("sets") == .array([.string("ios-prod")]))
            let expires = ISO8601.format(harness.clock.now.addingTimeInterval(12 * 3600))
            #expect(try started.json("expiresAt") == .string(expires))
            let session = try #require(try started.json("token")?.text)
            #expect(try harness.send("GET", "/v1/admin/whoami", token: session).json("session") == .bool(true))
            #expect(try harness.send("GET", "/v1/admin/whoami", token: session).json("name") == .string("alice"))
            // A session cannot make another: its end stays where the person's token put it.
            #expect(try harness.send("POST", "/v1/admin/sessions", token: session).status == 403)
            _ = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", token: session, body: #"{"reason":"3am"}"#)
            let record = try #require(try harness.app.service.audit("ios-prod", limit: 1).first)
            #expect((record.actor, record.action, record.reason) == ("alice", "flag.kill", "3am"))

            // Signing out ends the session at once.
            #expect(try harness.send("DELETE", "/v1/admin/sessions/current", token: session).status == 200)
            #expect(try harness.send("GET", "/v1/admin/whoami", token: session).status == 401)
            #expect(try harness.send("DELETE", "/v1/admin/sessions/current", token: person).status == 400)

            // Twelve hours later a session is over.
            let second = try #require(try harness.send("POST", "/v1/admin/sessions", token: person).json("token")?.text)
            harness.clock.advance(seconds: 12 * 3600 + 1)
            #expect(try harness.send("GET", "/v1/admin/whoami", token: second).status == 401)

            // Revoking the person revokes their sessions.
            let third = try #require(try harness.send("POST", "/v1/admin/sessions", token: person).json("token")?.text)
            #expect(try harness.send("DELETE", "/v1/admin/tokens/alice").status == 200)
            #expect(try harness.send("GET", "/v1/admin/whoami", token: third).status == 401)
        }
    }

    /// On a kept-alive connection, which remembers the token that passed, a revocation takes effect from the very
    /// next request.
    @Test(.live) func aRevokedTokenIsRefusedFromItsNextRequestOnTheSameConnection() async throws {
        try await withHarness { harness in
            let token = try Self.create(harness, #"{"name":"bob","role":"viewer"}"#)
            try harness.withLive { live in
                let client = try live.client()
                #expect(try client.send("GET", "/v1/admin/whoami", token: token).status == 200)
                #expect(try client.send("GET", "/v1/admin/whoami", token: token).status == 200)
                _ = try harness.send("DELETE", "/v1/admin/tokens/bob")
                #expect(try client.send("GET", "/v1/admin/whoami", token: token).status == 401)
            }
        }
    }

    @Test func aViewerMayDryRunAnImportButNotImport() async throws {
        try await withHarness { harness in
            let viewer = try Self.create(harness, #"{"name":"vic","role":"viewer"}"#)
            let document = "{\"document\":\(RouteSample.changedDocument)"
            let dry = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod", token: viewer, body: document + #","dryRun":true}"#)
            #expect(dry.status == 200)
            #expect(try dry.json("flags.search-timeout-ms") == .string("changed"))
            let real = try harness.send("PUT", "/v1/admin/sets/ios-prod", token: viewer, body: document + "}")
            #expect(real.status == 403)
            #expect(harness.app.service.state("ios-prod")?.version == 1)
        }
    }

    @Test func theAuditLogFiltersByActorSubjectAndTime() async throws {
        try await withHarness { harness in
            let editor = try Self.create(harness, #"{"name":"ed","role":"editor"}"#)
            let flag = "/v1/admin/sets/ios-prod/flags"
            _ = try harness.send("POST", "\(flag)/new-checkout/kill", token: editor)
            harness.clock.advance(seconds: 60)
            let middle = ISO8601.format(harness.clock.now)
            _ = try harness.send("POST", "\(flag)/search-timeout-ms/default", body: #"{"value":5}"#)
            _ = try harness.send("POST", "\(flag)/new-checkout/restore", token: editor)
            func actions(_ query: String) throws -> [JSONValue?] {
                guard
                    case .array(let records)? = try harness.send("GET", "/v1/admin/sets/ios-prod/audit?\(query)")
                        .json("records")
                else { return [] }
                return records.map { $0.member("action") }
            }
            #expect(try actions("actor=ed") == [.string("flag.restore"), .string("flag.kill")])
            #expect(try actions("subject=search-timeout-ms") == [.string("flag.default")])
            #expect(try actions("since=\(middle)&actor=ed") == [.string("flag.restore")])
            #expect(try actions("until=\(middle)&actor=ed") == [.string("flag.kill")])
        }
    }
}

extension JSONValue {
    /// A member of an object; `nil` for anything else.
    func member(_ name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[name]
    }
}
