import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

@Suite("FlagService: versions, validation, conflicts, restart", .live)
struct FlagServiceTests {
    @Test func aWriteMakesTheNextVersionWithTheChangedItemsOnly() async throws {
        try await withHarness { harness in
            let service = harness.app.service
            harness.clock.advance(seconds: 90)
            let result = try service.mutateFlag(
                "ios-prod", "new-checkout",
                note: ChangeNote(actor: "alice", action: "flag.kill", subject: "new-checkout", reason: "incident")
            ) {
                $0.killed = true
            }
            #expect(result.createdVersion)
            #expect(result.state.version == 2)
            #expect(result.state.updatedAt == harness.clock.now)
            let info = try service.store.version(set: "ios-prod", 2)
            #expect(info.changed == [.flag("new-checkout")])
            #expect(info.audit.actor == "alice")
            #expect(info.audit.reason == "incident")
            // The stored digest, kept up to date by the change alone, is the digest of every item.
            #expect(info.digest == result.state.digest.bytes)
            #expect(info.digest == ItemsDigest(result.state.items.map { (key: $0.key, value: $0.value) }).bytes)
            // The served document is the canonical encoding of the model.
            #expect(try service.servedDocument("ios-prod").bytes == result.state.compiled.flagSet.encoded())
        }
    }

    @Test func aWriteThatChangesNothingMakesNoVersion() async throws {
        try await withHarness { harness in
            let result = try harness.app.service.mutateFlag(
                "ios-prod", "new-checkout", note: ChangeNote(actor: "alice", action: "flag.restore")
            ) {
                $0.killed = false
            }
            #expect(!result.createdVersion)
            #expect(result.state.version == 1)
            #expect(try harness.app.service.store.sets().first { $0.name == "ios-prod" }?.version == 1)
        }
    }

    @Test func anInvalidSetIsRejectedWithEveryProblemsPath() async throws {
        try await withHarness { harness in
            let error = try #require(throws: ServiceError.self) {
                try harness.app.service.mutateFlag(
                    "ios-prod", "new-checkout", note: ChangeNote(actor: "alice", action: "x")
                ) { set in
                    set.defaultValue = .int(3)
                    set.rules.append(
                        Rule(name: "ghost", target: .cohort("nobody"), serve: .value(.bool(true))))
                }
            }
            #expect(error.status == 422)
            #expect(error.problems.map(\.path) == ["flags.new-checkout.default", "flags.new-checkout.rules[1].cohort"])
            #expect(harness.app.service.state("ios-prod")?.version == 1)
            #expect(harness.app.service.counters.invalid.load(ordering: .relaxed) == 1)
        }
    }

    @Test func aStaleIfMatchIsAConflictNamingTheCurrentVersion() async throws {
        try await withHarness { harness in
            let service = harness.app.service
            try service.mutateFlag("ios-prod", "new-checkout", ifMatch: 1, note: ChangeNote(actor: "a", action: "x")) {
                $0.killed = true
            }
            let error = try #require(throws: ServiceError.self) {
                try service.mutateFlag(
                    "ios-prod", "search-timeout-ms", ifMatch: 1, note: ChangeNote(actor: "b", action: "x")
                ) {
                    $0.defaultValue = .int(900)
                }
            }
            #expect(error.status == 409)
            #expect(error.currentVersion == 2)
        }
    }

    @Test func aRestartServesTheSameBytesAndKeepsVersionsAndAudit() async throws {
        try await withHarness { harness in
            let service = harness.app.service
            let version1 = try service.servedDocument("ios-prod").bytes
            harness.clock.advance(seconds: 61.7)
            try service.mutateFlag(
                "ios-prod", "new-checkout",
                note: ChangeNote(actor: "alice", action: "flag.kill", subject: "new-checkout", reason: "why")
            ) {
                $0.killed = true
            }
            let before = try #require(service.state("ios-prod"))
            let reopened = try harness.reopened()
            let after = try #require(reopened.service.state("ios-prod"))
            #expect(after.version == 2)
            #expect(try reopened.service.servedDocument("ios-prod").bytes == service.servedDocument("ios-prod").bytes)
            #expect(after.digest == before.digest)
            #expect(after.compiled.flag("new-checkout")?.killed == true)
            let audit = try reopened.service.audit("ios-prod", limit: 10)
            #expect(audit.first?.action == "flag.kill")
            #expect(audit.first?.reason == "why")
            #expect(audit.first?.version == 2)
            #expect(try reopened.service.document("ios-prod", version: 1) == version1)
        }
    }

    @Test func rollbackMakesANewVersionWithTheOldItems() async throws {
        try await withHarness { harness in
            let service = harness.app.service
            let v1 = try #require(service.state("ios-prod"))
            try service.mutateFlag("ios-prod", "new-checkout", note: ChangeNote(actor: "a", action: "x")) {
                $0.killed = true
            }
            try service.mutate("ios-prod", note: ChangeNote(actor: "a", action: "x")) { _ in
                SetEdit(flags: ["search-timeout-ms": nil])
            }
            let result = try service.rollback(
                "ios-prod", to: 1, ifMatch: 3, note: ChangeNote(actor: "a", action: "set.rollback"))
            #expect(result.state.version == 4)
            #expect(result.state.items == v1.items)
            let info = try service.store.version(set: "ios-prod", 4)
            #expect(info.changed == [.flag("new-checkout"), .flag("search-timeout-ms")])
            #expect(try service.history("ios-prod", subject: nil, limit: 10).map(\.version) == [4, 3, 2, 1])
        }
    }

    @Test func aPatchCarriesOnlyTheChangedItemsCanonicalBytes() async throws {
        try await withHarness { harness in
            let service = harness.app.service
            let old = try #require(service.state("ios-prod"))
            var set = old.compiled.flagSet
            set.flags["new-checkout"]?.killed = true
            set.cohorts.removeValue(forKey: "de")
            let change = SetState.change(from: old.items, to: SetState.items(of: set))
            let patch = SetPatch(version: 2, base: 1, changed: change).encoded()
            let flag = try #require(set.flags["new-checkout"]).encoded()
            let expected =
                #"{"version":2,"base":1,"flags":{"new-checkout":"# + String(decoding: flag, as: UTF8.self)
                + #"},"cohorts":{},"removed":{"flags":[],"cohorts":["de"]}}"#
            #expect(String(decoding: patch, as: UTF8.self) == expected)
        }
    }

    @Test func setsAreCreatedOnceWithValidNames() async throws {
        try await withHarness { harness in
            let service = harness.app.service
            #expect(throws: ServiceError.self) {
                try service.createSet("ios-prod", note: ChangeNote(actor: "a", action: "x"))
            }
            let bad = try #require(throws: ServiceError.self) {
                try service.createSet("Bad Name", note: ChangeNote(actor: "a", action: "x"))
            }
            #expect(bad.status == 400)
            let state = try service.createSet("web-prod", note: ChangeNote(actor: "a", action: "set.create"))
            #expect(state.version == 1)
            #expect(service.states().map(\.name) == ["android-prod", "ios-prod", "web-prod"])
        }
    }

    @Test func aKillCostsTheSameOnTenAndTenThousandFlags() async throws {
        // Unsigned sets: a signed set's write also assembles and signs its document (docs/signing.md).
        try await withHarness(signed: false) { harness in
            let service = harness.app.service
            var patches: [Int: [UInt8]] = [:]
            for count in [10, 10_000] {
                var document = FlagSet(name: "size-\(count)")
                for index in 0..<count {
                    let key = "flag-\(index)"
                    document.flags[key] = Flag(key: key, type: .bool, kind: .ops, defaultValue: .bool(false))
                }
                try service.createSet(
                    "size-\(count)", from: document, note: ChangeNote(actor: "a", action: "set.create"))
                let stream = harness.start("GET", "/v1/sets/size-\(count)/stream", token: harness.admin)
                // The put comes from the documents executor; a version published before it would be in the put.
                // Its bytes may arrive in more than one read: wait for the blank line that ends the event.
                #expect(
                    await eventually {
                        String(decoding: stream.streamBody, as: UTF8.self).hasSuffix("\n\n")
                    })
                let put = stream.streamBody.count
                let result = try service.mutateFlag(
                    "size-\(count)", "flag-7", note: ChangeNote(actor: "a", action: "flag.kill")
                ) {
                    $0.killed = true
                }
                #expect(
                    try service.store.version(set: "size-\(count)", result.state.version).changed == [.flag("flag-7")])
                harness.settle()
                patches[count] = Array(stream.streamBody.dropFirst(put))
            }
            let small = String(decoding: try #require(patches[10]), as: UTF8.self)
            #expect(small.hasPrefix("event: patch\nid: 2\ndata: {\"version\":2,\"base\":1,\"flags\":{\"flag-7\":"))
            #expect(patches[10] == patches[10_000])
        }
    }
}
