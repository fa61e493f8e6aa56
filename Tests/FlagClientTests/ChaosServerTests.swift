import FlagCore
import FlagHTTP
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// The server dies, fails or throttles: open sessions keep their values, the client backs off (honouring
/// `Retry-After`) without hammering, reconnects with `Last-Event-ID`, and converges once the server is back. Runs the
/// client's real URLSession transport with compressed sleeps (`Chaos.client`). Serialized: one test stops a server
/// and starts it again on the same port, which no other test may take meanwhile.
@Suite("Chaos: the server dies, fails, throttles", .serialized, .live)
struct ChaosServerTests {
    @Test func theServerKilledMidStreamComesBackAndTheClientConverges() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("server")
            let first = try LiveFlagServer(dataDirectory: data)
            let key = try await first.createSet("ios-prod", document: LiveFlagServer.iosProd)
            let sleeps = Locked<[Double]>([])
            let cache = directory.appendingPathComponent("cache")
            let client = try Chaos.client(server: first.url, sdkKey: key, cache: cache, sleeps: sleeps)
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            let open = client.session(unitID: "u-1")
            #expect(open.value(.maxItems) == 20)

            // Killed: streams end, the port refuses connections.
            first.stop()
            try await eventually("stale", timeout: .patience) {
                if case .stale = client.state { true } else { false }
            }
            try await eventually("three reconnection attempts", timeout: .patience) {
                sleeps.withLock { $0.count >= 3 }
            }
            // Backing off from 1 s, doubling: no retry storm against a server that is down.
            #expect(Array(sleeps.withLock { $0 }.prefix(3)) == [1, 2, 4])
            try await Chaos.expectServing(client, version: 1, newCheckout: true, maxItems: 20)
            let started = ContinuousClock.now
            #expect(await client.ready(timeout: .milliseconds(100)) == false)
            #expect(ContinuousClock.now - started < .seconds(Chaos.bound))

            // Back on the same port and store, where it changes a flag: the client finds it and converges.
            let second = try await Self.restart(data, port: first.port)
            defer { second.stop() }
            let changed = try await second.admin(
                "POST", "/v1/admin/sets/ios-prod/flags/max-items/default", #"{"value": 30}"#)
            #expect(try changed.json("version") == .int(2))
            try await eventually("converged to v2", timeout: .patience) { client.state == .live(version: 2) }
            #expect(open.value(.maxItems) == 20)  // frozen
            try await Chaos.expectServing(client, version: 2, newCheckout: true, maxItems: 30)
            // And the stream works again: a kill reaches the open session.
            let killed = try await second.admin("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", "{}")
            #expect(killed.status == 200)
            try await eventually("kill reached the open session", timeout: .patience) {
                open.detail(.newCheckout).reason == .disabled
            }
            try await eventually("v3 cached", timeout: .patience) { (try? Chaos.cachedVersion(cache)) == 3 }
        }
    }

    /// A stream cut in the middle of an event: the half event is never applied, and the reconnection says which
    /// version the client has, so that the server sends only what is newer.
    @Test func aCutStreamReconnectsWithLastEventID() async throws {
        let connections = Locked(0)
        let server = try ScriptedHTTPServer { request in
            let count = connections.withLock { count in
                count += 1
                return count
            }
            if count == 1 {
                // The put, then half a patch, then the connection closes.
                let half = Array("event: patch\nid: 4\ndata: {\"version\": 4, \"base\": 3, \"fl".utf8)
                return .init(
                    status: 200, headers: ["Content-Type": "text/event-stream"],
                    chunks: [Chaos.put(3, newCheckout: true), half], pause: 0.005)
            }
            let patch = Docs.patch(version: 4, base: 3, flags: [Docs.flag("new-checkout", false)])
            return streamAnswer(Docs.sse("patch", id: 4, patch))
        }
        defer { server.stop() }
        let sleeps = Locked<[Double]>([])
        let client = try Chaos.client(server: server.url, cache: nil, sleeps: sleeps)
        defer { client.shutdown() }
        try await eventually("v4", timeout: .patience) { client.state == .live(version: 4) }
        let requests = server.received
        #expect(requests.count == 2)
        #expect(requests.first?.headers["last-event-id"] == nil)
        #expect(requests.last?.headers["last-event-id"] == "3")
        #expect(sleeps.withLock { $0 } == [1])
        try await Chaos.expectServing(client, version: 4, newCheckout: false, maxItems: 10)
    }

    enum Mode: String, CaseIterable, Sendable { case stream, poll }

    /// An error answer: its status and `Retry-After` (`date+7` stands for an HTTP date 7 s after the `Date`).
    struct Answer: Sendable, CustomTestStringConvertible {
        var status: Int
        var retryAfter: String?
        var testDescription: String { "HTTP \(status)" + (retryAfter.map { ", Retry-After: \($0)" } ?? "") }
    }

    static let answers = [
        Answer(status: 500), Answer(status: 503), Answer(status: 429), Answer(status: 503, retryAfter: "7"),
        Answer(status: 429, retryAfter: "7"), Answer(status: 429, retryAfter: "date+7"),
        Answer(status: 503, retryAfter: "soon"),
    ]

    /// 500, 503 and 429, with and without `Retry-After` (seconds or an HTTP date): the client sleeps between
    /// attempts — never less than the server asked — asks once per sleep, and is live as soon as the server answers.
    @Test(arguments: answers, Mode.allCases)
    func errorStatusesBackOffAndHonourRetryAfter(_ answer: Answer, _ mode: Mode) async throws {
        let (status, retryAfter) = (answer.status, answer.retryAfter)
        let failures = 4
        let dateHeader = "Sun, 29 Nov 2026 13:01:00 GMT"
        let count = Locked(0)
        let server = try ScriptedHTTPServer { request in
            let index = count.withLock { count in
                count += 1
                return count
            }
            guard index > failures else {
                var headers = ["Content-Type": "application/json", "Date": dateHeader]
                switch retryAfter {
                case "date+7"?: headers["Retry-After"] = "Sun, 29 Nov 2026 13:01:07 GMT"
                case let value?: headers["Retry-After"] = value
                case nil: break
                }
                return .init(status: status, headers: headers, chunks: [Array(#"{"error": {}}"#.utf8)], pause: 0)
            }
            if mode == .stream { return streamAnswer(Chaos.put(1, newCheckout: true)) }
            return .init(
                status: 200, headers: ["Content-Type": "application/json", "ETag": "\"1\""],
                chunks: [Chaos.document(1, newCheckout: true)], pause: 0)
        }
        defer { server.stop() }
        let sleeps = Locked<[Double]>([])
        let logs = LogSink()
        let client = try Chaos.client(
            server: server.url, cache: nil, refresh: mode == .stream ? .stream : .poll, sleeps: sleeps, logs: logs
        ) { $0.pollInterval = 86_400 }  // no second poll while the test looks
        defer { client.shutdown() }
        try await eventually("live", timeout: .patience) { client.state == .live(version: 1) }
        // Exactly one request per attempt: the failures, then the answer; each failure followed by one sleep.
        #expect(server.received.count == failures + 1)
        let honoured = retryAfter == "soon" ? nil : retryAfter.map { _ in 7.0 }
        let expected = [1.0, 2, 4, 8].map { max($0, honoured ?? 0) }
        #expect(Array(sleeps.withLock { $0 }.prefix(failures)) == expected)
        #expect(logs.messages.filter { $0.message.contains("HTTP \(status)") }.count == failures)
        try await Chaos.expectServing(client, version: 1, newCheckout: true, maxItems: 10)
    }

    /// A server (or a proxy) that closes every stream at once, empty or right after its put: each connection counts
    /// as a failure until one has lasted 60 s, so the reconnections back off instead of looping.
    @Test(arguments: [false, true])
    func streamsClosedAtOnceAreNotHammered(withPut: Bool) async throws {
        let server = try ScriptedHTTPServer { _ in
            .init(
                status: 200, headers: ["Content-Type": "text/event-stream"],
                chunks: withPut ? [Chaos.put(1, newCheckout: true)] : [], pause: 0)
        }
        defer { server.stop() }
        let sleeps = Locked<[Double]>([])
        let client = try Chaos.client(server: server.url, cache: nil, sleeps: sleeps)
        defer { client.shutdown() }
        try await eventually("six reconnections", timeout: .patience) { sleeps.withLock { $0.count >= 6 } }
        client.shutdown()
        #expect(Array(sleeps.withLock { $0 }.prefix(6)) == [1, 2, 4, 8, 16, 30])
        let requests = server.received.count
        #expect(requests >= 6 && requests <= sleeps.withLock { $0.count } + 1)
        if withPut { try await Chaos.expectServing(client, version: 1, newCheckout: true, maxItems: 10) }
    }

    /// A server or a proxy that does not hold long polls: it answers at once, 304 or the same document again. The
    /// client must not turn that into a loop of requests; it waits a poll interval between such answers.
    @Test(arguments: [304, 200])
    func longPollsAnsweredAtOnceAreNotHammered(status: Int) async throws {
        let server = try ScriptedHTTPServer { request in
            if status == 304, request.headers["if-none-match"] == "\"1\"" {
                return .init(status: 304, headers: ["ETag": "\"1\""], chunks: [], pause: 0)
            }
            return .init(
                status: 200, headers: ["ETag": "\"1\""], chunks: [Chaos.document(1, newCheckout: true)], pause: 0)
        }
        defer { server.stop() }
        let sleeps = Locked<[Double]>([])
        let client = try Chaos.client(server: server.url, cache: nil, refresh: .longPoll, sleeps: sleeps) {
            $0.pollInterval = 30
        }
        defer { client.shutdown() }
        try await eventually("five unheld long polls", timeout: .patience) {
            sleeps.withLock { $0.count >= 5 }
        }
        client.shutdown()
        let requests = server.received
        #expect(requests.dropFirst().allSatisfy { $0.path == "/v1/sets/ios-prod?wait=30" })
        #expect(Array(sleeps.withLock { $0 }.prefix(5)) == [30, 30, 30, 30, 30])
        #expect(requests.count <= sleeps.withLock { $0.count } + 2)
        try await Chaos.expectServing(client, version: 1, newCheckout: true, maxItems: 10)
    }

    /// A server that accepts and then says nothing: the refresh is stuck on its request, but reads, new sessions,
    /// `ready` and `shutdown` all return at once.
    @Test func aServerThatHangsBlocksNoPublicCall() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Chaos.document(2, newCheckout: true, maxItems: 12), version: 2)
            let release = DispatchSemaphore(value: 0)
            let server = try ScriptedHTTPServer { _ in
                _ = release.wait(timeout: .now() + 5)
                return .init(status: 503, headers: [:], chunks: [])
            }
            defer {
                release.signal()
                server.stop()
            }
            let client = try await Chaos.bounded("init") {
                try Chaos.client(server: server.url, cache: directory, refresh: .poll)
            }
            try await eventually("the request is hanging", timeout: .patience) { !server.received.isEmpty }
            try await Chaos.expectServing(client, version: 2, newCheckout: true, maxItems: 12)
            _ = try await Chaos.bounded("a persisted session") {
                client.session(id: "s-1", unitID: "u-1").value(.maxItems)
            }
            _ = try await Chaos.bounded("setOverride") { client.setOverride(.maxItems, to: 3) }
            let started = ContinuousClock.now
            #expect(await client.ready(timeout: .milliseconds(200)) == false)
            #expect(ContinuousClock.now - started < .seconds(Chaos.bound))
            _ = try await Chaos.bounded("shutdown") { client.shutdown() }
        }
    }

    static func restart(_ data: URL, port: Int) async throws -> LiveFlagServer {
        // The port was ours a moment ago; should another socket hold it briefly (TIME_WAIT is not a problem with
        // SO_REUSEADDR), try again for a second.
        var lastError: (any Error)?
        for _ in 0..<20 {
            do {
                return try LiveFlagServer(dataDirectory: data, port: port)
            } catch {
                lastError = error
                try await Task.sleep(nanoseconds: 50_000_000)
            }
        }
        throw lastError ?? TimedOut("no server on port \(port) again")
    }
}

/// The pure parts of the chaos cases: reading `Retry-After`, and the decisions it and unheld long polls lead to.
@Suite(.live) struct ChaosDecisionTests {
    @Test(
        arguments: [
            ("120", nil, 120.0), ("0", nil, 0), (" 5 ", nil, 5),
            ("Sun, 29 Nov 2026 13:01:07 GMT", "Sun, 29 Nov 2026 13:01:00 GMT", 7),
            ("Sun, 29 Nov 2026 13:00:00 GMT", "Sun, 29 Nov 2026 13:01:00 GMT", 0),
        ] as [(String, String?, Double)])
    func retryAfterIsRead(_ value: String, _ date: String?, _ seconds: Double) {
        var headers = ["retry-after": value]
        headers["date"] = date
        #expect(TransportHead(status: 503, headers: headers).retryAfter(localNow: Docs.start) == seconds)
    }

    @Test(arguments: ["soon", "-5", "1.5", ""])
    func unreadableRetryAfterIsIgnored(_ value: String) {
        #expect(TransportHead(status: 503, headers: ["retry-after": value]).retryAfter(localNow: Docs.start) == nil)
    }

    @Test func aHugeRetryAfterIsCappedAtTenMinutes() {
        var machine = RefreshStateMachine(mode: .poll, pollInterval: 30)
        _ = machine.next()
        machine.record(.throttled(retryAfter: 86_400), now: 0, random: 0.5)
        #expect(machine.next() == .sleep(seconds: 600))
        #expect(machine.next() == .fetch(waitSeconds: 0))
        // Below the backoff, Retry-After changes nothing; the backoff keeps growing underneath it.
        machine.record(.throttled(retryAfter: 1), now: 0, random: 0.5)
        #expect(machine.next() == .sleep(seconds: 2))
    }
}
