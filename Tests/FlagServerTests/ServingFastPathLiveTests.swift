import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagHTTP
@testable import FlagServer

/// The per-connection token check over real sockets: the engine hands every request of one connection the same
/// context, and a key revoked meanwhile is refused on that same keep-alive connection.
@Suite("Serving fast path, live on port 0", .live)
struct ServingFastPathLiveTests {
    @Test func everyRequestOfAConnectionSharesItsContextAndOnlyThose() throws {
        let seen = Locked<[String: [ObjectIdentifier]]>([:])
        let handler: HTTPHandler = { request, responder in
            if let context = request.connection {
                seen.withLock { $0[request.path, default: []].append(ObjectIdentifier(context)) }
            }
            responder.respond(HTTPResponse(status: 204))
        }
        let oneLoop: (inout HTTPServerConfiguration) -> Void = { $0.loopCount = 1 }
        try withServer(oneLoop, handler: handler) { _, port in
            let first = try TestClient(port: port)
            let second = try TestClient(port: port)
            for _ in 0..<3 {
                first.send("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
                #expect(try first.readResponse().status == 204)
            }
            // Pipelined requests are on the same connection too.
            second.send("GET /b HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try second.readResponse().status == 204)
            #expect(try second.readResponse().status == 204)
            let ids = seen.withLock { $0 }
            let a = try #require(ids["/a"])
            let b = try #require(ids["/b"])
            #expect(a.count == 3 && Set(a).count == 1)
            #expect(b.count == 2 && Set(b).count == 1)
            #expect(a[0] != b[0])
        }
    }

    @Test func aKeyRevokedWhileItsConnectionStaysOpenIsRefused() throws {
        try withLiveHarness { harness, live in
            let reader = try live.client()
            #expect(try reader.send("GET", "/v1/sets/ios-prod", token: harness.sdk).status == 200)
            #expect(try reader.send("GET", "/v1/sets/ios-prod", token: harness.sdk).status == 200)

            let revoked = try live.client().send(
                "DELETE", "/v1/admin/sets/ios-prod/keys/ios-app", token: harness.admin)
            #expect(revoked.status == 200)

            let refused = try reader.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            #expect(refused.status == 401)
            #expect(refused.header("WWW-Authenticate") == "Bearer realm=\"flagserver\"")
        }
    }

    /// The document route answers the repeated requests of a keep-alive connection from what that connection
    /// remembers (its key, the set's state); every answer must still be the general router's.
    @Test func repeatedDocumentRequestsOnOneConnectionFollowChangesAndChecks() async throws {
        let oneLoop: (inout HTTPServerConfiguration) -> Void = { $0.loopCount = 1 }
        try await withLiveApp(oneLoop) { harness, _, port in
            let reader = try LiveClient(port: port)
            func get(_ extra: (String, String)? = nil, method: String = "GET", target: String = "/v1/sets/ios-prod")
                throws -> TestResponse
            {
                try reader.send(method, target, token: harness.sdk, headers: extra.map { [$0] } ?? [])
            }
            let first = try get()
            #expect(first.status == 200)
            #expect(first.header("ETag") == "\"1\"")
            // Remembered from here on: the same bytes, the same statuses.
            let again = try get()
            #expect(again.status == 200 && again.body == first.body)
            #expect(try get(("If-None-Match", "\"1\"")).status == 304)
            #expect(try get(("If-None-Match", "\"1\"")).status == 304)
            let head = try get(method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.header("Content-Length") == "\(first.body.count)")

            // A change from another connection: the next conditional request gets the new version.
            #expect(try harness.killOverSocket("new-checkout", port: port, reason: "test").status == 200)
            let changed = try get(("If-None-Match", "\"1\""))
            #expect(changed.status == 200)
            #expect(changed.header("ETag") == "\"2\"")
            #expect(changed.body != first.body)
            #expect(try get(("If-None-Match", "\"2\"")).status == 304)

            // What the router refuses is refused on a remembered connection too.
            #expect(try get(("Authorization", "Bearer other")).status == 401)
            #expect(try get(target: "/v1/sets/android-prod").status == 403)
            #expect(try get(target: "/v1/sets/nowhere").status == 403)
            #expect(try get(method: "DELETE").status == 405)
            // A query is the long poll's; wait=0 answers at once.
            #expect(try get(("If-None-Match", "\"2\""), target: "/v1/sets/ios-prod?wait=0").status == 304)
            #expect(try get(("If-None-Match", "\"2\"")).status == 304)
        }
    }
}
