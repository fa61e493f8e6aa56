import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// `refresh()`, `suspend()` and `resume()` against the real FlagServer over real sockets (the fixture of
/// `EndToEndTests`).
@Suite("FlagClient's lifecycle against a live FlagServer", .serialized, .live)
struct LifecycleLiveTests {
    @Test func refreshIsLiveOn200And304AndFalseWhenTheServerIsDown() async throws {
        try await EndToEndTests.withFixture { fixture in
            let client = try fixture.client(cache: fixture.cache) { $0.refresh = .off }
            defer { client.shutdown() }
            #expect(await client.refresh())
            #expect(client.state == .live(version: 1))
            #expect(await client.refresh())  // a 304
            let changed = try await fixture.server.admin(
                "POST", "/v1/admin/sets/e2e/flags/max-items/default", #"{"value": 30}"#)
            #expect(changed.status == 200)
            #expect(await client.refresh())
            #expect(client.state == .live(version: 2))
            #expect(client.session(unitID: "u-1").value(.maxItems) == 30)
            fixture.server.stop()
            #expect(await client.refresh() == false)
        }
    }

    /// The server's count of open streams, from `/metrics`.
    static func openStreams(_ server: LiveFlagServer) async throws -> Int? {
        let metrics = try await server.admin("GET", "/metrics")
        let line = metrics.text.split(separator: "\n").first { $0.hasPrefix("flagserver_open_streams ") }
        return line.flatMap { Int($0.dropFirst("flagserver_open_streams ".count)) }
    }

    @Test func noStreamWhileSuspendedAndAKillMadeMeanwhileIsThereRightAfterResume() async throws {
        try await EndToEndTests.withFixture { fixture in
            let client = try fixture.client(cache: fixture.cache)
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            try await eventually("the stream is open", timeout: .patience) {
                (try? await Self.openStreams(fixture.server)) == 1
            }
            let open = client.session(unitID: "u-1")
            #expect(open.value(.newCheckout) == true)

            client.suspend()
            try await eventually("the stream is closed", timeout: .patience) {
                (try? await Self.openStreams(fixture.server)) == 0
            }
            let killed = try await fixture.server.admin(
                "POST", "/v1/admin/sets/e2e/flags/new-checkout/kill", #"{"reason": "incident"}"#)
            #expect(killed.status == 200)
            // Long enough for a reconnect after the backoff's first delay (at most 1.5 s), which must not happen.
            try await Task.sleep(for: .seconds(2))
            #expect(try await Self.openStreams(fixture.server) == 0)
            #expect(open.value(.newCheckout) == true)
            #expect(client.session(unitID: "u-2").value(.newCheckout) == true)

            client.resume()
            #expect(await client.ready(timeout: .patience))
            #expect(client.state == .live(version: 2))
            #expect(client.session(unitID: "u-3").detail(.newCheckout).reason == .disabled)
            #expect(open.value(.newCheckout) == false)
            try await eventually("the stream is open again", timeout: .patience) {
                (try? await Self.openStreams(fixture.server)) == 1
            }
        }
    }
}
