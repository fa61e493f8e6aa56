import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// The auth matrix over every route of `Route.allCases`: who may call what, with the exact status of each.
@Suite("Security: the auth matrix over every route")
struct SecurityAuthMatrixTests {
    /// Who sends the request.
    enum Caller: String, CaseIterable, Sendable {
        case noToken, basicScheme, schemeOnly, tokenWithoutScheme, twoTokens, twoHeaders, wrongToken
        case revokedKey, otherSetKey, ownKey, environmentToken, admin

        /// The `Authorization` header, if any.
        func header(_ keys: Keys) -> String? {
            switch self {
            case .noToken: nil
            case .basicScheme: "Basic \(keys.admin)"
            case .schemeOnly: "Bearer"
            case .tokenWithoutScheme: keys.admin
            case .twoTokens: "Bearer \(keys.admin) \(keys.admin)"
            // Sent as two fields by `send`: the admin token first, then a wrong one.
            case .twoHeaders: "Bearer \(keys.admin)"
            // The admin token with its last digit changed: right length, right prefix, wrong secret.
            case .wrongToken: "Bearer \(keys.admin.dropLast())\(keys.admin.hasSuffix("0") ? "1" : "0")"
            case .revokedKey: "Bearer \(keys.revoked)"
            case .otherSetKey: "Bearer \(keys.otherSet)"
            case .ownKey: "Bearer \(keys.own)"
            case .environmentToken: "Bearer env-secret-token"
            case .admin: "Bearer \(keys.admin)"
            }
        }

        /// The status this caller must get on `route`.
        func expected(_ route: Route, _ sample: RouteSample) -> Int {
            if route == .health { return 200 }
            let isClientRoute = [.document, .stream, .oldVersion, .ofrepBulk, .ofrepFlag].contains(route)
            switch self {
            case .noToken, .basicScheme, .schemeOnly, .tokenWithoutScheme, .twoTokens, .twoHeaders, .wrongToken,
                .revokedKey:
                return 401
            case .otherSetKey: return isClientRoute ? sample.otherSetKey : 403
            case .ownKey: return isClientRoute ? 200 : 403
            case .environmentToken, .admin: return sample.success
            }
        }
    }

    /// The tokens of one harness: its admin token and SDK key, plus a revoked key and a key of `android-prod`.
    struct Keys {
        var admin: String
        var own: String
        var revoked: String
        var otherSet: String

        init(_ harness: AppHarness) throws {
            admin = harness.admin
            own = harness.sdk
            let tokens = harness.app.tokens
            revoked =
                try tokens.issue(
                    name: "ios-old", role: .sdk(set: "ios-prod"), note: ChangeNote(actor: "test", action: "key.create")
                ).token
            try tokens.revoke(name: "ios-old", set: "ios-prod", note: ChangeNote(actor: "test", action: "key.revoke"))
            otherSet =
                try tokens.issue(
                    name: "android-app", role: .sdk(set: "android-prod"),
                    note: ChangeNote(actor: "test", action: "key.create")
                ).token
        }
    }

    @Test func everyRouteHasASample() {
        let missing = Route.allCases.filter { RouteSample.all[$0] == nil }.map(\.rawValue)
        #expect(missing == [], "routes without an auth-matrix entry")
    }

    @Test func routeTemplatesAreWellFormed() {
        for route in Route.allCases {
            #expect(["GET", "PUT", "POST", "DELETE"].contains(route.method), "\(route.rawValue)")
            #expect(route.template.hasPrefix("/"), "\(route.rawValue)")
        }
        #expect(Set(Route.allCases.map(\.rawValue)).count == Route.allCases.count)
    }

    /// Every caller but the environment token on one harness, the admin last (it may change what the others saw);
    /// the refused callers must leave the store as it was.
    @Test(arguments: Route.allCases)
    func theMatrix(_ route: Route) async throws {
        let sample = try RouteSample.of(route)
        try await withHarness { harness in
            defer { harness.app.shutdown() }
            let keys = try Keys(harness)
            try sample.prepare(harness)
            let before = try harness.app.service.audit(nil, limit: 1000).count
            let versionBefore = harness.app.service.state("ios-prod")?.version
            let label = route.rawValue
            for caller in Caller.allCases where caller != .environmentToken {
                if caller == .admin {
                    #expect(try harness.app.service.audit(nil, limit: 1000).count == before, "refused callers wrote")
                    #expect(harness.app.service.state("ios-prod")?.version == versionBefore)
                }
                let successes = harness.app.metrics.requests(route: label, status: sample.success)
                var headers = caller.header(keys).map { [("Authorization", $0)] } ?? []
                if caller == .twoHeaders { headers.append(("Authorization", "Bearer \(keys.otherSet)")) }
                let response = try send(harness, route, sample, headers)
                let expected = caller.expected(route, sample)
                #expect(response.status == expected, "\(caller.rawValue) on \(label)")
                try Self.checkRefusal(response, expected: expected)
                if caller == .admin {
                    // The router named this very route: the sample reaches it, not some other one.
                    #expect(harness.app.metrics.requests(route: label, status: sample.success) == successes + 1)
                }
            }
        }
        // The environment token on a harness of its own: it is an admin token, so it may change the set too.
        try await withHarness { harness in
            defer { harness.app.shutdown() }
            try sample.prepare(harness)
            let response = try send(harness, route, sample, [("Authorization", "Bearer env-secret-token")])
            #expect(response.status == sample.success, "environment token on \(route.rawValue)")
        }
    }

    private func send(_ harness: AppHarness, _ route: Route, _ sample: RouteSample, _ headers: [(String, String)])
        throws -> TestResponse
    {
        try harness.send(String(route.method), sample.target, token: nil, headers: headers, body: sample.body)
    }

    /// A refusal has the error shape of SPEC §4 and, for a 401, the challenge.
    static func checkRefusal(_ response: TestResponse, expected: Int) throws {
        switch expected {
        case 401:
            #expect(try response.json("error.code") == .string("unauthorized"))
            #expect(response.header("WWW-Authenticate") == "Bearer realm=\"flagserver\"")
        case 403:
            #expect(try response.json("error.code") == .string("forbidden"))
        default: break
        }
    }

    /// A method the route does not have is refused before anything else happens, and never reaches a handler.
    @Test func aMethodARouteLacksIsRefused() async throws {
        try await withHarness { harness in
            for (method, target) in [
                ("PATCH", "/v1/admin/sets/ios-prod/flags/new-checkout"), ("GET", "/v1/admin/sets/ios-prod/rollback"),
                ("DELETE", "/v1/admin/sets"), ("POST", "/v1/admin/sets/ios-prod/flags/new-checkout"),
            ] {
                #expect(try harness.send(method, target).status == 405, "\(method) \(target)")
                let refused = try harness.send(method, target, token: harness.sdk)
                #expect(refused.status == 403, "SDK key: \(method) \(target)")
            }
            #expect(harness.app.metrics.requests(route: "unmatched", status: 405) == 4)
        }
    }
}
