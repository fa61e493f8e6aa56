import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built `flagserver` next to the test runner (`swift build --build-tests` builds it with the tests).
let flagserverBinary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("flagserver")

@Suite(
    "flagserver binary", .enabled(if: FileManager.default.isExecutableFile(atPath: flagserverBinary.path)),
    .serialized)
struct FlagServerBinaryTests {
    @Test func aBadArgumentExitsTwoWithTheUsage() throws {
        let process = Process()
        process.executableURL = flagserverBinary
        process.arguments = ["--port", "80"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 2)
        #expect(text.hasPrefix("flagserver: unknown argument \"--port\""))
        #expect(text.contains("usage: flagserver [--config FILE] [--listen HOST:PORT] [--data DIR]"))
    }

    @Test func itStartsSaysWhereAndStopsOnSIGTERM() throws {
        try withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("data").path
            let process = Process()
            process.executableURL = flagserverBinary
            process.arguments = ["--listen", "127.0.0.1:0", "--data", data]
            process.environment = ["PATH": "/usr/bin:/bin"]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = Pipe()
            try process.run()
            defer { if process.isRunning { process.terminate() } }

            var log = ""
            let deadline = Date().addingTimeInterval(10)
            while !log.contains("listening on"), Date() < deadline {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                log += String(decoding: chunk, as: UTF8.self)
            }
            #expect(log.contains("created the first admin token; it is in \(data)/admin-token (readable only by you)"))
            let listening = try #require(
                log.split(separator: "\n").first { $0.contains("listening on http://127.0.0.1:") })
            let port = try #require(Int(listening.split(separator: ":").last ?? ""))
            let token = try String(contentsOfFile: "\(data)/admin-token", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!log.contains(token))

            let client = try TestClient(port: port)
            client.send("GET /v1/admin/sets HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyText.contains("\"name\":\"ios-prod\""))

            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            log += String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationStatus == 0)
            #expect(log.hasSuffix("flagserver: stopped\n"))
        }
    }
}
