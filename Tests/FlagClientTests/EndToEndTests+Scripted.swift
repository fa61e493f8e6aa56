import FlagCore
import FlagHTTP
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// What the real server refuses to send, it validating every write: a broken document on the stream and a document
/// of a newer schema. The in-test socket server (`ScriptedHTTPServer`) serves those, starting from the live server's
/// own document, to the client's real URLSession transport.
extension EndToEndTests {
    @Test func aBrokenDocumentOnTheStreamKeepsTheOldSet() async throws {
        try await Self.withFixture { fixture in
            let good = try await fixture.server.request("GET", "/v1/sets/e2e", token: fixture.sdkKey)
            #expect(good.status == 200)
            let put = Array("event: put\nid: 1\ndata: ".utf8) + good.body + Array("\n\n".utf8)
            // Cut short mid-document, then (on the next connection) a patch giving an int flag a string default.
            let brokenPut =
                Array(#"event: put\#nid: 2\#ndata: {"schema": 1, "set": "e2e", "version": 2, "fl"#.utf8)
                + [0x0A, 0x0A]
            let badFlag = #"{"type": "int", "kind": "ops", "default": "many", "killValue": 0}"#
            let invalidPatch = Array(
                ("event: patch\nid: 2\ndata: {\"version\": 2, \"base\": 1, \"flags\": {\"max-items\": \(badFlag)}, "
                    + #""cohorts": {}, "removed": {"flags": [], "cohorts": []}}"# + "\n\n").utf8)
            let connections = Locked(0)
            let streamServer = try ScriptedHTTPServer { request in
                guard request.path == "/v1/sets/e2e/stream" else { return .init(status: 404, headers: [:], chunks: []) }
                let first = connections.withLock { count in
                    count += 1
                    return count == 1
                }
                return .init(
                    status: 200, headers: ["Content-Type": "text/event-stream"],
                    chunks: first ? [put, brokenPut] : [put, invalidPatch], keepOpen: true)
            }
            defer { streamServer.stop() }
            let logs = LogSink()
            let client = try fixture.client(server: streamServer.url, cache: fixture.cache, logs: logs)
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            try await eventually("the broken document and the invalid patch refused") {
                let warnings = logs.messages.filter { $0.level == .warning }.map(\.message)
                return warnings.contains { $0.hasPrefix("ignored a document") }
                    && warnings.contains { $0.hasPrefix("ignored a patch") }
            }
            // Live on v1, or stale while it reconnects after the bad data: never another version.
            let state = client.state
            if case .stale = state {} else { #expect(state == .live(version: 1)) }
            let detail = client.session(unitID: "u-1").detail(.maxItems)
            #expect(detail.value == 20)
            #expect(detail.version == 1)
            #expect(try client.core.cache?.document(set: "e2e")?.version == 1)
        }
    }

    @Test func anUnknownOperatorOfANewerSchemaBreaksOnlyItsFlag() async throws {
        let document = #"""
            {"schema": 2, "set": "e2e", "version": 5, "updatedAt": "2026-11-29T10:00:00Z", "flags": {
              "new-checkout": {"type": "bool", "kind": "ops", "default": true, "killValue": false,
                "rules": [{"name": "eu", "conditions": [{"attribute": "region", "op": "geo_within", "values": ["EU"]}],
                           "value": false}]},
              "dark-mode": {"type": "bool", "kind": "ops", "default": true, "killValue": false},
              "max-items": {"type": "int", "kind": "ops", "default": 25, "killValue": 0}}}
            """#
        try await Self.withFixture { fixture in
            // The real server refuses to store it: nothing it cannot evaluate is ever served.
            let refused = try await fixture.server.admin("PUT", "/v1/admin/sets/e2e", #"{"document": \#(document)}"#)
            #expect(refused.status == 422)
            #expect(try await fixture.server.admin("GET", "/v1/admin/sets/e2e").json("version") == .int(1))

            let body = Array(document.utf8)
            let newer = try ScriptedHTTPServer { request in
                guard request.path == "/v1/sets/e2e" else { return .init(status: 404, headers: [:], chunks: []) }
                if request.headers["if-none-match"] == "\"5\"" {
                    return .init(status: 304, headers: ["ETag": "\"5\""], chunks: [])
                }
                return .init(
                    status: 200, headers: ["Content-Type": "application/json", "ETag": "\"5\""], chunks: [body])
            }
            defer { newer.stop() }
            let client = try fixture.client(server: newer.url, cache: fixture.cache) { $0.refresh = .poll }
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            #expect(client.state == .live(version: 5))
            let session = client.session(unitID: "u-1", attributes: ["region": "EU"])
            let broken = session.detail(.newCheckout)
            #expect(broken.value == false)
            #expect(broken.reason == .error)
            #expect(broken.errorCode == .parseError)
            #expect(session.detail(.darkMode).value == true)
            #expect(session.detail(.darkMode).reason == .static)
            let items = session.detail(.maxItems)
            #expect(items.value == 25)
            #expect(items.reason == .static)
            #expect(items.version == 5)
        }
    }
}
