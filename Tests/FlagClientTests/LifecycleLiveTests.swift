import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// `refresh()`, `suspend()` and `resume()` against the real FlagServer over real sockets (the fixture of
/// `EndToEndTests`).
@Suite("FlagClient's lifecycle against a live FlagServer", .serialized)
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
}
