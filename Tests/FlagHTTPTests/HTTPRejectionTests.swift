import FlagHTTP
import FlagTestBasics
import Foundation
import Testing

/// What the engine refuses before a route is known: the limit behind it, the path when it was read, and the
/// renderer the configuration gives.
@Suite("HTTP rejections: the limit behind them and the configured renderer", .live)
struct HTTPRejectionTests {
    @Test(arguments: LimitCase.overEachLimit)
    func aLimitRejectionNamesItsLimitAndTheRoute(_ testCase: LimitCase) throws {
        let rejection = try #require(parse(testCase.input, limits: testCase.limits).rejection)
        #expect(rejection.status == testCase.status)
        #expect(rejection.limit == testCase.limit)
        if testCase.limit == .maxRequestLineBytes {
            #expect(rejection.path == nil)
        } else {
            #expect(rejection.path == "/ofrep/v1/evaluate/flags/nc")
        }
    }

    @Test func malformedInputHasNoLimit() throws {
        let rejection = try #require(parse("GET / HTTP/1.1\r\nHost: t\r\nX: a\r\n b\r\n\r\n").rejection)
        #expect(rejection.status == 400)
        #expect(rejection.limit == nil)
        #expect(rejection.path == "/")
        #expect(try #require(parse("G{T / HTTP/1.1\r\n\r\n").rejection).path == nil)
    }

    @Test func theEnginesOwnRenderingIsGeneric() throws {
        let rejection = try #require(parse("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n").rejection)
        let response = HTTPServerConfiguration().renderRejection(rejection)
        #expect(response.status == 413)
        #expect(
            String(decoding: response.body, as: UTF8.self)
                == #"{"error":{"code":"payload_too_large","message":"body of 2000000 bytes exceeds the limit of "#
                + #"1048576 bytes","path":null}}"#)
    }

    /// The engine calls the configured renderer, for parser rejections and for the connection cap.
    @Test func theEngineAnswersWithTheConfiguredRenderer() throws {
        let configure: (inout HTTPServerConfiguration) -> Void = { configuration in
            configuration.maxConnections = 1
            configuration.renderRejection = { rejection in
                HTTPResponse(status: rejection.status, body: Array("rendered \(rejection.limit?.rawValue ?? "-")".utf8))
            }
        }
        try withServer(configure, handler: basicHandler) { _, port in
            let first = try TestClient(port: port)
            first.send("GET /ok HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try first.readResponse().status == 200)
            let second = try TestClient(port: port)
            let refused = try second.readResponse()
            #expect(refused.status == 503)
            #expect(refused.text == "rendered maxConnections")
            #expect(refused.header("Retry-After") == "1")
            first.send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n")
            let rejected = try first.readResponse()
            #expect(rejected.status == 413)
            #expect(rejected.header("Connection") == "close")
            #expect(rejected.text == "rendered maxBodyBytes")
            #expect(first.isClosedByServer())
        }
    }
}
