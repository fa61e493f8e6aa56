import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// Two builds of an app against the real FlagServer, live on a free port: the older reads `checkout-theme` as an enum
/// of blue and green, the newer knows orange too. The server refuses to make the flag serve orange, naming the older
/// build; written anyway, the older build serves its compiled-in default and reports the mismatch.
@Suite("Enum flags end to end against a live FlagServer", .serialized, .live)
struct EnumLiveTests {
    static let document = """
        {"schema": 1, "set": "themes", "flags": {
          "checkout-theme": {"type": "string", "kind": "ops", "values": ["blue", "green", "orange"],
            "default": "green"}}}
        """

    /// URLSession, keeping each telemetry report the client sends.
    final class RecordingTransport: FlagTransport {
        private let real = URLSessionTransport()
        private let sent = Locked<[TelemetryReport]>([])

        var reports: [TelemetryReport] { sent.withLock { $0 } }

        func fetch(_ request: TransportRequest) async throws -> (head: TransportHead, body: [UInt8]) {
            if request.method == "POST", let body = request.body, let report = try? TelemetryReport.decode(body) {
                sent.withLock { $0.append(report) }
            }
            return try await real.fetch(request)
        }

        func stream(_ request: TransportRequest) -> AsyncThrowingStream<StreamPart, any Error> {
            real.stream(request)
        }
    }

    static func client(
        _ server: LiveFlagServer, sdkKey: String, app version: String, transport: any FlagTransport
    ) throws -> FlagClient {
        var configuration = FlagClient.Configuration(
            server: server.url, set: "themes", sdkKey: sdkKey, cacheDirectory: nil)
        configuration.environment = [:]
        configuration.telemetry = .every(seconds: 1)
        configuration.app = TelemetryReport.Software(name: "Shop", version: version)
        var dependencies = ClientDependencies.live()
        dependencies.transport = transport
        return try FlagClient(configuration: configuration, dependencies: dependencies)
    }

    /// The variants the server counted for `checkout-theme`, summed over the days it answers.
    static func variants(_ server: LiveFlagServer) async throws -> [String: Int] {
        let answer = try await server.admin("GET", "/v1/admin/sets/themes/usage?days=2&key=checkout-theme")
        try #require(answer.status == 200, "usage: \(answer.text)")
        var variants: [String: Int] = [:]
        guard case .array(let flags)? = try answer.json("flags") else { return [:] }
        for case .object(let flag) in flags {
            guard case .array(let days)? = flag["days"] else { continue }
            for case .object(let day) in days {
                guard case .object(let counted)? = day["variants"] else { continue }
                for case (let name, .int(let count)) in counted { variants[name, default: 0] += Int(count) }
            }
        }
        return variants
    }

    @Test func theGateNamesTheOlderBuildAndTheOlderBuildServesItsDefault() async throws {
        try await LiveFlagServer.withSet("themes", document: Self.document) { server, sdkKey, _ in
            let recording = RecordingTransport()
            let older = try Self.client(server, sdkKey: sdkKey, app: "5.2.0", transport: recording)
            defer { older.shutdown() }
            let newer = try Self.client(server, sdkKey: sdkKey, app: "5.3.0", transport: URLSessionTransport())
            defer { newer.shutdown() }
            #expect(await older.ready(timeout: .patience))
            #expect(await newer.ready(timeout: .patience))
            let newerKey = FlagKey("checkout-theme", default: NewerTheme.blue)
            #expect(older.session(unitID: "u-1").value(.theme) == .green)
            #expect(newer.session(unitID: "u-2").value(newerKey) == .green)

            // Both have said what they know.
            try await eventually("both instances report their values") {
                let clients = try? await server.admin("GET", "/v1/admin/sets/themes/clients?within=300")
                guard case .array(let instances)? = try? clients?.json("instances") else { return false }
                return instances.count == 2
                    && instances.allSatisfy { instance in
                        guard case .object(let members) = instance, case .object(let enums)? = members["enums"] else {
                            return false
                        }
                        return enums["checkout-theme"] != nil
                    }
            }

            let rules = "/v1/admin/sets/themes/flags/checkout-theme/rules"
            let orange = #"{"rule":{"name":"orange-for-all","conditions":[],"value":"orange"}}"#
            let refused = try await server.admin("POST", rules, orange)
            #expect(refused.status == 422)
            #expect(try refused.json("error.code") == .string("incompatible_clients"))
            guard case .string(let message)? = try refused.json("error.message") else {
                Issue.record("no message in \(refused.text)")
                return
            }
            #expect(
                message.hasPrefix(
                    #"value "orange" in flag "checkout-theme" is not known to 1 of 2 active instances (50.00 %): "#
                        + #"Shop 5.2.0 with FlagClient 2.0.0 (1); they will serve their compiled-in default "blue" "#
                        + "instead."),
                "\(message)")

            let forced = try await server.admin("POST", rules + "?allowIncompatible=true", orange)
            try #require(forced.status == 200, "\(forced.text)")
            guard case .int(let version)? = try forced.json("version") else {
                Issue.record("no version in \(forced.text)")
                return
            }
            try await eventually("both clients apply the write") {
                older.state == .live(version: Int(version)) && newer.state == .live(version: Int(version))
            }

            // The older build serves its compiled-in default, says why, and never traps; the newer one serves orange.
            let session = older.session(unitID: "u-3")
            #expect(session.value(.theme) == .blue)
            let detail = session.detail(.theme)
            #expect(detail.reason == .error)
            #expect(detail.errorCode == .typeMismatch)
            #expect(newer.session(unitID: "u-4").value(newerKey) == .orange)

            // Its telemetry says so: an ERROR without a variant, which the server counts under `""`.
            try await eventually("the older build reports the mismatch") {
                recording.reports.contains { $0.counts["checkout-theme"]?[""]?["ERROR"] == 1 }
            }
            #expect(
                recording.reports.last?.enums
                    == ["checkout-theme": .init(values: ["blue", "green"], defaultValue: "blue")])
            try await eventually("the server counted every read") {
                (try? await Self.variants(server)) == ["default": 2, "": 1, "orange-for-all": 1]
            }
        }
    }
}
