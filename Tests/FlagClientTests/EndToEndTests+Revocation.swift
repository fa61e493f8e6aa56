import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

extension EndToEndTests {
    /// Revoking the SDK key ends the client's open stream at once; the client reconnects, is refused with
    /// 401, stops, and keeps serving its last good set. A kill written after the revocation never reaches it.
    @Test func aRevokedKeyEndsTheStreamAndTheClientKeepsItsLastGoodSet() async throws {
        try await Self.withFixture { fixture in
            let logs = LogSink()
            let client = try fixture.client(cache: fixture.cache, logs: logs)
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience))
            #expect(client.state == .live(version: 1))

            let revoked = try await fixture.server.admin("DELETE", "/v1/admin/sets/e2e/keys/e2e-e2e")
            #expect(revoked.status == 200)
            try await eventually("the client is refused", timeout: .patience) {
                logs.messages.contains { $0.level == .error && $0.message.contains("HTTP 401") }
            }
            let killed = try await fixture.server.admin(
                "POST", "/v1/admin/sets/e2e/flags/new-checkout/kill", #"{"reason":"after the revocation"}"#)
            #expect(killed.status == 200)
            try await Task.sleep(nanoseconds: 300_000_000)
            let session = client.session(unitID: "u-1")
            #expect(session.detail(.newCheckout).value == true)
            #expect(session.detail(.newCheckout).version == 1)
            if case .stale = client.state {} else { Issue.record("state \(client.state), expected stale") }
            #expect(!logs.messages.contains { $0.message.contains(fixture.sdkKey) })
        }
    }
}
