import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

@Suite("HTTP abuse corpus, live", .live)
struct HTTPAbuseLiveTests {
    @Test func everyCorpusFileHasAnExpectation() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: AbuseCorpus.directory.path)
            .filter { $0.hasSuffix(".http") }
        let listed = try AbuseCorpus.cases().map(\.name)
        #expect(Set(files) == Set(listed))
        #expect(listed.count == Set(listed).count, "a file is listed twice")
        #expect(listed.count >= 54)
        #expect(AbuseCorpus.statuses("201,401") == [201, 401])
        #expect(AbuseCorpus.statuses("200*3,400") == [200, 200, 200, 400])
        #expect(AbuseCorpus.statuses("20") == nil)
        #expect(AbuseCorpus.statuses("200*0") == nil)
    }

    @Test func theFormatExpandsEscapesRepeatsAndJoinedLines() throws {
        let source = Array("A \\x41\\r\\n{{admin}}\\\n{{repeat 3 a{{repeat 2 b}}}}\n\\\\\n".utf8)
        let bytes = try AbuseCorpus.render(source, adminToken: "T", file: "inline")
        #expect(bytes == Array("A A\r\nT".utf8) + Array("abbabbabb\r\n\\\r\n".utf8))
        for bad in ["{{repeat x}}\n", "{{repeat 2 a\n", "{{nope}}\n", "\\q\n", "\\x4\n"] {
            #expect(throws: AbuseCorpusError.self) {
                try AbuseCorpus.render(Array(bad.utf8), adminToken: "", file: "f")
            }
        }
    }

    @Test(arguments: try AbuseCorpus.cases())
    func answersAsExpectedAndCloses(_ abuse: AbuseCase) async throws {
        try await withLiveApp { harness, _, port in
            let setsBefore = harness.app.service.states().count
            let request = try abuse.bytes(adminToken: harness.admin)
            let result = try await offThePool { try rawExchange(port: port, request) }
            #expect(result.statuses == abuse.statuses, "\(abuse.reference)")
            #expect(result.end == .closed, "after \(result.milliseconds) ms")
            #expect(result.responses.last?.header("connection") == "close")
            for response in result.responses where response.status >= 400 {
                #expect(response.text.hasPrefix(#"{"error":{"code":""#), "\(response.status): \(response.text)")
            }
            // Nothing was stored but what the expected 201s created, and the server still serves.
            #expect(harness.app.service.states().count == setsBefore + abuse.statuses.filter { $0 == 201 }.count)
            let health = try await offThePool {
                try rawExchange(
                    port: port, Array("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".utf8))
            }
            #expect(health.statuses == [200])
        }
    }
}
