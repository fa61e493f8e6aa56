import FlagClient
import FlagCore
import FlagDebugMenu
import FlagTestSupport
import Foundation
import Observation
import Testing

/// The model over a client of the real FlagServer, live on a free port with its own data directory: it follows the
/// client's state as the server changes the set and then goes away.
@MainActor
@Suite("FlagDebugModel against a live FlagServer", .serialized, .live)
struct FlagDebugModelLiveTests {
    @Test func followsTheClientsStateAndNotifiesObservers() async throws {
        let data = try TemporaryDirectory()
        let cache = try TemporaryDirectory()
        let server = try await offThePool { [data] in try LiveFlagServer(dataDirectory: data.url) }
        defer { server.stop() }
        let sdkKey = try await server.createSet("ios-prod", document: LiveFlagServer.iosProd)
        var configuration = FlagClient.Configuration(
            server: server.url, set: "ios-prod", sdkKey: sdkKey, cacheDirectory: cache.url)
        configuration.environment = [:]
        configuration.telemetry = .off
        let client = try FlagClient(configuration: configuration)
        defer { client.shutdown() }
        let model = FlagDebugModel(
            client: client, keys: [AnyFlagKey(AppFlags.newCheckout), AnyFlagKey(AppFlags.maxItems)],
            context: germanUser)

        try await until("the model shows the client live", model) { model.state == .live(version: 1) }
        #expect(model.stateText == "live: version 1, confirmed by the server")
        #expect(model.version == 1)
        #expect(model.lastUpdate != nil)
        #expect(model.server == server.url.absoluteString)
        #expect(model.rows.first { $0.key == "new-checkout" }?.value == "true")
        #expect(!model.diagnostics.contains(sdkKey))

        // A kill is a new version: the state changes, observers hear of it, and the rows show the kill value.
        let stateChanges = Counter()
        withObservationTracking {
            _ = model.state
        } onChange: {
            stateChanges.add()
        }
        let killed = try await server.admin(
            "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", #"{"reason": "incident"}"#)
        #expect(killed.status == 200)
        try await until("the model shows version 2", model) { model.state == .live(version: 2) }
        #expect(stateChanges.value == 1)
        let newCheckout = try #require(model.rows.first { $0.key == "new-checkout" })
        #expect(newCheckout.value == "false" && newCheckout.reason == "DISABLED" && newCheckout.version == 2)

        // The server goes away: the client goes stale, and so does the model, still naming the version it serves.
        withObservationTracking {
            _ = model.state
        } onChange: {
            stateChanges.add()
        }
        server.stop()
        try await until("the model shows the client stale", model) {
            if case .stale = model.state { true } else { false }
        }
        #expect(stateChanges.value == 2)
        #expect(model.version == 2)
        #expect(model.stateText.hasPrefix("stale: the connection failed at "))
        #expect(model.stateText.hasSuffix("; serving version 2"))
    }

    @Test func refreshesNowAndSaysWhetherTheServerWasReached() async throws {
        let data = try TemporaryDirectory()
        let server = try await offThePool { [data] in try LiveFlagServer(dataDirectory: data.url) }
        defer { server.stop() }
        let sdkKey = try await server.createSet("ios-prod", document: LiveFlagServer.iosProd)
        var configuration = FlagClient.Configuration(
            server: server.url, set: "ios-prod", sdkKey: sdkKey, cacheDirectory: nil)
        configuration.environment = [:]
        configuration.telemetry = .off
        configuration.refresh = .off  // no loop: only the menu's refresh reaches the server
        let client = try FlagClient(configuration: configuration)
        defer { client.shutdown() }
        let model = FlagDebugModel(client: client, keys: [AnyFlagKey(AppFlags.maxItems)])
        #expect(model.state == .defaultsOnly)
        #expect(model.stateText == "defaults only: no flag set yet, every flag serves its compiled-in default")
        #expect(model.version == nil && model.lastUpdate == nil)
        #expect(model.rows.map(\.value) == ["10"])
        #expect(model.refreshResult == nil)

        let stateChanges = Counter()
        withObservationTracking {
            _ = model.state
        } onChange: {
            stateChanges.add()
        }
        #expect(await model.refresh())
        #expect(stateChanges.value == 1)
        #expect(model.state == .live(version: 1))
        #expect(model.rows.map(\.key) == ["max-items", "new-checkout"])
        #expect(model.rows.map(\.value) == ["20", "true"])
        #expect(model.refreshResult == "refreshed: live, version 1")
        #expect(!model.isRefreshing)

        server.stop()
        #expect(await model.refresh() == false)
        #expect(model.refreshResult?.hasPrefix("the refresh did not reach the server; ") == true)
        #expect(model.rows.map(\.value) == ["20", "true"])
    }
}

/// Polls `condition` on the main actor (the model's) until it holds, or throws `TimedOut` naming `what` and the state
/// `model` shows once `.patience` has passed.
@MainActor
func until(_ what: String, _ model: FlagDebugModel, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .patience
    while !condition() {
        guard ContinuousClock.now < deadline else {
            throw TimedOut(
                "timed out after \(Duration.patience) waiting for: \(what); the model shows \(model.stateText)")
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
