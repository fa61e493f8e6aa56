import FlagCore
import FlagHTTP
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// Bad data from the server, on the stream and on polls: it is never put in use, the last good set stays in use
/// and in the cache, the refusal is logged, and the client asks again with the version it has.
@Suite("Chaos: broken and invalid data from the server", .live)
struct ChaosDataTests {
    /// A bad answer where a document is expected, named for the test's output.
    struct Bad: Sendable, CustomTestStringConvertible {
        var name: String
        var body: String
        var testDescription: String { name }
    }

    static let badDocuments: [Bad] = [
        Bad(name: "broken JSON", body: #"{"schema": 1, "set": "ios-prod", "version": 2, "flags": {"#),
        Bad(name: "not JSON at all (a proxy's login page)", body: "<html><body>Please log in</body></html>"),
        Bad(name: "empty", body: ""),
        Bad(name: "JSON but not an object", body: "[1, 2, 3]"),
        Bad(name: "another set", body: Docs.document(2, name: "android-prod")),
        Bad(name: "no version", body: #"{"schema": 1, "set": "ios-prod", "flags": {}}"#),
        Bad(
            name: "a rule naming a missing cohort",
            body: #"{"schema": 1, "set": "ios-prod", "version": 2, "flags": {"new-checkout": {"type": "bool", "#
                + #""default": false, "rules": [{"name": "r", "cohort": "nope", "value": true}]}}}"#),
        Bad(
            name: "a value of the wrong type",
            body: #"{"schema": 1, "set": "ios-prod", "version": 2, "flags": {"max-items": {"type": "int", "#
                + #""default": "many"}}}"#),
        Bad(
            name: "a percent outside 0-100",
            body: #"{"schema": 1, "set": "ios-prod", "version": 2, "flags": {"new-checkout": {"type": "bool", "#
                + #""default": false, "rollout": {"percent": 150, "value": true}}}}"#),
        Bad(
            name: "split weights not summing to 100",
            body: #"{"schema": 1, "set": "ios-prod", "version": 2, "flags": {"max-items": {"type": "int", "#
                + #""default": 1, "rules": [{"name": "s", "conditions": [], "split": [{"value": 1, "weight": 60}, "#
                + #"{"value": 2, "weight": 30}]}]}}}"#),
    ]

    static let badPatches: [Bad] = [
        Bad(name: "broken JSON", body: #"{"version": 2, "base": 1, "flags": {"new-ch"#),
        Bad(name: "no base", body: #"{"version": 2, "flags": {}}"#),
        Bad(
            name: "a flag of the wrong type",
            body: #"{"version": 2, "base": 1, "flags": {"max-items": {"type": "int", "default": "many"}}, "#
                + #""cohorts": {}, "removed": {"flags": [], "cohorts": []}}"#),
        Bad(
            name: "a rule naming a removed cohort",
            body: #"{"version": 2, "base": 1, "flags": {"new-checkout": {"type": "bool", "default": false, "#
                + #""rules": [{"name": "r", "cohort": "gone", "value": true}]}}, "cohorts": {}, "#
                + #""removed": {"flags": [], "cohorts": []}}"#),
        // Both used to be applied as far as they could be read.
        Bad(name: "flags that are not an object", body: #"{"version": 2, "base": 1, "flags": ["max-items"]}"#),
        Bad(name: "a removed key that is not a string", body: #"{"version": 2, "base": 1, "removed": {"flags": [7]}}"#),
        // Found by this suite: a patch whose version is not above its base used to be applied, taking the set
        // back in time (here to version 1 with other values than v1's).
        Bad(
            name: "a version not above its base",
            body: #"{"version": 1, "base": 1, "flags": {"max-items": {"type": "int", "default": 99}}, "#
                + #""cohorts": {}, "removed": {"flags": [], "cohorts": []}}"#),
    ]

    /// v1 with `new-checkout` on and `max-items` 10, as every test starts.
    static let good = Chaos.document(1, newCheckout: true)

    @Test(arguments: badDocuments)
    func aBadPutOnTheStreamIsRefused(_ bad: Bad) async throws {
        try await refusedOnTheStream(Docs.sse("put", id: 2, bad.body), logged: "ignored a document")
    }

    @Test(arguments: badPatches)
    func aBadPatchOnTheStreamIsRefused(_ bad: Bad) async throws {
        try await refusedOnTheStream(Docs.sse("patch", id: 2, bad.body), logged: "ignored a patch")
    }

    /// The stream: v1, then the bad event; each reconnection only confirms v1.
    func refusedOnTheStream(_ event: [UInt8], logged: String) async throws {
        try await withTemporaryDirectory { directory in
            let connections = Locked(0)
            let server = try ScriptedHTTPServer { _ in
                let first = connections.withLock { count in
                    count += 1
                    return count == 1
                }
                return first
                    ? streamAnswer(Docs.sse("put", id: 1, String(decoding: Self.good, as: UTF8.self)), event)
                    : streamAnswer(Array(": current\n\n".utf8))
            }
            defer { server.stop() }
            let logs = LogSink()
            let sleeps = Locked<[Double]>([])
            let client = try Chaos.client(server: server.url, cache: directory, sleeps: sleeps, logs: logs)
            defer { client.shutdown() }
            let updates = UpdateRecorder(client)
            try await eventually("refused, then a reconnection", timeout: .patience) { server.received.count >= 2 }
            try await eventually("reported stale", timeout: .patience) { updates.sawStale }
            #expect(logs.messages.contains { $0.level == .warning && $0.message.hasPrefix(logged) })
            #expect(server.received.last?.headers["last-event-id"] == "1")
            #expect(sleeps.withLock { $0.first } == 1)  // bad data counts as a failure: backoff
            try await eventually("live again on v1", timeout: .patience) { client.state == .live(version: 1) }
            try await Chaos.expectServing(client, version: 1, newCheckout: true, maxItems: 10)
            #expect(try Chaos.cachedVersion(directory) == 1)
            #expect(try client.core.cache?.document(set: "ios-prod")?.bytes == Self.good)
        }
    }

    @Test(arguments: badDocuments)
    func aBadDocumentOnAPollIsRefused(_ bad: Bad) async throws {
        try await withTemporaryDirectory { directory in
            let count = Locked(0)
            let server = try ScriptedHTTPServer { request in
                let index = count.withLock { count in
                    count += 1
                    return count
                }
                switch index {
                case 1:
                    return .init(status: 200, headers: ["ETag": "\"1\""], chunks: [Self.good], pause: 0)
                case 2:
                    return .init(status: 200, headers: ["ETag": "\"2\""], chunks: [Array(bad.body.utf8)], pause: 0)
                default:
                    let current = request.headers["if-none-match"] == "\"1\""
                    return .init(status: current ? 304 : 500, headers: [:], chunks: [], pause: 0)
                }
            }
            defer { server.stop() }
            let logs = LogSink()
            let client = try Chaos.client(server: server.url, cache: directory, refresh: .poll, logs: logs) {
                $0.pollInterval = 1
            }
            defer { client.shutdown() }
            let updates = UpdateRecorder(client)
            try await eventually("three polls", timeout: .patience) { server.received.count >= 3 }
            #expect(logs.messages.contains { $0.level == .warning && $0.message.hasPrefix("ignored a document") })
            // The refused document's ETag was not taken: the next poll still names v1.
            #expect(server.received[2].headers["if-none-match"] == "\"1\"")
            try await eventually("reported stale", timeout: .patience) { updates.sawStale }
            try await eventually("live again on v1", timeout: .patience) { client.state == .live(version: 1) }
            try await Chaos.expectServing(client, version: 1, newCheckout: true, maxItems: 10)
            #expect(try Chaos.cachedVersion(directory) == 1)
        }
    }

    /// A patch on an unknown base makes the client fetch the document; a bad document there is refused too.
    @Test func aBadDocumentFetchedForAPatchIsRefused() async throws {
        let server = try ScriptedHTTPServer { request in
            if request.path.hasSuffix("/stream") {
                let patch = Docs.patch(version: 6, base: 5, flags: [Docs.flag("new-checkout", false)])
                return streamAnswer(
                    Docs.sse("put", id: 1, String(decoding: Self.good, as: UTF8.self)), Docs.sse("patch", id: 6, patch))
            }
            return .init(status: 200, headers: ["ETag": "\"6\""], chunks: [Array("{\"set\": \"ios-prod\", \"ver".utf8)])
        }
        defer { server.stop() }
        let logs = LogSink()
        let client = try Chaos.client(server: server.url, cache: nil, logs: logs)
        defer { client.shutdown() }
        try await eventually("the document fetched and refused", timeout: .patience) {
            logs.messages.contains { $0.message.hasPrefix("ignored a document") }
        }
        try await Chaos.expectServing(client, version: 1, newCheckout: true, maxItems: 10)
    }
}
