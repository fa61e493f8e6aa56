import FlagCore
import Foundation
import Testing

@testable import FlagServer

/// Every mutation route leaves an audit record naming the actor (the token's name) and the reason given.
@Suite("Security: an audit record for every mutation route")
struct SecurityAuditTests {
    @Test func theSamplesNameAnActionExactlyForTheMutations() throws {
        for route in Route.allCases {
            let sample = try RouteSample.of(route)
            #expect((sample.action != nil) == route.isMutation, "\(route.label)")
        }
        #expect(Route.allCases.filter(\.isMutation).count == 47)
    }

    @Test(arguments: Route.allCases.filter(\.isMutation))
    func aMutationIsAudited(_ route: Route) async throws {
        let sample = try RouteSample.of(route)
        try await withHarness { harness in
            try sample.prepare(harness)
            // Records of sets created, of tokens and of sessions belong to no set.
            let set: String? = sample.onSet ? "ios-prod" : nil
            var token = harness.admin
            if sample.asSession {
                token = try #require(try harness.send("POST", "/v1/admin/sessions").json("token")?.text)
            }
            let before = try harness.app.service.audit(set, limit: 1000).count
            let reason = "audit-\(route)"
            let target = try sample.target(in: harness)
            let separator = target.contains("?") ? "&" : "?"
            let response = try harness.send(
                String(route.method), target + separator + "reason=\(reason)", token: token, body: sample.body)
            #expect(response.status == sample.success)

            let global = try harness.send("GET", "/v1/admin/audit?limit=1")
            let scoped = try harness.send("GET", "/v1/admin/sets/\(set ?? "ios-prod")/audit?limit=5")
            for listing in set == nil ? [global] : [global, scoped] {
                let records = try #require(try listing.json("records"))
                guard case .array(let items) = records, case .object(let newest)? = items.first else {
                    Issue.record("no audit records after \(route.label)")
                    continue
                }
                #expect(newest["actor"] == .string("root"), "\(route.label)")
                if route == .applyChange {
                    // The version a change request makes names its author and approvers before the reason given.
                    #expect(newest["reason"] == .string("Archive, proposed by pat, approved by root; \(reason)"))
                } else {
                    #expect(newest["reason"] == .string(reason), "\(route.label)")
                }
                #expect(newest["action"] == sample.action.map(JSONValue.string), "\(route.label)")
                // Keys, signing keys, settings and decisions on change requests make no version.
                let versionless: [Route] = [
                    .createKey, .revokeKey, .putSettings, .rotateSigningKey, .activateSigningKey, .retireSigningKey,
                    .approveChange, .rejectChange, .scheduleChange, .withdrawChange,
                ]
                if let set, !versionless.contains(route) {
                    let version = harness.app.service.state(set)?.version
                    #expect(newest["version"] == version.map { JSONValue.int(Int64($0)) }, "\(route.label)")
                }
            }
            #expect(try harness.app.service.audit(set, limit: 1000).count == before + 1, "one record per write")
        }
    }
}
