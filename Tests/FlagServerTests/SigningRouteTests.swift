import FlagAPI
import FlagCore
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// Signed flag sets on the server (docs/signing.md): every document, old version, long-poll answer, `put`
/// and `patch` carries a signature a client checks with the set's published key; the bytes are signed once per
/// version and stored; keys rotate in two steps, each audited.
@Suite("Signed flag sets: the server", .live)
struct SigningRouteTests {
    /// The set's keys as the client route lists them, by id: to the SDK key for `ios-prod`, to the admin otherwise.
    private func keys(_ harness: AppHarness, set: String = "ios-prod") throws -> [String: (SigningKey, String)] {
        let token = set == "ios-prod" ? harness.sdk : harness.admin
        let listing = try harness.send("GET", "/v1/sets/\(set)/signing-keys", token: token)
        #expect(listing.status == 200)
        guard case .array(let items)? = try listing.json("keys") else { return [:] }
        var keys: [String: (SigningKey, String)] = [:]
        for item in items {
            guard case .object(let members) = item else { continue }
            #expect(Set(members.keys) == ["id", "publicKey", "state", "createdAt"])
            let key = try SigningKey(base64: try #require(members["publicKey"]?.text))
            #expect(members["id"]?.text == key.id)
            keys[key.id] = (key, try #require(members["state"]?.text))
        }
        return keys
    }

    /// Checks `signature` over `body` as a client of `set` would, with the key it names among `keys`; the key id.
    @discardableResult
    private func verify(
        _ signature: String?, body: [UInt8], set: String = "ios-prod", version: Int, base: Int? = nil,
        keys: [String: (SigningKey, String)]
    ) throws -> String {
        let parsed = try Signature(headerValue: try #require(signature, "no signature"))
        let key = try #require(keys[parsed.keyID]?.0, "signed by a key the set does not list")
        try key.verify(parsed, for: SignedMessage(set: set, version: version, baseVersion: base, body: body))
        return parsed.keyID
    }

    @Test func everyDocumentAnswerIsSignedByTheSetsActiveKey() async throws {
        try await withHarness { harness in
            let keys = try keys(harness)
            #expect(keys.count == 1 && keys.values.first?.1 == "active")
            let document = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            try verify(document.header("Flagstaff-Signature"), body: document.body, version: 1, keys: keys)
            // Another set has a key of its own, and its signature does not pass for this one.
            let other = try harness.send("GET", "/v1/sets/android-prod", token: harness.admin)
            #expect(try self.keys(harness, set: "android-prod").keys != keys.keys)
            #expect(throws: SigningError.self) {
                try verify(
                    other.header("Flagstaff-Signature"), body: other.body, version: 1,
                    keys: try self.keys(harness, set: "android-prod").merging(keys) { first, _ in first })
            }
            // One byte changed is refused.
            var tampered = document.body
            tampered[tampered.count / 2] ^= 0x01
            #expect(throws: SigningError.self) {
                try verify(document.header("Flagstaff-Signature"), body: tampered, version: 1, keys: keys)
            }

            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}")
            let current = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            try verify(current.header("Flagstaff-Signature"), body: current.body, version: 2, keys: keys)
            let old = try harness.send("GET", "/v1/sets/ios-prod/versions/1", token: harness.sdk)
            #expect(old.body == document.body)
            #expect(old.header("Flagstaff-Signature") == document.header("Flagstaff-Signature"))
            let again = try harness.send("GET", "/v1/sets/ios-prod/versions/2", token: harness.sdk)
            #expect(again.body == current.body)
            try verify(again.header("Flagstaff-Signature"), body: again.body, version: 2, keys: keys)
            // A 304 carries no body, so nothing to sign.
            let notModified = try harness.send(
                "GET", "/v1/sets/ios-prod", token: harness.sdk, headers: [("If-None-Match", "\"2\"")])
            #expect(notModified.status == 304 && notModified.header("Flagstaff-Signature") == nil)
        }
    }

    @Test func aLongPollsAnswerIsSigned() async throws {
        try await withHarness { harness in
            let keys = try keys(harness)
            let poll = harness.start(
                "GET", "/v1/sets/ios-prod?wait=30", token: harness.sdk, headers: [("If-None-Match", "\"1\"")])
            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}")
            #expect(await eventually { poll.response != nil })
            let answer = try #require(poll.response)
            #expect(answer.status == 200)
            try verify(answer.headers["Flagstaff-Signature"], body: answer.body, version: 2, keys: keys)
        }
    }

    @Test func theStreamsPutAndPatchesCarryASignatureLineBeforeTheirData() async throws {
        try await withHarness { harness in
            let keys = try keys(harness)
            let stream = harness.start("GET", "/v1/sets/ios-prod/stream", token: harness.sdk)
            let text = { String(decoding: stream.streamBody, as: UTF8.self) }
            // A kill that lands before the stream is open shows in its put, and no patch follows.
            #expect(await eventually { text().contains("event: put") })
            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}")
            #expect(await eventually { text().contains("event: patch") })
            let events = text().components(separatedBy: "\n\n").filter { !$0.isEmpty }
            #expect(events.count == 2)
            for (index, event) in events.enumerated() {
                let lines = event.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                #expect(lines.count == 4)
                #expect(lines[0] == (index == 0 ? "event: put" : "event: patch"))
                #expect(lines[1] == "id: \(index + 1)")
                #expect(lines[2].hasPrefix("signature: ") && lines[3].hasPrefix("data: "))
                let data = Array(lines[3].dropFirst("data: ".count).utf8)
                try verify(
                    String(lines[2].dropFirst("signature: ".count)), body: data, version: index + 1,
                    base: index == 0 ? nil : 1, keys: keys)
                if index == 1 { #expect(try SetPatch.decode(data).flags.keys.contains("new-checkout")) }
            }
            // A put's signature is the document's, and its data the document's bytes.
            let document = try harness.send("GET", "/v1/sets/ios-prod/versions/1", token: harness.sdk)
            #expect(events[0].contains("signature: \(document.header("Flagstaff-Signature") ?? "-")\n"))
        }
    }

    @Test func aWriteStoresItsSignedPatchAndTheDocumentIsSignedOnceAndKept() async throws {
        try await withHarness { harness in
            let store = harness.app.service.store
            let stream = harness.start("GET", "/v1/sets/ios-prod/stream", token: harness.sdk)
            let text = { String(decoding: stream.streamBody, as: UTF8.self) }
            #expect(await eventually { text().contains("event: put") })
            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}")
            // The patch is signed and stored with the version, and is what the stream got.
            let patch = try #require(try store.signing.body(set: "ios-prod", version: 2, .patch))
            #expect(await eventually { text().contains("event: patch") })
            #expect(
                text().contains(
                    "signature: \(patch.signature)\ndata: " + String(decoding: patch.bytes, as: UTF8.self) + "\n\n"))
            // The document is not made by the write: it is signed when first asked for, and stored.
            #expect(try store.signing.body(set: "ios-prod", version: 2, .document) == nil)
            let served = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            let document = try #require(try store.signing.body(set: "ios-prod", version: 2, .document))
            #expect(document.bytes == served.body)
            #expect(document.signature == served.header("Flagstaff-Signature"))

            // Another server (or a restart) serves the stored bytes, not its own assembly: here they are made to
            // differ, as a later software version's might.
            let stored = SignedBody(bytes: document.bytes + [0x20], signature: document.signature)
            try store.signing.updateKeys(
                set: "ios-prod", try store.signing.keys(set: "ios-prod"), resigned: (2, stored),
                audit: AuditEntry(time: Date(), actor: "test", action: "signing-key.test"))
            let restarted = try harness.reopened()
            let again = try InProcessClient(handler: restarted.handler).send(
                "GET", "/v1/sets/ios-prod", token: harness.sdk)
            #expect(again.body == stored.bytes)
            #expect(again.header("Flagstaff-Signature") == document.signature)
        }
    }

    @Test func anOldVersionOfASignedSetIsSignedWhenFirstAskedForAndKept() async throws {
        try await withHarness { harness in
            let keys = try keys(harness)
            let store = harness.app.service.store
            for action in ["kill", "restore", "kill"] {
                _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/\(action)", body: "{}")
            }
            // Version 2 was current for a moment: its document was signed in the background then, or is signed on
            // this request. Either way it verifies, is stored, and is the same bytes on every later request.
            let first = try harness.send("GET", "/v1/sets/ios-prod/versions/2", token: harness.sdk)
            try verify(first.header("Flagstaff-Signature"), body: first.body, version: 2, keys: keys)
            #expect(try store.signing.body(set: "ios-prod", version: 2, .document)?.bytes == first.body)
            let second = try harness.send("GET", "/v1/sets/ios-prod/versions/2", token: harness.sdk)
            #expect(
                second.body == first.body && second.header("Flagstaff-Signature") == first.header("Flagstaff-Signature")
            )
        }
    }

    @Test func aRotationPublishesThenSignsThenRetiresEachStepAudited() async throws {
        try await withHarness { harness in
            let first = try #require(try keys(harness).keys.first)
            let rotated = try harness.send("POST", "/v1/admin/sets/ios-prod/signing-keys?reason=yearly")
            #expect(rotated.status == 201)
            #expect(try rotated.json("state")?.text == "published")
            let second = try #require(try rotated.json("id")?.text)
            var keys = try keys(harness)
            #expect(keys[first]?.1 == "active" && keys[second]?.1 == "published")

            // Published only: new versions are still signed with the first key.
            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}")
            let v2 = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            #expect(try verify(v2.header("Flagstaff-Signature"), body: v2.body, version: 2, keys: keys) == first)

            // Activated: the current version is signed again with the new key, at once, and so is what follows.
            let activated = try harness.send("POST", "/v1/admin/sets/ios-prod/signing-keys/\(second)/activate")
            #expect(activated.status == 200)
            keys = try self.keys(harness)
            #expect(keys[first]?.1 == "published" && keys[second]?.1 == "active")
            let resigned = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            #expect(resigned.body == v2.body)
            #expect(
                try verify(resigned.header("Flagstaff-Signature"), body: resigned.body, version: 2, keys: keys)
                    == second)
            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/restore", body: "{}")
            let v3 = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            #expect(try verify(v3.header("Flagstaff-Signature"), body: v3.body, version: 3, keys: keys) == second)

            // The active key cannot be retired; the old one can, and stays listed as retired.
            let refused = try harness.send("POST", "/v1/admin/sets/ios-prod/signing-keys/\(second)/retire")
            #expect(refused.status == 400)
            #expect(try refused.json("error.message")?.text?.contains("activate another key") == true)
            #expect(try harness.send("POST", "/v1/admin/sets/ios-prod/signing-keys/\(first)/retire").status == 200)
            #expect(try self.keys(harness)[first]?.1 == "retired")
            let again = try harness.send("POST", "/v1/admin/sets/ios-prod/signing-keys/\(first)/activate")
            #expect(again.status == 400)
            let unknown = try harness.send("POST", "/v1/admin/sets/ios-prod/signing-keys/0123456789abcdef/activate")
            #expect(unknown.status == 404)

            let actions = try harness.app.service.audit("ios-prod", limit: 20).map(\.action)
            #expect(
                actions.filter { $0.hasPrefix("signing-key.") } == [
                    "signing-key.retire", "signing-key.activate", "signing-key.rotate",
                ])
            // Nothing the API answers holds a private key.
            let export = try harness.send("GET", "/v1/admin/sets/ios-prod")
            for answer in [rotated, activated, export] { #expect(!answer.text.contains("sealed")) }
        }
    }

    @Test func aServerWithoutAKeyEncryptionKeyServesUnsignedSetsAndSaysHowToSign() async throws {
        try await withHarness(signed: false) { harness in
            #expect(try keys(harness).isEmpty)
            let document = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            #expect(document.status == 200 && document.header("Flagstaff-Signature") == nil)
            let refused = try harness.send("POST", "/v1/admin/sets/ios-prod/signing-keys")
            #expect(refused.status == 503)
            #expect(try refused.json("error.message")?.text?.contains("--signing-key-file") == true)
        }
    }

    @Test func signingStartsOnAnUnsignedSetWithItsFirstKey() throws {
        try withTemporaryDirectory { directory in
            // Written unsigned, then opened by a server that has a key-encryption key, as after an upgrade.
            let unsigned = try AppHarness(directory: directory, signed: false)
            _ = try unsigned.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}")
            let store = try SQLiteFlagStore(path: unsigned.databasePath)
            let service = try FlagService(
                store: store, clock: unsigned.clock.clock, keyEncryptionKey: try KeyEncryptionKey.generate())
            #expect((try? service.servedDocument("ios-prod"))?.signature == nil)
            let key = try service.rotateSigningKey(
                "ios-prod", note: ChangeNote(actor: "root", action: "signing-key.rotate"))
            #expect(key.state == .active)
            let served = try service.servedDocument("ios-prod")
            let signature = try Signature(headerValue: try #require(served.signature))
            try key.key.verify(
                signature, for: SignedMessage(set: "ios-prod", version: 2, baseVersion: nil, body: served.bytes))
            // A version written before the set was signed is signed too, when first asked for.
            let old = try service.signedDocument("ios-prod", version: 1)
            try key.key.verify(
                try Signature(headerValue: try #require(old.signature)),
                for: SignedMessage(set: "ios-prod", version: 1, baseVersion: nil, body: old.document))
        }
    }

    @Test func aServerWithAnotherKeyEncryptionKeyServesWhatIsStoredButCannotWrite() async throws {
        try await withHarness { harness in
            let served = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            let store = try SQLiteFlagStore(path: harness.databasePath)
            let service = try FlagService(
                store: store, clock: harness.clock.clock, keyEncryptionKey: try KeyEncryptionKey.generate())
            #expect((try? service.servedDocument("ios-prod"))?.bytes == served.body)
            #expect((try? service.servedDocument("ios-prod"))?.signature == served.header("Flagstaff-Signature"))
            let refused = try #require(throws: ServiceError.self) {
                try service.mutateFlag("ios-prod", "new-checkout", note: ChangeNote(actor: "a", action: "flag.kill")) {
                    $0.killed = true
                }
            }
            #expect(refused.status == 503)
            #expect(refused.message.contains("cannot be opened with this server's key-encryption key"))
            #expect(service.state("ios-prod")?.version == 1)
        }
    }

    @Test func anotherServerServesTheStoredBytesAndSignaturesOfWhatOneWrote() async throws {
        try await withHarness { harness in
            let keys = try keys(harness)
            let opened = try harness.reopened()
            let sync = ReplicaSync(service: opened.service, tokens: opened.tokens, log: { _ in })
            let two = FlagServerApp(
                service: opened.service, tokens: opened.tokens, clock: harness.clock.clock, replicas: sync)
            let stream = InProcessClient(handler: two.handler).start(
                "GET", "/v1/sets/ios-prod/stream", headers: [("Authorization", "Bearer \(harness.sdk)")])
            let text = { String(decoding: stream.streamBody, as: UTF8.self) }
            #expect(await eventually { text().contains("event: put") })

            // One version behind: the stored patch, with its stored signature.
            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}")
            sync.setChanged("ios-prod", version: 2)
            let store = harness.app.service.store
            let patch = try #require(try store.signing.body(set: "ios-prod", version: 2, .patch))
            #expect(await eventually { text().contains("event: patch") })
            let patchData = "data: " + String(decoding: patch.bytes, as: UTF8.self) + "\n\n"
            #expect(text().contains("signature: \(patch.signature)\n" + patchData))
            // Both servers serve the one document kept in the store, whichever made it.
            let served = try two.service.servedDocument("ios-prod")
            let document = try #require(try store.signing.body(set: "ios-prod", version: 2, .document))
            #expect(served.bytes == document.bytes && served.signature == document.signature)
            #expect((try? harness.app.service.servedDocument("ios-prod"))?.signature == document.signature)

            // Two versions behind: no stored patch spans them, so the stream gets the signed document as a put.
            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/restore", body: "{}")
            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: "{}")
            sync.setChanged("ios-prod", version: 4)
            #expect(await eventually { text().contains("event: put\nid: 4\n") })
            let last = try #require(text().components(separatedBy: "event: put\nid: 4\n").last)
            let lines = last.split(separator: "\n").map(String.init)
            let data = Array(lines[1].dropFirst("data: ".count).utf8)
            try verify(String(lines[0].dropFirst("signature: ".count)), body: data, version: 4, keys: keys)
            #expect(data == (try store.signing.body(set: "ios-prod", version: 4, .document))?.bytes)
        }
    }
}
