import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// Dashboard sessions are bounded, so that signing in over and over cannot grow the server's
/// memory and store without end.
@Suite("dashboard sessions are bounded")
struct SessionBoundsTests {
    private func startSession(_ harness: AppHarness, as token: String) throws -> String {
        let started = try harness.send("POST", "/v1/admin/sessions", token: token, body: "{}")
        try #require(started.status == 201, "\(started.text)")
        return try #require(try started.json("token")?.text)
    }

    @Test func aTwentyFirstSessionSignsTheOldestOut() async throws {
        try await withHarness { harness in
            let alice = try PeopleAndRolesTests.create(harness, #"{"name":"alice","role":"editor"}"#)
            var sessions: [String] = []
            for _ in 0..<TokenAuthority.sessionsPerToken {
                sessions.append(try startSession(harness, as: alice))
                harness.clock.advance(seconds: 1)
            }
            for session in sessions {
                #expect(try harness.send("GET", "/v1/admin/whoami", token: session).status == 200)
            }
            let newest = try startSession(harness, as: alice)
            #expect(try harness.send("GET", "/v1/admin/whoami", token: sessions[0]).status == 401)
            for session in sessions.dropFirst() + [newest] {
                #expect(try harness.send("GET", "/v1/admin/whoami", token: session).status == 200)
            }
            let evictions = try harness.send("GET", "/v1/admin/audit?actor=alice")
            #expect(evictions.text.contains("session.evict"))
            #expect(evictions.text.contains("\"actor\":\"alice\""))
            // Another person's sessions are their own count.
            let bob = try PeopleAndRolesTests.create(harness, #"{"name":"bob","role":"viewer"}"#)
            _ = try startSession(harness, as: bob)
            #expect(try harness.send("GET", "/v1/admin/whoami", token: sessions[1]).status == 200)
        }
    }

    @Test func sessionsThatEndedAWeekAgoLeaveMemoryAndTheStoreButNotTheAuditLog() async throws {
        try await withHarness { harness in
            let alice = try PeopleAndRolesTests.create(harness, #"{"name":"alice","role":"editor"}"#)
            let expiring = try startSession(harness, as: alice)
            let signedOut = try startSession(harness, as: alice)
            #expect(try harness.send("DELETE", "/v1/admin/sessions/current", token: signedOut).status == 200)
            harness.clock.advance(seconds: TokenAuthority.sessionLifetime + 1)
            let expired = try harness.send("GET", "/v1/admin/whoami", token: expiring)
            #expect(expired.status == 401)
            #expect(expired.text.contains("expired"))
            // Within the week they are kept, and listed.
            #expect(try harness.app.tokens.pruneEndedSessions() == 0)
            #expect(try harness.app.tokens.tokens(set: nil).filter { $0.sessionOf == "alice" }.count == 2)

            harness.clock.advance(seconds: TokenAuthority.endedSessionRetention)
            #expect(try harness.app.tokens.pruneEndedSessions() == 2)
            #expect(try harness.app.tokens.tokens(set: nil).filter { $0.sessionOf == "alice" }.isEmpty)
            let forgotten = try harness.send("GET", "/v1/admin/whoami", token: expiring)
            #expect(forgotten.status == 401)
            #expect(forgotten.text.contains("unknown or revoked"))
            let audit = try harness.send("GET", "/v1/admin/audit?actor=alice")
            #expect(audit.text.contains("session.start") && audit.text.contains("session.end"))
            // The person's own token is untouched.
            #expect(try harness.send("GET", "/v1/admin/whoami", token: alice).status == 200)
        }
    }
}
