import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// `PUT /v1/admin/sets/{set}` on a set that does not exist creates it, so it needs what
/// `POST /v1/admin/sets` needs. An editor could create sets this way.
@Suite("importing a set that does not exist needs the right to create sets")
struct ImportCreatesSetTests {
    private static let body = #"{"document":{"schema":1,"flags":{"f":{"type":"bool","default":false}}}}"#

    private func token(_ harness: AppHarness, _ name: String, _ role: AdminRole, sets: [String]? = nil) throws
        -> String
    {
        try harness.app.tokens.issue(
            name: name, role: .admin(role, sets: sets), note: ChangeNote(actor: "test", action: "token.create")
        ).token
    }

    @Test func anEditorMayImportIntoASetButNotCreateOne() async throws {
        try await withHarness { harness in
            let editor = try token(harness, "ed", .editor)
            let refused = try harness.send("PUT", "/v1/admin/sets/fresh", token: editor, body: Self.body)
            #expect(refused.status == 403)
            #expect(refused.text.contains("POST /v1/admin/sets"))
            #expect(harness.app.service.state("fresh") == nil)
            // Into a set that exists, as before.
            let replaced = try harness.send("PUT", "/v1/admin/sets/android-prod", token: editor, body: Self.body)
            #expect(replaced.status == 200)
            // A dry run writes nothing, and stays a viewer's.
            let dryRun = #"{"dryRun":true,"document":{"schema":1,"flags":{}}}"#
            #expect(try harness.send("PUT", "/v1/admin/sets/fresh", token: editor, body: dryRun).status == 200)
        }
    }

    @Test func anAdminLimitedToSetsMayNotCreateOneEither() async throws {
        try await withHarness { harness in
            let limited = try token(harness, "lim", .admin, sets: ["fresh"])
            #expect(try harness.send("PUT", "/v1/admin/sets/fresh", token: limited, body: Self.body).status == 403)
            #expect(
                try harness.send("POST", "/v1/admin/sets", token: limited, body: #"{"name":"fresh"}"#).status == 403)
        }
    }

    @Test func anUnlimitedAdminCreatesItByImport() async throws {
        try await withHarness { harness in
            let created = try harness.send("PUT", "/v1/admin/sets/fresh", body: Self.body)
            #expect(created.status == 201)
            #expect(harness.app.service.state("fresh")?.version == 1)
        }
    }
}
