import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

@Suite("Auth: bearer tokens, SDK key scope, first admin token")
struct AuthTests {
    enum Who: String, CaseIterable, Sendable {
        case nobody, wrong, basic, sdk, admin, env

        func header(_ harness: AppHarness) -> [(String, String)] {
            switch self {
            case .nobody: []
            case .wrong:
                [("Authorization", "Bearer fss_0000000000000000000000000000000000000000000000000000000000000000")]
            case .basic: [("Authorization", "Basic \(harness.admin)")]
            case .sdk: [("Authorization", "Bearer \(harness.sdk)")]
            case .admin: [("Authorization", "bearer \(harness.admin)")]
            case .env: [("Authorization", "Bearer env-secret-token")]
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var method: String
        var target: String
        var expected: [Who: Int]
        var testDescription: String { "\(method) \(target)" }
    }

    static let denied: [Who: Int] = [.nobody: 401, .wrong: 401, .basic: 401]
    static let cases: [Case] = [
        Case(method: "GET", target: "/healthz", expected: [.nobody: 200, .wrong: 200, .sdk: 200, .admin: 200]),
        Case(
            method: "GET", target: "/v1/sets/ios-prod",
            expected: denied.merging([.sdk: 200, .admin: 200, .env: 200]) { $1 }),
        Case(
            method: "GET", target: "/v1/sets/ios-prod/versions/1",
            expected: denied.merging([.sdk: 200, .admin: 200]) { $1 }),
        Case(
            method: "GET", target: "/v1/sets/android-prod", expected: denied.merging([.sdk: 403, .admin: 200]) { $1 }),
        Case(method: "GET", target: "/v1/sets/android-prod/stream", expected: denied.merging([.sdk: 403]) { $1 }),
        Case(
            method: "GET", target: "/v1/admin/sets",
            expected: denied.merging([.sdk: 403, .admin: 200, .env: 200]) { $1 }),
        Case(
            method: "GET", target: "/v1/admin/sets/ios-prod/flags",
            expected: denied.merging([.sdk: 403, .admin: 200]) { $1 }),
        Case(
            method: "POST", target: "/v1/admin/sets/ios-prod/flags/new-checkout/kill",
            expected: denied.merging([.sdk: 403, .admin: 200]) { $1 }),
        Case(method: "GET", target: "/metrics", expected: denied.merging([.sdk: 403, .admin: 200]) { $1 }),
    ]

    @Test(arguments: cases)
    func theAuthMatrix(_ route: Case) async throws {
        try await withHarness { harness in
            for (who, status) in route.expected.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                let response = try harness.send(route.method, route.target, token: nil, headers: who.header(harness))
                #expect(response.status == status, "\(who.rawValue) on \(route.testDescription)")
                if status == 401 {
                    #expect(try response.json("error.code") == .string("unauthorized"))
                    #expect(response.header("WWW-Authenticate") == "Bearer realm=\"flagserver\"")
                }
            }
        }
    }

    @Test func theEnvironmentTokenActsAsEnv() async throws {
        try await withHarness { harness in
            _ = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", token: "env-secret-token",
                body: #"{"reason":"ci"}"#)
            let audit = try harness.app.service.audit("ios-prod", limit: 1)
            #expect(audit.first?.actor == "env")
            #expect(audit.first?.reason == "ci")
        }
    }

    @Test func aRevokedKeyIsRefusedAtOnce() async throws {
        try await withHarness { harness in
            #expect(try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk).status == 200)
            let revoke = try harness.send("DELETE", "/v1/admin/sets/ios-prod/keys/ios-app?reason=leaked")
            #expect(revoke.status == 200)
            #expect(try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk).status == 401)
            #expect(try harness.send("DELETE", "/v1/admin/sets/ios-prod/keys/ios-app").status == 404)
            let reopened = InProcessClient(handler: try harness.reopened().handler)
            #expect(try reopened.send("GET", "/v1/sets/ios-prod", token: harness.sdk).status == 401)
        }
    }

    @Test func tokensAreStoredOnlyAsHashes() async throws {
        try await withHarness { harness in
            let stored = try harness.app.service.store.tokens.all()
            #expect(Set(stored.map(\.name)) == ["root", "ios-app"])
            #expect(stored.first { $0.name == "root" }?.hash == SHA256.hash(harness.admin))
            #expect(stored.first { $0.name == "ios-app" }?.role == .sdk(set: "ios-prod"))
            #expect(harness.admin.hasPrefix("fsa_") && harness.admin.count == 68)
            #expect(harness.sdk.hasPrefix("fss_") && harness.sdk.count == 68)
            let database =
                try String(contentsOfFile: harness.databasePath, encoding: .isoLatin1)
                + (try String(contentsOfFile: harness.databasePath + "-wal", encoding: .isoLatin1))
            #expect(!database.contains(harness.admin))
            #expect(!database.contains(String(harness.sdk.dropFirst(4))))
        }
    }

    @Test func theFirstStartWritesAnAdminTokenOnlyItsOwnerCanRead() throws {
        try withTemporaryDirectory { directory in
            let configuration = ServerConfiguration.test(in: directory)
            let clock = TestClock()
            let first = try ServerBootstrap.quiet(configuration, clock: clock)
            let file = try #require(first.adminTokenFile)
            #expect(file == configuration.adminTokenFile)
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let token = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines)
            #expect(try first.app.tokens.authenticate("Bearer \(token)").name == "admin")
            let second = try ServerBootstrap.quiet(configuration, clock: clock)
            #expect(second.adminTokenFile == nil)
            #expect(try second.app.tokens.authenticate("Bearer \(token)").name == "admin")
        }
    }

    @Test func anEnvironmentTokenMeansNoTokenFile() throws {
        try withTemporaryDirectory { directory in
            let configuration = ServerConfiguration.test(in: directory)
            let bootstrap = try ServerBootstrap.quiet(configuration, adminToken: environmentAdminToken)
            #expect(bootstrap.adminTokenFile == nil)
            #expect(!FileManager.default.fileExists(atPath: configuration.adminTokenFile))
            #expect(try bootstrap.app.tokens.authenticate("Bearer \(environmentAdminToken)").name == "env")
        }
    }
}
