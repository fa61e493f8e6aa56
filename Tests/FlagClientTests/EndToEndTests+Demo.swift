import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The built `flagdemo` beside the test bundle.
let flagdemoBinary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("flagdemo")

extension EndToEndTests {
    /// The example program against the live server with the repository's demo set: it prints each user's checkout,
    /// then the kill an operator makes while it watches, and exits 0 in `--once` mode.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: flagdemoBinary.path)))
    func flagdemoPrintsValuesAndTheKillThatArrives() async throws {
        try await Self.withFixture { fixture in
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let demo = try String(
                contentsOf: root.appendingPathComponent("config/flagsets/demo.json"), encoding: .utf8)
            let key = try await fixture.server.createSet("demo", document: demo)

            let process = Process()
            process.executableURL = flagdemoBinary
            process.arguments = [
                "--cache", fixture.cache.path, "--users", "u-1,anna", "--watch", "30", "--once",
            ]
            process.environment = ["FLAGSTAFF_SERVER": fixture.server.url.absoluteString, "FLAGSTAFF_SDK_KEY": key]
            let output = Pipe()
            let printed = Mutex("")
            output.fileHandleForReading.readabilityHandler = { handle in
                let chunk = String(decoding: handle.availableData, as: UTF8.self)
                printed.withLock { $0 += chunk }
            }
            process.standardOutput = output
            process.standardError = Pipe()
            try process.run()
            // Never leave the program running past the test.
            defer {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                output.fileHandleForReading.readabilityHandler = nil
            }

            try await eventually("flagdemo watching") { printed.withLock { $0.contains("watching for kills") } }
            let killed = try await fixture.server.admin(
                "POST", "/v1/admin/sets/demo/flags/payments-enabled/kill", #"{"reason": "provider outage"}"#)
            #expect(killed.status == 200)
            try await eventually("flagdemo exits") { !process.isRunning }
            #expect(process.terminationStatus == 0)
            try await eventually("the kill printed") { printed.withLock { $0.contains("kill:") } }
            let lines = printed.withLock { $0 }.split(separator: "\n").map(String.init)
            #expect(lines.first == "started: compiled-in defaults (no flag set yet)")
            #expect(lines.contains("ready: flag set v1, live from the server"))
            #expect(lines.contains { $0.hasPrefix("u-1: ") && $0.hasSuffix("pay button, 600 requests/min") })
            #expect(lines.contains { $0.hasPrefix("anna: ") })
            #expect(lines.contains("kill: payments-enabled is off for u-1 (v2): payments are off: checkout closed"))
            #expect(lines.contains("kill: payments-enabled is off for anna (v2): payments are off: checkout closed"))
        }
    }
}
