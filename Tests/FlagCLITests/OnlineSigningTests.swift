import FlagSigning
import FlagTestSupport
import Foundation
import Testing

/// `flagctl signing-key show|rotate|activate|retire`, `export --signed` and `verify`, against a real flagserver on
/// its embedded default, which makes its key-encryption key on first start and signs every new set.
@Suite("flagctl: signed flag sets", .live)
struct OnlineSigningTests {
    /// The set's keys as `signing-key show --json` prints them: id → (public key, state).
    private func keys(_ server: LiveServer) throws -> [String: (publicKey: String, state: String)] {
        let shown = try server.json(["signing-key", "show"])
        #expect(Array(shown.keys) == ["keys"])
        var keys: [String: (String, String)] = [:]
        for key in shown["keys"] as? [[String: Any]] ?? [] {
            #expect(Set(key.keys) == ["id", "publicKey", "state", "createdAt"])
            keys[key["id"] as? String ?? ""] = (key["publicKey"] as? String ?? "", key["state"] as? String ?? "")
        }
        return keys
    }

    @Test func anExportedSignedDocumentVerifiesOfflineAndATamperedOneDoesNot() throws {
        let server = try LiveServer()
        let keyFile = server.directory.url.appendingPathComponent("data/signing-key").path
        let mode = try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        let keys = try keys(server)
        #expect(keys.count == 1)
        let (id, key) = try #require(keys.first.map { ($0.key, $0.value) })
        #expect(key.state == "active")
        let table = try server.ctl(["signing-key", "show"])
        #expect(table.stdoutLines.first == "ID                STATE   CREATED               PUBLIC KEY", "\(table)")

        let file = server.workspace.url.appendingPathComponent("bootstrap.json").path
        let export = try server.ctl(["export", "--signed", file])
        #expect(export.status == 0, "\(export)")
        #expect(export.stdout.hasPrefix("wrote t version 1 to \(file) ("))
        // The exact bytes the server serves, not the pretty export.
        let served = try LiveClient(port: server.port).send("GET", "/v1/sets/t", token: server.token)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: file))) == served.body)
        let signature = try String(contentsOfFile: file + ".sig", encoding: .utf8)
        #expect(signature == served.header("Flagstaff-Signature"))

        let verified = try server.ctl(["verify", file, "--key", key.publicKey], set: nil)
        #expect(verified.status == 0, "\(verified)")
        #expect(verified.stdout == "verified: set t, version 1, signed by key \(id)\n")

        // One space more: the same JSON to a parser, but not the bytes that were signed.
        let original = try String(contentsOfFile: file, encoding: .utf8)
        try Data(original.replacingOccurrences(of: "\"schema\":1,", with: "\"schema\": 1,").utf8)
            .write(to: URL(fileURLWithPath: file))
        let tampered = try server.ctl(["verify", file, "--key", key.publicKey], set: nil)
        #expect(tampered.status == 1, "\(tampered)")
        #expect(tampered.stderr.contains("the signature does not match its bytes"), "\(tampered)")

        let other = try PrivateSigningKey.generate().signingKey
        let wrongKey = try server.ctl(["verify", file, "--key", other.base64], set: nil)
        #expect(wrongKey.status == 1)
        #expect(wrongKey.stderr.contains("signed by key \(id), which is not among the keys given"), "\(wrongKey)")
        let malformed = try server.ctl(["verify", file, "--key", String(key.publicKey.dropLast())], set: nil)
        #expect(malformed.status == 2, "\(malformed)")
        #expect(malformed.stderr.contains("--key number 1:"), "\(malformed)")
    }

    @Test func aRotationInTwoStepsMovesSigningToTheNewKey() throws {
        let server = try LiveServer()
        #expect(try server.ctl(["sets", "create", "t"]).status == 0)
        let first = try #require(try keys(server).first)
        let rotated = try server.ctl(["signing-key", "rotate", "--reason", "yearly"])
        #expect(rotated.status == 0, "\(rotated)")
        #expect(rotated.stdoutLines.first?.hasSuffix("published, not signing yet") == true, "\(rotated)")
        let second = try #require(try keys(server).first { $0.key != first.key })
        #expect(second.value.state == "published")

        // An older version exports signed as it was signed then, with the first key (what a build pinned to it
        // ships).
        let created = try server.ctl(["create", "k", "--type", "bool", "--default", "false", "--kind", "ops"])
        #expect(created.status == 0, "\(created)")
        let old = server.workspace.url.appendingPathComponent("v1.json").path
        let oldExport = try server.ctl(["export", "--signed", old, "--version", "1"])
        #expect(oldExport.status == 0, "\(oldExport)")
        #expect(try server.ctl(["verify", old, "--key", first.value.publicKey], set: nil).status == 0)

        let activated = try server.ctl(["signing-key", "activate", second.key, "--reason", "yearly"])
        #expect(activated.status == 0, "\(activated)")
        #expect(activated.stdoutLines.first == "set t: key \(second.key) signs now")
        let file = server.workspace.url.appendingPathComponent("t.json").path
        #expect(try server.ctl(["export", "--signed", file]).status == 0)
        #expect(try server.ctl(["verify", file, "--key", second.value.publicKey], set: nil).status == 0)
        #expect(try server.ctl(["verify", file, "--key", first.value.publicKey], set: nil).status == 1)
        #expect(try server.ctl(["export", "--signed", old, "--version", "1"]).status == 0)
        #expect(try server.ctl(["verify", old, "--key", first.value.publicKey], set: nil).status == 0)

        let retired = try server.ctl(["signing-key", "retire", first.key])
        #expect(retired.status == 0, "\(retired)")
        #expect(try keys(server)[first.key]?.state == "retired")
        let refused = try server.ctl(["signing-key", "retire", second.key])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("activate another key before retiring this one"), "\(refused)")
        let audit = try LiveClient(port: server.port).send("GET", "/v1/admin/sets/t/audit", token: server.token)
        let actions = audit.text.components(separatedBy: "\"action\":\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        let expected: [Substring] = ["signing-key.retire", "signing-key.activate", "flag.create", "signing-key.rotate"]
        #expect(actions.prefix(4) == expected[...], "\(audit.text)")
    }
}
