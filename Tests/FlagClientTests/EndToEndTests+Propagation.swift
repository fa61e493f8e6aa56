import FlagTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The built `flagctl` beside the test bundle.
let flagctlBinary = BuiltProducts.executable("flagctl")

extension EndToEndTests {
    /// Confirmed changes end to end: three `flagdemo` processes embed FlagClient and report to a live
    /// server; `flagctl kill --wait 100%` returns once all three report the kill, and with one process stopped
    /// (SIGSTOP) `--wait 100%` times out with exit 4, naming that instance.
    @Test(.enabled(if: flagdemoBinary != nil && flagctlBinary != nil))
    func waitConfirmsAKillOnEveryProcessAndNamesAStoppedOne() async throws {
        try await Self.withFixture { fixture in
            let key = try await fixture.createDemoSet()
            var pids: [pid_t] = []
            defer { for pid in pids { Spawn.stop(pid, signal: SIGKILL) } }
            for index in 1...3 {
                let cache = fixture.directory.appendingPathComponent("cache-\(index)")
                pids.append(
                    try Spawn.start(
                        try #require(flagdemoBinary).path,
                        [
                            "--cache", cache.path, "--users", "u-\(index)", "--watch", "300", "--app",
                            "demo-\(index)/1.0.0",
                        ],
                        environment: ["FLAGSTAFF_SERVER": fixture.server.url.absoluteString, "FLAGSTAFF_SDK_KEY": key],
                        directory: fixture.directory.path, stdout: "/dev/null", stderr: "/dev/null"))
            }
            // Each reports within 3 s of applying its first version.
            try await eventually("three instances report", timeout: .patience, every: .milliseconds(200)) {
                let clients = try? await fixture.server.admin("GET", "/v1/admin/sets/demo/clients")
                return (clients?.text.components(separatedBy: "\"demo-").count ?? 0) - 1 == 3
            }

            let flagctl = { (arguments: [String]) async throws -> (status: Int32, output: String) in
                try await Self.run(
                    try #require(flagctlBinary), arguments,
                    environment: [
                        "FLAGCTL_SERVER": fixture.server.url.absoluteString,
                        "FLAGCTL_TOKEN": LiveFlagServer.adminToken, "FLAGCTL_SET": "demo",
                    ],
                    in: fixture.directory)
            }
            let confirmed = try await flagctl(["kill", "payments-enabled", "--wait", "100%", "--wait-timeout", "20s"])
            #expect(confirmed.status == 0, "\(confirmed.output)")
            #expect(confirmed.output.contains("confirmed"), "\(confirmed.output)")

            kill(pids[2], SIGSTOP)
            defer { kill(pids[2], SIGCONT) }
            // Long enough for the two running instances to report under a loaded CI machine (each reports 1–3 s after
            // it applies the version), so that only the stopped one is named.
            let timedOut = try await flagctl(["restore", "payments-enabled", "--wait", "100%", "--wait-timeout", "10s"])
            #expect(timedOut.status == 4, "\(timedOut.output)")
            #expect(timedOut.output.contains("demo-3"), "\(timedOut.output)")
            #expect(!timedOut.output.contains("demo-1") && !timedOut.output.contains("demo-2"), "\(timedOut.output)")
        }
    }

    /// Runs `binary` to its end and returns its status and what it wrote to stdout and stderr together. Waits
    /// with `Task.sleep`, not a blocking wait: flagctl may take its whole `--wait-timeout`, and a blocked thread of
    /// the two-thread cooperative pool starves the other tests running beside this one.
    static func run(
        _ binary: URL, _ arguments: [String], environment: [String: String], in directory: URL
    ) async throws -> (status: Int32, output: String) {
        let output = directory.appendingPathComponent("run-\(UUID().uuidString).out")
        let pid = try Spawn.start(
            binary.path, arguments, environment: environment, directory: directory.path, stdout: output.path)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        var ended = Spawn.exitStatus(pid)
        while ended == nil && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            ended = Spawn.exitStatus(pid)
        }
        if ended == nil { ended = Spawn.stop(pid, signal: SIGKILL) }
        return (ended?.status ?? -1, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }
}
