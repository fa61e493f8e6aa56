import FlagCore
import FlagHTTP
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// flagserver's renderer for what the engine refuses before a route is known: it names the configuration setting
/// behind a limit and answers OFREP paths in OFREP's shape.
@Suite("HTTP rejections as flagserver renders them")
struct HTTPRejectionRenderingTests {
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
            case .maxConnectionsPerAddress: http.maxConnectionsPerAddress
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

    @Test(arguments: LimitCase.overEachLimit)
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
}
