import FlagCore
import Foundation
import FlagTestSupport
import Testing

@testable import FlagServer

/// What the engine answers before a route is known goes through the configuration's renderer: the engine's own
/// stays generic, flagserver's names the configuration setting behind a limit and answers OFREP paths in OFREP's
/// shape.
@Suite("HTTP rejections: the limit behind them and how they are rendered")
struct HTTPRejectionRenderingTests {
    struct LimitCase: CustomTestStringConvertible, Sendable {
        let input: String
        let limits: HTTPParserLimits
        let limit: HTTPLimit
        let status: Int
        var testDescription: String { limit.rawValue }
    }

    static let small = HTTPParserLimits(
        maxHeaderBytes: 512, maxHeaderCount: 4, maxRequestLineBytes: 64, maxBodyBytes: 10, maxChunkLineBytes: 8)

    /// One request over each parser limit, on an OFREP path where the request line is complete.
    static let limitCases: [LimitCase] = [
        LimitCase(
            input: "POST /ofrep/v1/evaluate/flags/nc HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\n",
            limits: small, limit: .maxBodyBytes, status: 413),
        LimitCase(
            input: "POST /ofrep/v1/evaluate/flags/nc HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n",
            limits: small, limit: .maxBodyBytes, status: 413),
        LimitCase(
            input:
                "POST /ofrep/v1/evaluate/flags/nc HTTP/1.1\r\nHost: t\r\nX: \(String(repeating: "a", count: 600))\r\n",
            limits: small, limit: .maxHeaderBytes, status: 431),
        LimitCase(
            input: "POST /ofrep/v1/evaluate/flags/nc HTTP/1.1\r\nHost: t\r\n"
                + (1...4).map { "X-\($0): v\r\n" }.joined(),
            limits: small, limit: .maxHeaderCount, status: 431),
        LimitCase(
            input: "POST /ofrep/v1/evaluate/flags/nc HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "1;ext=long\r\n",
            limits: small, limit: .maxChunkLineBytes, status: 400),
        LimitCase(
            input: "GET /\(String(repeating: "a", count: 80)) HTTP/1.1\r\n", limits: small,
            limit: .maxRequestLineBytes, status: 414),
    ]

    @Test(arguments: limitCases)
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

    /// Every limit the configuration file sets is named by the setting that really changes it.
    @Test(arguments: HTTPLimit.allCases)
    func theNamedSettingIsTheOneThatRaisesTheLimit(_ limit: HTTPLimit) throws {
        guard let setting = ServerConfiguration.setting(for: limit) else {
            #expect([.maxRequestLineBytes, .maxChunkLineBytes].contains(limit))
            return
        }
        let name = try #require(setting.split(separator: ".").last)
        #expect(setting == "limits.\(name)")
        let configuration = try ServerConfiguration.parse(
            Array(#"{"limits":{"\#(name)":7777}}"#.utf8), source: "test.json")
        let http = configuration.http
        let value =
            switch limit {
            case .maxBodyBytes: http.limits.maxBodyBytes
            case .maxHeaderBytes: http.limits.maxHeaderBytes
            case .maxHeaderCount: http.limits.maxHeaderCount
            case .maxConnections: http.maxConnections
            case .maxRequestLineBytes: http.limits.maxRequestLineBytes
            case .maxChunkLineBytes: http.limits.maxChunkLineBytes
            }
        #expect(value == 7777)
    }

    @Test func flagserverNamesTheSettingToRaise() throws {
        let rejection = try #require(
            parse("PUT /v1/admin/sets/s HTTP/1.1\r\nHost: t\r\nContent-Length: 1345976\r\n\r\n").rejection)
        let response = ServerConfiguration().http.renderRejection(rejection)
        #expect(response.status == 413)
        #expect(
            try TestResponse(response).json("error.message")
                == .string(
                    "body of 1345976 bytes exceeds the limit of 1048576 bytes (raise limits.maxBodyBytes in the "
                        + "server's configuration file to allow more)"))
        #expect(try TestResponse(response).json("error.code") == .string("payload_too_large"))
        let fixed = try #require(parse("GET /\(String(repeating: "a", count: 9000)) HTTP/1.1\r\n").rejection)
        #expect(
            try TestResponse(FlagServerApp.renderRejection(fixed)).json("error.message")
                == .string("request line exceeds the limit of 8192 bytes (a limit fixed in flagserver)"))
    }

    @Test(arguments: limitCases)
    func onAnOFREPPathTheRejectionTakesOFREPsShape(_ testCase: LimitCase) throws {
        let rejection = try #require(parse(testCase.input, limits: testCase.limits).rejection)
        let response = FlagServerApp.renderRejection(rejection)
        #expect(response.status == testCase.status)
        guard testCase.limit != .maxRequestLineBytes else {
            // The path was never read, so the route is unknown: the API's shape.
            #expect(try TestResponse(response).json("error.code") == .string("uri_too_long"))
            return
        }
        let object = try jsonMembers(response.body)
        #expect(Set(object.keys) == ["key", "errorCode", "errorDetails"])
        #expect(object["key"] == .string("nc"))
        #expect(object["errorCode"] == .string(ErrorCode.general.rawValue))
        let details = try #require(object["errorDetails"]?.text)
        if let setting = ServerConfiguration.setting(for: testCase.limit) { #expect(details.contains(setting)) }
    }

    @Test func aBulkOFREPPathGetsTheBulkShape() throws {
        let rejection = try #require(
            parse("POST /ofrep/v1/evaluate/flags HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 3\r\n")
                .rejection)
        let object = try jsonMembers(FlagServerApp.renderRejection(rejection).body)
        #expect(object["errorCode"] == .string("GENERAL"))
        #expect(object["errorDetails"] == .string("more than one Content-Length header"))
        #expect(object["key"] == nil)
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
