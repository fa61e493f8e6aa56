import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// The auth matrix over every route of `Route.allCases`: who may call what, with the exact status of each. The
/// role each sample needs is written in `RouteSample.all`, apart from the route table, so that the table cannot
/// grant a role more than the contract says.
@Suite("Security: the auth matrix over every route")
struct SecurityAuthMatrixTests {
    /// Who sends the request.
    enum Caller: String, CaseIterable, Sendable {
        case noToken, basicScheme, schemeOnly, tokenWithoutScheme, twoTokens, twoHeaders, wrongToken
        case revokedKey, otherSetKey, ownKey
        case expiredAdmin, revokedAdmin, revokedPersonsSession
        case viewer, editor, editorSession, ownSetViewer, otherSetAdmin
        case environmentToken, admin, adminSession

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
            case .expiredAdmin: "Bearer \(keys.expiredAdmin)"
            case .revokedAdmin: "Bearer \(keys.revokedAdmin)"
            case .revokedPersonsSession: "Bearer \(keys.revokedPersonsSession)"
            case .viewer: "Bearer \(keys.viewer)"
            case .editor: "Bearer \(keys.editor)"
            case .editorSession: "Bearer \(keys.editorSession)"
            case .ownSetViewer: "Bearer \(keys.ownSetViewer)"
            case .otherSetAdmin: "Bearer \(keys.otherSetAdmin)"
            case .environmentToken: "Bearer env-secret-token"
            case .admin: "Bearer \(keys.admin)"
            case .adminSession: "Bearer \(keys.adminSession)"
            }
        }

        /// Whether the caller is a dashboard session (which sends no `Flagstaff-Confirm-Token` here).
        var isSession: Bool { self == .editorSession || self == .adminSession }

        /// The role and sets of a token of the admin API; `nil` for every other caller.
        var profile: (role: AdminRole, sets: Set<String>?)? {
            switch self {
            case .viewer: (.viewer, nil)
            case .editor, .editorSession: (.editor, nil)
            case .ownSetViewer: (.viewer, ["ios-prod"])
            case .otherSetAdmin: (.admin, ["android-prod"])
            case .environmentToken, .admin, .adminSession: (.admin, nil)
            default: nil
            }
        }

        /// The status this caller must get on `route`.
        func expected(_ route: Route, _ sample: RouteSample) -> Int {
            if sample.open { return sample.success }
            let isClientRoute = sample.role == nil
            switch self {
            case .noToken, .basicScheme, .schemeOnly, .tokenWithoutScheme, .twoTokens, .twoHeaders, .wrongToken,
                .revokedKey, .expiredAdmin, .revokedAdmin, .revokedPersonsSession:
                return 401
            case .otherSetKey: return isClientRoute ? sample.otherSetKey : 403
            case .ownKey: return isClientRoute ? sample.success : 403
            default: break
            }
            guard let (role, sets) = profile else { return 403 }
            let mayAccessSet = sets?.contains("ios-prod") ?? true
            guard let needed = sample.role else { return mayAccessSet ? sample.success : 403 }
            if role < needed { return 403 }
            if sample.unlimited && sets != nil { return 403 }
            if (sample.onSet || sample.forbidsOtherSets) && !mayAccessSet { return 403 }
            if sample.refusesSessions && isSession { return 403 }
            if sample.reauthenticates && isSession { return 403 }
            return sample.success
        }

        /// The `error.code` of this caller's refusal on `route`: `reauthentication_required` where only the person's
        /// own token is missing.
        func refusalCode(_ route: Route, _ sample: RouteSample) -> String {
            let status = expected(route, sample)
            var withoutReauthentication = sample
            withoutReauthentication.reauthenticates = false
            if status == 403, expected(route, withoutReauthentication) < 400 { return "reauthentication_required" }
            return status == 401 ? "unauthorized" : "forbidden"
        }
    }

    /// The tokens of one harness: its admin token and SDK key, a revoked key and a key of `android-prod`, and
    /// tokens of the admin API of every role, one limited to each set, an expired one and a revoked one.
    struct Keys {
        var admin: String
        var own: String
        var revoked: String
        var otherSet: String
        var expiredAdmin: String
        var revokedAdmin: String
        var revokedPersonsSession: String
        var viewer: String
        var editor: String
        var editorSession: String
        var adminSession: String
        var ownSetViewer: String
        var otherSetAdmin: String

        init(_ harness: AppHarness) throws {
            admin = harness.admin
            own = harness.sdk
            let tokens = harness.app.tokens
            let note = ChangeNote(actor: "test", action: "token.create")
            func make(_ name: String, _ role: TokenRole) throws -> String {
                let (token, _) = try tokens.issue(name: name, role: role, note: note)
                return token
            }
            revoked = try make("ios-old", .sdk(set: "ios-prod"))
            try tokens.revoke(name: "ios-old", set: "ios-prod", note: note)
            otherSet = try make("android-app", .sdk(set: "android-prod"))
            viewer = try make("vera", .admin(.viewer, sets: nil))
            editor = try make("eddie", .admin(.editor, sets: nil))
            ownSetViewer = try make("ivy", .admin(.viewer, sets: ["ios-prod"]))
            otherSetAdmin = try make("andy", .admin(.admin, sets: ["android-prod"]))
            func caller(_ token: String) throws -> AdminCaller {
                guard case .admin(let caller) = try tokens.authenticate("Bearer \(token)") else {
                    throw TestClientError(description: "not a token of the admin API")
                }
                return caller
            }
            editorSession = try tokens.startSession(for: try caller(editor), note: note).token
            adminSession = try tokens.startSession(for: try caller(admin), note: note).token
            expiredAdmin = TokenAuthority.generate(prefix: "fsa_")
            try tokens.save(
                token: expiredAdmin, name: "old-admin", role: .admin(.admin, sets: nil),
                expiresAt: harness.clock.now.addingTimeInterval(-1), note: note)
            revokedAdmin = try make("gone", .admin(.admin, sets: nil))
            revokedPersonsSession = try tokens.startSession(for: try caller(revokedAdmin), note: note).token
            try tokens.revoke(name: "gone", set: nil, note: note)
        }
    }

    @Test func everyRouteHasASample() {
        let missing = Route.allCases.filter { RouteSample.all[$0] == nil }.map(\.label)
        #expect(missing == [], "routes without an auth-matrix entry")
    }

    /// The route table asks a session for its person's own token exactly on the routes the contract names.
    @Test func theRoutesThatReauthenticateSessionsAreTheContractsOnes() throws {
        for route in Route.allCases {
            #expect(route.reauthenticatesSessions == (try RouteSample.of(route)).reauthenticates, "\(route.label)")
        }
    }

    @Test func routeTemplatesAreWellFormed() {
        for route in Route.allCases {
            #expect(["GET", "PUT", "POST", "DELETE"].contains(route.method), "\(route.label)")
            #expect(route.template.hasPrefix("/"), "\(route.label)")
        }
        #expect(Set(Route.allCases.map(\.label)).count == Route.allCases.count)
    }

    /// The refused callers on one harness, which must leave the store as it was; then each caller that may call
    /// the route on a harness of its own (a success may change what the next caller would meet).
    @Test(arguments: Route.allCases)
    func theMatrix(_ route: Route) async throws {
        let sample = try RouteSample.of(route)
        let label = route.label
        try await withHarness { harness in
            defer { harness.app.shutdown() }
            let keys = try Keys(harness)
            try sample.prepare(harness)
            let before = try harness.app.service.audit(nil, limit: 1000).count
            let versionBefore = harness.app.service.state("ios-prod")?.version
            for caller in Caller.allCases where caller.expected(route, sample) >= 400 {
                let response = try send(harness, route, sample, caller, keys)
                let expected = caller.expected(route, sample)
                #expect(response.status == expected, "\(caller.rawValue) on \(label)")
                try Self.checkRefusal(response, expected: expected, code: caller.refusalCode(route, sample))
            }
            #expect(try harness.app.service.audit(nil, limit: 1000).count == before, "refused callers wrote")
            #expect(harness.app.service.state("ios-prod")?.version == versionBefore)
        }
        for caller in Caller.allCases where caller.expected(route, sample) < 400 {
            try await withHarness { harness in
                defer { harness.app.shutdown() }
                let keys = try Keys(harness)
                try sample.prepare(harness)
                let successes = harness.app.metrics.requests(route: label, status: sample.success)
                let response = try send(harness, route, sample, caller, keys)
                #expect(response.status == caller.expected(route, sample), "\(caller.rawValue) on \(label)")
                // The router named this very route: the sample reaches it, not some other one.
                #expect(harness.app.metrics.requests(route: label, status: sample.success) == successes + 1)
            }
        }
    }

    /// Sends the sample as `caller`; a sample of a session's route goes with a session of the caller's token.
    private func send(
        _ harness: AppHarness, _ route: Route, _ sample: RouteSample, _ caller: Caller, _ keys: Keys
    ) throws -> TestResponse {
        guard var header = caller.header(keys) else { return try send(harness, route, sample, []) }
        if sample.asSession, caller.profile != nil, !caller.isSession {
            let started = try harness.send(
                "POST", "/v1/admin/sessions", token: nil, headers: [("Authorization", header)])
            header = "Bearer \(try #require(try started.json("token")?.text))"
        }
        var headers = [("Authorization", header)]
        if caller == .twoHeaders { headers.append(("Authorization", "Bearer \(keys.otherSet)")) }
        return try send(harness, route, sample, headers)
    }

    private func send(_ harness: AppHarness, _ route: Route, _ sample: RouteSample, _ headers: [(String, String)])
        throws -> TestResponse
    {
        try harness.send(
            String(route.method), try sample.target(in: harness), token: nil, headers: headers, body: sample.body)
    }

    /// A refusal has the error shape of SPEC §4 with `code` and, for a 401, the challenge.
    static func checkRefusal(_ response: TestResponse, expected: Int, code: String) throws {
        switch expected {
        case 401:
            #expect(try response.json("error.code") == .string(code))
            #expect(response.header("WWW-Authenticate") == "Bearer realm=\"flagserver\"")
        case 403:
            #expect(try response.json("error.code") == .string(code))
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
