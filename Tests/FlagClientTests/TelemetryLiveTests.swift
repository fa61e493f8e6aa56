import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// Several FlagClients against the real FlagServer, live on a free port: what the server's `clients` and `usage`
/// routes say agrees with what the clients evaluated. Serialized with nothing else on the server; waits are bounded.
@Suite("Telemetry end to end against a live FlagServer", .serialized, .live)
struct TelemetryLiveTests {
    static let document = """
        {"schema": 1, "set": "tele", "flags": {
          "new-checkout": {"type": "bool", "kind": "release", "default": false, "killValue": false,
            "rules": [{"name": "germany", "conditions": [{"attribute": "country", "op": "eq", "values": ["DE"]}],
              "value": true}]},
          "dark-mode": {"type": "bool", "kind": "ops", "default": true, "killValue": false},
          "unused": {"type": "bool", "kind": "ops", "default": true, "killValue": false}}}
        """

    /// The evaluations the server counted, per flag: the total and the variants, summed over the days it answers.
    static func usage(_ server: LiveFlagServer) async throws -> [String: (total: Int, variants: [String: Int])] {
        let answer = try await server.admin("GET", "/v1/admin/sets/tele/usage?days=2")
        try #require(answer.status == 200, "usage: \(answer.text)")
        guard case .array(let flags)? = try answer.json("flags") else { return [:] }
        var usage: [String: (total: Int, variants: [String: Int])] = [:]
        for case .object(let flag) in flags {
            guard case .string(let key)? = flag["key"], case .array(let days)? = flag["days"] else { continue }
            var entry = (total: 0, variants: [String: Int]())
            for case .object(let day) in days {
                if case .int(let evaluations)? = day["evaluations"] { entry.total += Int(evaluations) }
                if case .object(let variants)? = day["variants"] {
                    for case (let name, .int(let count)) in variants { entry.variants[name, default: 0] += Int(count) }
                }
            }
            usage[key] = entry
        }
        return usage
    }

    @Test func theServerCountsWhatSeveralClientsEvaluated() async throws {
        try await LiveFlagServer.withSet("tele", document: Self.document) { server, sdkKey, _ in
            var clients: [FlagClient] = []
            defer { for client in clients { client.shutdown() } }
            for index in 0..<3 {
                var configuration = FlagClient.Configuration(
                    server: server.url, set: "tele", sdkKey: sdkKey, cacheDirectory: nil)
                configuration.environment = [:]
                configuration.telemetry = .every(seconds: 1)
                configuration.app = TelemetryReport.Software(name: "Shop", version: "5.3.\(index)")
                let client = try FlagClient(configuration: configuration)
                clients.append(client)
                #expect(await client.ready(timeout: .patience))
            }

            // Each client opens 2, 3 and 4 sessions; each session reads new-checkout twice (the second read is
            // frozen) and dark-mode once. What they were served is what the server must count.
            var expected: [String: (total: Int, variants: [String: Int])] = [:]
            func served(_ flag: String, _ detail: EvaluationDetail<Bool>) {
                expected[flag, default: (0, [:])].total += 1
                expected[flag, default: (0, [:])].variants[detail.variant ?? "", default: 0] += 1
            }
            for (index, client) in clients.enumerated() {
                for unit in 0..<(index + 2) {
                    let session = client.session(
                        unitID: "u-\(index)-\(unit)", attributes: ["country": unit % 2 == 0 ? "DE" : "FR"])
                    served("new-checkout", session.detail(.newCheckout))
                    _ = session.value(.newCheckout)
                    served("dark-mode", session.detail(.darkMode))
                }
            }
            #expect(expected["new-checkout"]?.total == 9)
            #expect(expected["new-checkout"]?.variants["germany"] == 5)

            try await eventually("the server counted every evaluation") {
                guard let usage = try? await Self.usage(server) else { return false }
                return usage["new-checkout"]?.total == 9 && usage["dark-mode"]?.total == 9
            }
            // Later reports add nothing: no evaluation is counted twice.
            try await Task.sleep(for: .seconds(2))
            let usage = try await Self.usage(server)
            for flag in ["new-checkout", "dark-mode"] {
                #expect(usage[flag]?.total == expected[flag]?.total, "\(flag)")
                #expect(usage[flag]?.variants == expected[flag]?.variants, "\(flag)")
            }
            #expect(usage["unused"]?.total ?? 0 == 0)

            let answer = try await server.admin("GET", "/v1/admin/sets/tele/clients")
            try #require(answer.status == 200, "clients: \(answer.text)")
            guard case .array(let instances)? = try answer.json("instances") else {
                Issue.record("no instances in \(answer.text)")
                return
            }
            var apps: [String] = []
            for case .object(let instance) in instances {
                #expect(instance["sdk"] == .object(["name": .string("FlagClient"), "version": .string("2.0.0")]))
                #expect(instance["version"] == .int(1))
                if case .object(let app)? = instance["app"], case .string(let version)? = app["version"] {
                    apps.append(version)
                }
            }
            #expect(apps.sorted() == ["5.3.0", "5.3.1", "5.3.2"])
        }
    }
}
