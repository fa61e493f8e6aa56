import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagHTTP
@testable import FlagServer

/// The serving fast path: token checks remembered per connection, conditional requests read byte by
/// byte, and responses encoded once per version — each must answer exactly as the slow path did.
@Suite("Serving fast path: per-connection auth, If-None-Match, prepared responses")
struct ServingFastPathTests {
    static let date = Array("Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n".utf8)

    static func wire(_ response: HTTPResponse, _ context: HTTPResponseEncoder.Context) -> [UInt8] {
        let (head, body) = HTTPResponseEncoder.encode(response, context, date: date)
        return head + (body ?? [])
    }

    @Test(arguments: [false, true], [false, true])
    func aPreparedResponseEncodesToTheSameBytes(head: Bool, close: Bool) {
        let headers: HTTPHeaders = ["Content-Type": "application/json; charset=utf-8", "ETag": "\"12\""]
        for (status, body) in [
            (200, Array(#"{"a":1}"#.utf8)), (304, []), (200, [UInt8](repeating: 0x41, count: 20_000)),
        ] {
            for version in [HTTPVersion.http1_0, .http1_1] {
                let context = HTTPResponseEncoder.Context(isHeadRequest: head, version: version, close: close)
                let plain = HTTPResponse(status: status, headers: headers, body: body)
                let prepared = HTTPResponse.prepared(status: status, headers: headers, body: body)
                #expect(prepared.prepared != nil)
                #expect(Self.wire(prepared, context) == Self.wire(plain, context), "\(status) \(version)")
            }
        }
    }

    @Test func changingAPreparedResponseEncodesTheChange() {
        var response = HTTPResponse.prepared(status: 200, headers: ["ETag": "\"1\""], body: Array("x".utf8))
        response.headers.replaceOrAdd(name: "ETag", value: "\"2\"")
        response.status = 203
        #expect(response.prepared == nil)
        let context = HTTPResponseEncoder.Context(isHeadRequest: false, version: .http1_1, close: false)
        let text = String(decoding: Self.wire(response, context), as: UTF8.self)
        let date = String(decoding: Self.date, as: UTF8.self)
        #expect(text == "HTTP/1.1 203 Unknown\r\nETag: \"2\"\r\n\(date)Content-Length: 1\r\n\r\nx")
    }

    @Test func aPreparedConnectionCloseStillClosesTheConnection() {
        let response = HTTPResponse.prepared(status: 200, headers: ["Connection": "close"])
        #expect(HTTPResponseEncoder.requestsClose(response))
        #expect(!HTTPResponseEncoder.requestsClose(.prepared(status: 200, headers: ["ETag": "\"1\""])))
    }

    @Test(arguments: [
        ("\"3\"", true), ("W/\"3\"", true), ("\"1\", \"3\"", true), (" \"1\" ,\t\"3\" ", true), ("*", true),
        ("\"1\", *", true), ("\"30\"", false), ("\"03\"", true), ("3", false), ("\"3", false), ("\"\"", false),
        ("\"-1\"", false), ("\"+3\"", false), ("w/\"3\"", false), ("W/ \"3\"", false), ("", false), (",,", false),
        ("\"99999999999999999999\"", false),
    ])
    func ifNoneMatchNamesTheVersion(header: String, matches: Bool) {
        #expect(FlagServerApp.ifNoneMatch(header, names: 3) == matches)
    }

    @Test func noIfNoneMatchNamesNothing() {
        #expect(!FlagServerApp.ifNoneMatch(nil, names: 3))
    }

    @Test func eachVersionServesItsOwnPreparedAnswers() async throws {
        try await withHarness { harness in
            let (state, served) = try harness.app.service.servedVersion("ios-prod")
            let first = harness.app.answers.answers(for: state, served: served)
            #expect(first.document?.headers["ETag"] == "\"1\"")
            #expect(first.document?.body == served.bytes)
            #expect(first.notModified.status == 304 && first.notModified.body.isEmpty)
            #expect(harness.app.answers.answers(for: state, served: served) === first)
            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}")
            let second = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            #expect(second.header("ETag") == "\"2\"")
            #expect(second.body == (try harness.app.service.servedDocument("ios-prod")).bytes)
        }
    }

    // MARK: - Token checks remembered per connection

    /// Sends a request as if it arrived on the connection `context` stands for.
    static func send(
        _ harness: AppHarness, _ target: String, authorization: String?, on context: HTTPConnectionContext
    ) throws -> TestResponse {
        try InProcessClient(handler: harness.app.handler, connection: context)
            .send("GET", target, headers: authorization.map { [("Authorization", $0)] } ?? [])
    }

    @Test func aKeyRevokedMidConnectionIsRefusedOnItsNextRequest() async throws {
        try await withHarness { (harness: AppHarness) async throws in
            let connection = HTTPConnectionContext()
            let key = "Bearer \(harness.sdk)"
            #expect(try Self.send(harness, "/v1/sets/ios-prod", authorization: key, on: connection).status == 200)
            #expect(try Self.send(harness, "/v1/sets/ios-prod", authorization: key, on: connection).status == 200)
            #expect(ConnectionMemo.of(connection)?.credential != nil)
            let revoked = try harness.send("DELETE", "/v1/admin/sets/ios-prod/keys/ios-app")
            #expect(revoked.status == 200)
            let after = try Self.send(harness, "/v1/sets/ios-prod", authorization: key, on: connection)
            #expect(after.status == 401)
            #expect(try after.json("error.code") == .string("unauthorized"))
        }
    }

    @Test func anotherTokenOnTheSameConnectionIsCheckedAfresh() async throws {
        try await withHarness { (harness: AppHarness) async throws in
            let connection = HTTPConnectionContext()
            let key = "Bearer \(harness.sdk)"
            #expect(try Self.send(harness, "/v1/sets/ios-prod", authorization: key, on: connection).status == 200)
            // Same length as the key, one byte different.
            var forged = Array(key.utf8)
            forged[forged.count - 1] = forged[forged.count - 1] == 0x61 ? 0x62 : 0x61
            let wrong = String(decoding: forged, as: UTF8.self)
            #expect(try Self.send(harness, "/v1/sets/ios-prod", authorization: wrong, on: connection).status == 401)
            #expect(try Self.send(harness, "/v1/sets/ios-prod", authorization: nil, on: connection).status == 401)
            #expect(try Self.send(harness, "/v1/sets/ios-prod", authorization: key, on: connection).status == 200)
            #expect(try Self.send(harness, "/v1/sets/android-prod", authorization: key, on: connection).status == 403)
            #expect(try Self.send(harness, "/metrics", authorization: key, on: connection).status == 403)
            let admin = "Bearer \(harness.admin)"
            #expect(try Self.send(harness, "/metrics", authorization: admin, on: connection).status == 200)
            #expect(try Self.send(harness, "/metrics", authorization: key, on: connection).status == 403)
        }
    }
}
