import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// An encoded slash is not a path separator. `GET /v1%2Fadmin%2Fwhoami` once reached the admin
/// route, which a proxy rule written for `/v1/admin/` would not expect.
@Suite("an encoded slash is not a path separator")
struct EncodedSlashTests {
    @Test(.live) func overASocketTheRequestIsRefusedWith400() throws {
        try withLiveHarness(signed: false) { harness, live in
            for target in ["/v1%2Fadmin%2Fwhoami", "/v1/admin%2Fwhoami", "/v1/sets/ios-prod%2Fstream"] {
                let answer = try live.client().send("GET", target, token: harness.admin)
                #expect(answer.status == 400, "\(target): \(answer.status) \(answer.text)")
                #expect(answer.text.contains("%2F"))
            }
            #expect(try live.client().send("GET", "/v1/admin/whoami", token: harness.admin).status == 200)
        }
    }

    @Test func inProcessTheSlashStaysInsideItsSegmentAndNamesNoRoute() async throws {
        try await withHarness { harness in
            let answer = try harness.send("GET", "/v1%2Fadmin%2Fwhoami")
            #expect(answer.status == 404)
            #expect(try harness.send("GET", "/v1/sets/ios%2Dprod", token: harness.sdk).status == 200)
        }
    }
}
