import Foundation
import Synchronization
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
        // Polled, not `waitUntilExit()`: on a loaded machine Foundation can miss a child's exit and that call would
        // never return, hanging the whole suite.
        #expect(waitUntil(timeout: .seconds(20)) { !process.isRunning })
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            return
        }
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
            let output = Mutex("")
            errors.fileHandleForReading.readabilityHandler = { handle in
                let chunk = String(decoding: handle.availableData, as: UTF8.self)
                output.withLock { $0 += chunk }
            }
            process.standardError = errors
            process.standardOutput = Pipe()
            try process.run()
            // Never hang the suite on a server that does not start or does not stop.
            defer {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                errors.fileHandleForReading.readabilityHandler = nil
            }

            #expect(waitUntil(timeout: .seconds(20)) { output.withLock { $0.contains("listening on") } })
            let log = output.withLock { $0 }
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
            #expect(waitUntil(timeout: .seconds(20)) { !process.isRunning })
            guard !process.isRunning else { return }
            #expect(process.terminationStatus == 0)
            #expect(waitUntil { output.withLock { $0.hasSuffix("flagserver: stopped\n") } })
        }
    }
}
