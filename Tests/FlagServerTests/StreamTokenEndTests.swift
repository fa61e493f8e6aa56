import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// SPEC §4: a token that stops being valid is refused from that moment on, and the streams and long-polls it opened
/// end. Over real sockets: the revocation comes through the admin API on another connection.
@Suite("streams and long-polls end with their token", .live)
struct StreamTokenEndTests {
    /// A stream opened with `token`, its `put` read.
    private func openStream(port: Int, token: String) throws -> TestClient {
        let stream = try TestClient(port: port)
        stream.send("GET /v1/sets/ios-prod/stream HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n\r\n")
        let head = try stream.readHead()
        try #require(head.status == 200, "the stream's head: \(head.status)")
        _ = stream.readUntil("\n\n")
        return stream
    }

    /// What the stream sends until the server closes it, and how long that took.
    private func untilClosed(_ stream: TestClient) -> (rest: String, seconds: Double, closed: Bool) {
        let start = ContinuousClock.now
        let rest = stream.readUntilClose()
        let elapsed = ContinuousClock.now - start
        return (String(decoding: rest, as: UTF8.self), elapsed.timeInterval, stream.sawClose)
    }

    /// `POST` with the admin token, over a connection of its own; the token in the answer.
    private func issue(_ harness: AppHarness, port: Int, _ path: String, _ body: String, token: String? = nil)
        throws -> String
    {
        let answer = try LiveClient(port: port).send("POST", path, token: token ?? harness.admin, body: body)
        try #require(answer.status == 201, "\(path): \(answer.text)")
        return try #require(try answer.json("token")?.text)
    }

    /// A viewer token that expires `seconds` after the harness's now, issued over a connection of its own.
    private func viewer(_ harness: AppHarness, port: Int, expiringIn seconds: Double) throws -> String {
        let expiresAt = ISO8601.format(harness.clock.now.addingTimeInterval(seconds))
        return try issue(
            harness, port: port, "/v1/admin/tokens", #"{"name":"brief","role":"viewer","expiresAt":"\#(expiresAt)"}"#)
    }

    @Test func revokingAnSDKKeyEndsItsStreamAtOnceAndNothingWrittenAfterReachesIt() throws {
        try withLiveHarness(signed: false) { harness, live in
            let stream = try openStream(port: live.port, token: harness.sdk)
            #expect(waitUntil { harness.app.watch.count == 1 })
            let revoked = try LiveClient(port: live.port).send(
                "DELETE", "/v1/admin/sets/ios-prod/keys/ios-app", token: harness.admin)
            #expect(revoked.status == 200)
            // Written after the revocation returned: it must not reach the stream.
            #expect(try harness.killOverSocket("new-checkout", port: live.port, reason: "after").status == 200)
            let (rest, seconds, closed) = untilClosed(stream)
            #expect(closed)
            #expect(seconds < 1)
            #expect(!rest.contains("event:"), "sent after the revocation: \(rest)")
            #expect(harness.app.watch.count == 0)

            let again = try LiveClient(port: live.port).send("GET", "/v1/sets/ios-prod/stream", token: harness.sdk)
            #expect(again.status == 401)
        }
    }

    @Test func signingOutEndsTheSessionsStream() throws {
        try withLiveHarness(signed: false) { harness, live in
            let session = try issue(harness, port: live.port, "/v1/admin/sessions", "{}")
            let stream = try openStream(port: live.port, token: session)
            let out = try LiveClient(port: live.port).send("DELETE", "/v1/admin/sessions/current", token: session)
            #expect(out.status == 200)
            let (rest, seconds, closed) = untilClosed(stream)
            #expect(closed && seconds < 1, "closed \(closed) after \(seconds) s")
            #expect(!rest.contains("event:"))
        }
    }

    @Test func revokingThePersonsTokenEndsTheStreamsOfItsSessions() throws {
        try withLiveHarness(signed: false) { harness, live in
            let alice = try issue(
                harness, port: live.port, "/v1/admin/tokens", #"{"name":"alice","role":"viewer"}"#)
            let session = try issue(harness, port: live.port, "/v1/admin/sessions", "{}", token: alice)
            let own = try openStream(port: live.port, token: alice)
            let viaSession = try openStream(port: live.port, token: session)
            let bystander = try openStream(port: live.port, token: harness.sdk)
            let revoked = try LiveClient(port: live.port).send(
                "DELETE", "/v1/admin/tokens/alice", token: harness.admin)
            #expect(revoked.status == 200)
            for stream in [own, viaSession] {
                let (_, seconds, closed) = untilClosed(stream)
                #expect(closed && seconds < 1, "closed \(closed) after \(seconds) s")
            }
            // Another token's stream goes on, and gets the next version.
            #expect(try harness.killOverSocket("new-checkout", port: live.port, reason: "still").status == 200)
            #expect(bystander.readUntil("\n\n").contains("event: patch"))
            #expect(harness.app.watch.count == 1)
        }
    }

    @Test func anExpiringTokensStreamEndsAtItsExpiry() throws {
        try withLiveHarness(signed: false) { harness, live in
            let token = try viewer(harness, port: live.port, expiringIn: 1)
            let start = ContinuousClock.now
            let stream = try openStream(port: live.port, token: token)
            let (_, _, closed) = untilClosed(stream)
            let elapsed = (ContinuousClock.now - start).timeInterval
            #expect(closed)
            // The deadline fires on a 100 ms tick: at the expiry, not at the next heartbeat.
            #expect(elapsed > 0.8 && elapsed < 1.6, "closed after \(elapsed) s")
        }
    }

    /// The expiry's deadline has not fired yet (the server's clock jumped past it): a version published then is
    /// still not sent.
    @Test func nothingPublishedAfterTheExpiryIsSent() throws {
        try withLiveHarness(signed: false) { harness, live in
            let token = try viewer(harness, port: live.port, expiringIn: 600)
            let stream = try openStream(port: live.port, token: token)
            harness.clock.advance(seconds: 601)
            #expect(try harness.killOverSocket("new-checkout", port: live.port, reason: "late").status == 200)
            let (rest, seconds, closed) = untilClosed(stream)
            #expect(closed && seconds < 1, "closed \(closed) after \(seconds) s")
            #expect(!rest.contains("event:"), "sent after the expiry: \(rest)")
        }
    }

    @Test func aWaitingLongPollIsRefusedWhenItsKeyIsRevoked() throws {
        try withLiveHarness(signed: false) { harness, live in
            let poll = try TestClient(port: live.port)
            poll.send(
                "GET /v1/sets/ios-prod?wait=30 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.sdk)\r\n"
                    + "If-None-Match: \"1\"\r\n\r\n")
            #expect(waitUntil { harness.app.watch.count == 1 })
            let start = ContinuousClock.now
            let revoked = try LiveClient(port: live.port).send(
                "DELETE", "/v1/admin/sets/ios-prod/keys/ios-app", token: harness.admin)
            #expect(revoked.status == 200)
            let answer = try poll.readResponse()
            #expect((ContinuousClock.now - start).timeInterval < 1)
            #expect(answer.status == 401)
            #expect(answer.header("Connection") == "close")
            #expect(poll.isClosedByServer())
            #expect(harness.app.metrics.waitingPolls.load(ordering: .relaxed) == 0)
        }
    }

    /// Streams and polls that end for any other reason leave nothing behind in the watch.
    @Test func theWatchForgetsWhatEndedOtherwise() throws {
        try withLiveHarness(signed: false) { harness, live in
            do {
                let stream = try openStream(port: live.port, token: harness.sdk)
                #expect(waitUntil { harness.app.watch.count == 1 })
                _ = stream
            }
            #expect(waitUntil { harness.app.watch.count == 0 })
            let poll = try TestClient(port: live.port)
            poll.send(
                "GET /v1/sets/ios-prod?wait=30 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.sdk)\r\n"
                    + "If-None-Match: \"1\"\r\n\r\n")
            #expect(waitUntil { harness.app.watch.count == 1 })
            #expect(try harness.killOverSocket("new-checkout", port: live.port, reason: "wake").status == 200)
            #expect(try poll.readResponse().status == 200)
            #expect(waitUntil { harness.app.watch.count == 0 })
        }
    }
}
