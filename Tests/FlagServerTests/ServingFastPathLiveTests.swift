import FlagCore
import Foundation
import Testing

@testable import FlagServer

/// The per-connection token check over real sockets: the engine hands every request of one connection the same
/// context, and a key revoked meanwhile is refused on that same keep-alive connection.
@Suite("Serving fast path, live on port 0")
struct ServingFastPathLiveTests {
    @Test func everyRequestOfAConnectionSharesItsContextAndOnlyThose() throws {
        let seen = Locked<[String: [ObjectIdentifier]]>([:])
        let handler: HTTPHandler = { request, responder in
            if let context = request.connection {
                seen.withLock { $0[request.path, default: []].append(ObjectIdentifier(context)) }
            }
            responder.respond(HTTPResponse(status: 204))
        }
        try withServer({ $0.loopCount = 1 }, handler: handler) { _, port in
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
        try withTemporaryDirectory { directory in
            let harness = try AppHarness(directory: directory)
            try withServer(handler: harness.app.handler) { server, port in
                harness.app.start(server: server)
                defer { harness.app.shutdown() }
                let reader = try TestClient(port: port)
                let get = "GET /v1/sets/ios-prod HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.sdk)\r\n\r\n"
                reader.send(get)
                #expect(try reader.readResponse().status == 200)
                reader.send(get)
                #expect(try reader.readResponse().status == 200)

                let admin = try TestClient(port: port)
                admin.send(
                    "DELETE /v1/admin/sets/ios-prod/keys/ios-app HTTP/1.1\r\nHost: t\r\n"
                        + "Authorization: Bearer \(harness.admin)\r\nContent-Length: 0\r\n\r\n")
                #expect(try admin.readResponse().status == 200)

                reader.send(get)
                let refused = try reader.readResponse()
                #expect(refused.status == 401)
                #expect(refused.header("WWW-Authenticate") == "Bearer realm=\"flagserver\"")
            }
        }
    }
}
