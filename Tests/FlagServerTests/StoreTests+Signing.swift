import FlagServer
import FlagTestSupport
import Foundation
import Testing

/// The signing part of the `FlagStore` contract (docs/signing.md), on every store (PostgreSQL when a cluster is
/// given): keys kept with their sealed private halves, a version's signed patch kept with the version, and its signed
/// document kept once, first come first kept.
extension StoreTests {
    private static func key(_ id: String, _ state: SigningKeyState, at step: Int) -> StoredSigningKey {
        StoredSigningKey(
            id: id, publicKey: Array(repeating: UInt8(step), count: 32), sealedPrivateKey: Array(id.utf8) + [0, 255],
            state: state, createdAt: time(step))
    }

    private static func signed(_ text: String) -> SignedBody {
        SignedBody(bytes: body(text), signature: "v1; sig=\(text)")
    }

    @Test(arguments: StoreKind.allCases)
    func aSignedSetKeepsItsKeysItsSignedPatchesAndOneDocumentPerVersion(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.createSets([
                SetCreation(
                    name: "ios", change: VersionChange(items: [.flag("a"): body("a1")]), digest: digest(1),
                    audit: audit("set.create", 1), signingKey: Self.key("k1", .active, at: 1)),
                SetCreation(
                    name: "web", change: VersionChange(items: [.flag("a"): body("a1")]), digest: digest(1),
                    audit: audit("set.create", 1)),
            ])
            #expect(try store.signing.keys(set: "ios") == [Self.key("k1", .active, at: 1)])
            #expect(try store.signing.keys(set: "web").isEmpty)
            #expect(try store.signing.body(set: "ios", version: 1, .document) == nil)

            _ = try store.append(
                set: "ios", base: 1, change: VersionChange(items: [.flag("a"): body("a2")]), digest: digest(2),
                audit: audit("flag.update", 2), signedPatch: Self.signed("patch2"))
            _ = try store.append(
                set: "web", base: 1, change: VersionChange(items: [.flag("a"): body("a2")]), digest: digest(2),
                audit: audit("flag.update", 2))
            #expect(try store.signing.body(set: "ios", version: 2, .patch) == Self.signed("patch2"))
            #expect(try store.signing.body(set: "web", version: 2, .patch) == nil)

            // The first document kept for a version stays: a second server making it gets the first one back.
            #expect(try store.signing.keepDocument(set: "ios", version: 2, Self.signed("doc2")) == Self.signed("doc2"))
            #expect(try store.signing.keepDocument(set: "ios", version: 2, Self.signed("doc2b")) == Self.signed("doc2"))
            #expect(try store.signing.body(set: "ios", version: 2, .document) == Self.signed("doc2"))
            #expect(throws: StoreError.self) {
                try store.signing.keepDocument(set: "ios", version: 9, Self.signed("x"))
            }

            // An activation replaces the keys and signs the current version again, with one audit record.
            let keys = [Self.key("k1", .published, at: 1), Self.key("k2", .active, at: 3)]
            let before = try store.auditLog.records(set: "ios", limit: 100).count
            try store.signing.updateKeys(
                set: "ios", keys, resigned: (2, Self.signed("doc2-k2")),
                audit: audit("signing-key.activate", 3, subject: "k2"))
            #expect(try store.signing.keys(set: "ios") == keys)
            #expect(try store.signing.body(set: "ios", version: 2, .document) == Self.signed("doc2-k2"))
            #expect(try store.signing.body(set: "ios", version: 2, .patch) == Self.signed("patch2"))
            let records = try store.auditLog.records(set: "ios", limit: 100)
            #expect(records.count == before + 1 && records.first?.action == "signing-key.activate")

            #expect(throws: StoreError.self) {
                try store.signing.updateKeys(set: "nope", keys, resigned: nil, audit: audit("signing-key.rotate", 4))
            }
            #expect(throws: StoreError.self) { try store.signing.keys(set: "nope") }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aVersionThatLosesTheRaceStoresNoSignedPatch(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.createSet(
                "ios", change: VersionChange(items: [.flag("a"): body("a1")]), digest: digest(1),
                audit: audit("set.create", 1))
            #expect(throws: StoreError.self) {
                try store.append(
                    set: "ios", base: 2, change: VersionChange(items: [.flag("a"): body("a3")]), digest: digest(3),
                    audit: audit("flag.update", 3), signedPatch: Self.signed("patch3"))
            }
            #expect(try store.signing.body(set: "ios", version: 3, .patch) == nil)
        }
    }
}
