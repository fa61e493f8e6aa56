import FlagServer
import FlagTestSupport
import Foundation
import Testing

/// The signing part of the `FlagStore` contract (docs/signing.md), on every store (PostgreSQL when a cluster is
/// given): keys kept with their sealed private halves, and each signed version's bytes kept with the version.
extension StoreTests {
    private static func key(_ id: String, _ state: SigningKeyState, at step: Int) -> StoredSigningKey {
        StoredSigningKey(
            id: id, publicKey: Array(repeating: UInt8(step), count: 32), sealedPrivateKey: Array(id.utf8) + [0, 255],
            state: state, createdAt: time(step))
    }

    @Test(arguments: StoreKind.allCases)
    func aSignedSetKeepsItsKeysAndEachVersionsSignedBytes(kind: StoreKind) throws {
        try kind.withStore { store in
            let first = SignedVersion(version: 1, document: body("doc1"), documentSignature: "v1; sig=1")
            try store.createSets([
                SetCreation(
                    name: "ios", change: VersionChange(items: [.flag("a"): body("a1")]), digest: digest(1),
                    audit: audit("set.create", 1), signingKey: Self.key("k1", .active, at: 1), signed: first),
                SetCreation(
                    name: "web", change: VersionChange(items: [.flag("a"): body("a1")]), digest: digest(1),
                    audit: audit("set.create", 1)),
            ])
            #expect(try store.signingKeys(set: "ios") == [Self.key("k1", .active, at: 1)])
            #expect(try store.signingKeys(set: "web").isEmpty)
            #expect(try store.signedVersion(set: "ios", 1) == first)
            #expect(try store.signedVersion(set: "web", 1) == nil)

            let second = SignedVersion(
                version: 2, document: body("doc2"), documentSignature: "v1; sig=2", patch: body("patch2"),
                patchSignature: "v1; sig=p2")
            _ = try store.append(
                set: "ios", base: 1, change: VersionChange(items: [.flag("a"): body("a2")]), digest: digest(2),
                audit: audit("flag.update", 2), signed: second)
            _ = try store.append(
                set: "web", base: 1, change: VersionChange(items: [.flag("a"): body("a2")]), digest: digest(2),
                audit: audit("flag.update", 2))
            #expect(try store.signedVersion(set: "ios", 2) == second)
            #expect(try store.signedVersion(set: "web", 2) == nil)

            // A rotation replaces the keys and signs the current version again, with one audit record.
            let keys = [Self.key("k1", .published, at: 1), Self.key("k2", .active, at: 3)]
            var resigned = second
            resigned.documentSignature = "v1; sig=2b"
            let before = try store.audit(set: "ios", limit: 100).count
            try store.updateSigningKeys(
                set: "ios", keys, resigned: resigned, audit: audit("signing-key.activate", 3, subject: "k2"))
            #expect(try store.signingKeys(set: "ios") == keys)
            #expect(try store.signedVersion(set: "ios", 2) == resigned)
            #expect(try store.signedVersion(set: "ios", 1) == first)
            let records = try store.audit(set: "ios", limit: 100)
            #expect(records.count == before + 1 && records.first?.action == "signing-key.activate")

            #expect(throws: StoreError.self) {
                try store.updateSigningKeys(set: "nope", keys, resigned: nil, audit: audit("signing-key.rotate", 4))
            }
            #expect(throws: StoreError.self) { try store.signingKeys(set: "nope") }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aVersionThatLosesTheRaceStoresNoSignedBytes(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.createSet(
                "ios", change: VersionChange(items: [.flag("a"): body("a1")]), digest: digest(1),
                audit: audit("set.create", 1))
            let stale = SignedVersion(version: 3, document: body("doc3"), documentSignature: "v1; sig=3")
            #expect(throws: StoreError.self) {
                try store.append(
                    set: "ios", base: 2, change: VersionChange(items: [.flag("a"): body("a3")]), digest: digest(3),
                    audit: audit("flag.update", 3), signed: stale)
            }
            #expect(try store.signedVersion(set: "ios", 3) == nil)
        }
    }
}
