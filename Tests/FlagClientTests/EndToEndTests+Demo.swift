import FlagTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The built `flagdemo` beside the test bundle.
let flagdemoBinary = BuiltProducts.executable("flagdemo")

extension EndToEndTests {
    /// The example program against the live server with the repository's demo set: it prints each user's checkout,
    /// then the kill an operator makes while it watches, and exits 0 in `--once` mode.
    @Test(.enabled(if: flagdemoBinary != nil))
    func flagdemoPrintsValuesAndTheKillThatArrives() async throws {
        try await Self.withFixture { fixture in
            let key = try await fixture.createDemoSet()

            let output = fixture.directory.appendingPathComponent("flagdemo.out")
            let pid = try Spawn.start(
                try #require(flagdemoBinary).path,
                ["--cache", fixture.cache.path, "--users", "u-1,anna", "--watch", "30", "--once"],
                environment: ["FLAGSTAFF_SERVER": fixture.server.url.absoluteString, "FLAGSTAFF_SDK_KEY": key],
                directory: fixture.directory.path, stdout: output.path, stderr: "/dev/null")
            var ended: (status: Int32, exitedNormally: Bool)?
            // Never leave the program running past the test.
            defer { if ended == nil { Spawn.stop(pid, signal: SIGKILL) } }
            let printed = { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }

            try await eventually("flagdemo watching") { printed().contains("watching for kills") }
            let killed = try await fixture.server.admin(
                "POST", "/v1/admin/sets/demo/flags/payments-enabled/kill", #"{"reason": "provider outage"}"#)
            #expect(killed.status == 200)
            try await eventually("flagdemo exits") {
                ended = Spawn.exitStatus(pid)
                return ended != nil
            }
            #expect(ended?.status == 0)
            try await eventually("the kill printed") { printed().contains("kill:") }
            let lines = printed().split(separator: "\n").map(String.init)
            #expect(lines.first == "started: compiled-in defaults (no flag set yet)")
            #expect(lines.contains("ready: flag set v1, live from the server"))
            #expect(lines.contains { $0.hasPrefix("u-1: ") && $0.hasSuffix("pay button, 600 requests/min") })
            #expect(lines.contains { $0.hasPrefix("anna: ") })
            #expect(lines.contains("kill: payments-enabled is off for u-1 (v2): payments are off: checkout closed"))
            #expect(lines.contains("kill: payments-enabled is off for anna (v2): payments are off: checkout closed"))
        }
    }
}
