import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// Telemetry over the real URLSession transport, against a scripted HTTP server on a local socket.
@Suite(.live) struct TelemetryHTTPTests {
    /// The poll answer's id comes back on the next poll, and reports reach the server as a JSON `POST` with the SDK
    /// key, carrying the evaluations the client made.
    @Test func reportsAndTheInstanceIDTravelOverHTTP() async throws {
        let document = Docs.bytes(version: 3, Docs.flag("new-checkout", true))
        let server = try ScriptedHTTPServer { request in
            if request.method == "POST" { return .init(status: 204, headers: [:], chunks: []) }
            return .init(
                status: 200,
                headers: ["Content-Type": "application/json", "ETag": "\"3\"", "Flagstaff-Instance": "in_http"],
                chunks: [document])
        }
        defer { server.stop() }
        var configuration = FlagClient.Configuration(
            server: server.url, set: "ios-prod", sdkKey: "sdk-live", cacheDirectory: nil)
        configuration.refresh = .poll
        configuration.pollInterval = 1
        configuration.environment = [:]
        configuration.telemetry = .every(seconds: 1)
        configuration.app = TelemetryReport.Software(name: "Shop", version: "5.3.0")
        let client = try FlagClient(configuration: configuration)
        defer { client.shutdown() }
        #expect(await client.ready(timeout: .patience))
        for unit in 0..<3 { _ = client.session(unitID: "u-\(unit)").value(.newCheckout) }

        var counted = 0
        try await eventually("the three evaluations reported", timeout: .patience) {
            counted = server.received.filter { $0.method == "POST" }.compactMap { request in
                try? TelemetryReport.decode(request.body).counts["new-checkout"]?["default"]?["STATIC"]
            }.reduce(0, +)
            return counted >= 3
        }
        #expect(counted == 3)
        let polls = server.received.filter { $0.method == "GET" }
        #expect(polls.first?.headers["flagstaff-instance"] == "new")
        try await eventually("a second poll") {
            server.received.filter { $0.method == "GET" }.count >= 2
        }
        #expect(server.received.filter { $0.method == "GET" }[1].headers["flagstaff-instance"] == "in_http")
        let post = try #require(server.received.first { $0.method == "POST" })
        #expect(post.path == "/v1/sets/ios-prod/telemetry")
        #expect(post.headers["authorization"] == "Bearer sdk-live")
        #expect(post.headers["content-type"] == "application/json")
        let report = try TelemetryReport.decode(post.body)
        #expect(report.instance == "in_http")
        #expect(report.sdk == FlagClient.sdk)
        #expect(report.app == TelemetryReport.Software(name: "Shop", version: "5.3.0"))
        #expect(report.version == 3)
        #expect(report.capabilities == .current)
    }

    /// The app's name and version come from the bundle's Info.plist when it names both.
    @Test func theAppComesFromTheBundle() {
        #expect(
            FlagClient.app(infoDictionary: ["CFBundleName": "Shop", "CFBundleShortVersionString": "5.3.0"])
                == TelemetryReport.Software(name: "Shop", version: "5.3.0"))
        #expect(FlagClient.app(infoDictionary: ["CFBundleName": "Shop"]) == nil)
        #expect(FlagClient.app(infoDictionary: nil) == nil)
        #expect(
            FlagClient.app(
                infoDictionary: ["CFBundleName": String(repeating: "x", count: 300), "CFBundleShortVersionString": "1"])
                == nil)
        // The server refuses control characters: they are sent escaped, as flagctl shows them.
        #expect(
            FlagClient.app(infoDictionary: ["CFBundleName": "Sh\u{1B}op", "CFBundleShortVersionString": "5\u{9B}"])
                == TelemetryReport.Software(name: #"Sh\eop"#, version: #"5\u009b"#))
    }
}
