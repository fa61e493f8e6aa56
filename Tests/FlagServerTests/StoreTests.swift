import FlagAPI
import FlagServer
import FlagTestSupport
import Foundation
import Testing

@Suite("FlagStore contract")
struct StoreTests {
    /// Five versions: replace, add, remove, change a cohort, and re-add what was removed.
    private static let changes: [[ItemKey: [UInt8]?]] = [
        [.flag("a"): body("a1"), .flag("b"): body("b1"), .cohort("beta"): body("beta1")],
        [.flag("a"): body("a2"), .flag("d"): body("d1")],
        [.flag("b"): nil],
        [.cohort("beta"): body("beta2"), .flag("d"): nil],
        [.flag("b"): body("b2")],
    ]

    /// What each version must contain, written out by hand.
    private static let expectedItems: [[ItemKey: [UInt8]]] = [
        [.flag("a"): body("a1"), .flag("b"): body("b1"), .cohort("beta"): body("beta1")],
        [.flag("a"): body("a2"), .flag("b"): body("b1"), .cohort("beta"): body("beta1"), .flag("d"): body("d1")],
        [.flag("a"): body("a2"), .cohort("beta"): body("beta1"), .flag("d"): body("d1")],
        [.flag("a"): body("a2"), .cohort("beta"): body("beta2")],
        [.flag("a"): body("a2"), .cohort("beta"): body("beta2"), .flag("b"): body("b2")],
    ]

    /// Creates `ios` from `changes[0]` and appends the others, version n at step n.
    static func fill(_ store: any FlagStore) throws {
        try store.createSet(
            "ios", change: VersionChange(items: changes[0]), digest: digest(1), audit: audit("set.create", 1)
        )
        for (offset, change) in changes.enumerated().dropFirst() {
            let version = offset + 1
            let subject = change.keys.sorted().first?.key
            let info = try store.append(
                set: "ios", base: version - 1, change: VersionChange(items: change), digest: digest(version),
                audit: audit("flag.update", version, subject: subject, reason: "step \(version)")
            )
            #expect(info.version == version)
            #expect(info.audit.version == version)
            #expect(info.changed == change.keys.sorted())
        }
    }

    @Test(arguments: StoreKind.allCases)
    func everyVersionIsRebuiltExactly(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.fill(store)
            for (offset, items) in Self.expectedItems.enumerated() {
                let version = offset + 1
                let snapshot = try store.snapshot(set: "ios", version: version)
                let expected = Snapshot(
                    set: "ios", version: version, createdAt: time(version), items: items, digest: digest(version)
                )
                #expect(snapshot == expected)
            }
            #expect(try store.snapshot(set: "ios", version: nil) == store.snapshot(set: "ios", version: 5))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aVersionTellsWhatItChangedAndWhoDidIt(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.fill(store)
            let third = try store.version(set: "ios", 3)
            #expect(third.changed == [.flag("b")])
            #expect(third.createdAt == time(3))
            #expect(third.digest == digest(3))
            let expected = AuditEntry(
                time: time(3), actor: "alice", action: "flag.update", subject: "b", reason: "step 3", version: 3)
            #expect(third.audit == expected)
            #expect(try store.version(set: "ios", 1).changed == [.cohort("beta"), .flag("a"), .flag("b")])
            #expect(try store.version(set: "ios", 4).changed == [.cohort("beta"), .flag("d")])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aRemovedItemCanComeBack(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.createSet(
                "s", change: .init(items: [.flag("x"): body("x1")]), digest: digest(1), audit: audit("c", 1)
            )
            _ = try store.append(
                set: "s", base: 1, change: .init(items: [.flag("x"): nil]), digest: digest(2),
                audit: audit("flag.delete", 2))
            _ = try store.append(
                set: "s", base: 2, change: .init(items: [.flag("x"): body("x2")]), digest: digest(3),
                audit: audit("flag.create", 3))
            #expect(try store.snapshot(set: "s", version: 1).items == [.flag("x"): body("x1")])
            #expect(try store.snapshot(set: "s", version: 2).items == [:])
            #expect(try store.snapshot(set: "s", version: 3).items == [.flag("x"): body("x2")])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aStaleBaseConflictsWithTheCurrentVersion(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.fill(store)
            for base in [4, 1, 9] {
                let error = #expect(throws: StoreError.self) {
                    try store.append(
                        set: "ios", base: base, change: .init(items: [.flag("z"): body("z")]),
                        digest: digest(6), audit: audit("flag.create", 6))
                }
                #expect(error?.isConflict == true)
                #expect(error?.currentVersion == 5)
            }
            // Nothing of the refused writes was kept.
            #expect(try store.sets().map(\.version) == [5])
            #expect(try store.auditLog.records(set: "ios", limit: 100).count == 5)
            #expect(try store.snapshot(set: "ios", version: nil).items[.flag("z")] == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func missingSetsAndVersionsAreNotFound(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.fill(store)
            let calls: [() throws -> Void] = [
                { _ = try store.snapshot(set: "android", version: nil) },
                { _ = try store.snapshot(set: "ios", version: 6) },
                { _ = try store.snapshot(set: "ios", version: 0) },
                { _ = try store.version(set: "ios", 6) },
                { _ = try store.history(set: "android", subject: nil, limit: 10) },
                { _ = try store.auditLog.records(set: "android", limit: 10) },
                { try store.auditLog.record(audit("key.create", 9), set: "android") },
                {
                    _ = try store.append(
                        set: "android", base: 1, change: .init(), digest: digest(2), audit: audit("x", 9)
                    )
                },
            ]
            for call in calls {
                let error = #expect(throws: StoreError.self) { try call() }
                #expect(error?.isNotFound == true, "\(String(describing: error))")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aSetIsCreatedOnce(kind: StoreKind) throws {
        try kind.withStore { store in
            let created = try store.createSet(
                "web", change: .init(items: [.flag("a"): body("a"), .flag("gone"): nil]), digest: digest(1),
                audit: audit("set.create", 1, subject: "web")
            )
            #expect(created.version == 1)
            #expect(created.changed == [.flag("a")])
            let error = #expect(throws: StoreError.self) {
                try store.createSet("web", change: .init(), digest: digest(1), audit: audit("set.create", 2))
            }
            #expect(error?.isAlreadyExists == true)
            try store.createSet("api", change: .init(), digest: digest(1), audit: audit("set.create", 3))
            let expected = [
                StoredSet(name: "api", version: 1, updatedAt: time(3)),
                StoredSet(name: "web", version: 1, updatedAt: time(1)),
            ]
            #expect(try store.sets() == expected)
            #expect(try store.snapshot(set: "api", version: nil).items == [:])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func historyIsNewestFirstAndFiltersBySubject(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.fill(store)
            #expect(try store.history(set: "ios", subject: nil, limit: 10).map(\.version) == [5, 4, 3, 2, 1])
            #expect(try store.history(set: "ios", subject: nil, limit: 2).map(\.version) == [5, 4])
            // "b" changed in versions 1, 3 and 5; "d" in 2 and 4 (the audit subject of version 4 is "beta").
            #expect(try store.history(set: "ios", subject: "b", limit: 10).map(\.version) == [5, 3, 1])
            #expect(try store.history(set: "ios", subject: "d", limit: 10).map(\.version) == [4, 2])
            #expect(try store.history(set: "ios", subject: "b", limit: 1).map(\.version) == [5])
            #expect(try store.history(set: "ios", subject: "nothing", limit: 10) == [])
            // A subject named only by an audit record also selects its version.
            _ = try store.append(
                set: "ios", base: 5, change: .init(), digest: digest(6),
                audit: audit("set.touch", 6, subject: "release-2"))
            #expect(try store.history(set: "ios", subject: "release-2", limit: 10).map(\.version) == [6])
            let newest = try #require(try store.history(set: "ios", subject: nil, limit: 1).first)
            #expect(newest == (try store.version(set: "ios", 6)))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theAuditLogKeepsEveryActionNewestFirst(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.fill(store)
            try store.createSet("web", change: .init(), digest: digest(1), audit: audit("set.create", 6))
            try store.auditLog.record(audit("key.create", 7, subject: "ios-key"), set: "ios")
            try store.auditLog.record(audit("server.start", 8), set: nil)

            let ios = try store.auditLog.records(set: "ios", limit: 100)
            #expect(ios.map(\.action) == ["key.create"] + Array(repeating: "flag.update", count: 4) + ["set.create"])
            #expect(ios.map(\.version) == [nil, 5, 4, 3, 2, 1])
            #expect(try store.auditLog.records(set: "web", limit: 100).map(\.action) == ["set.create"])
            let all = try store.auditLog.records(set: nil, limit: 3)
            #expect(
                all == [
                    audit("server.start", 8), audit("key.create", 7, subject: "ios-key"),
                    AuditEntry(time: time(6), actor: "alice", action: "set.create", version: 1),
                ])
            #expect(try store.auditLog.records(set: nil, limit: 100).count == 8)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func tokensAreAddedListedAndRevoked(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.createSet("ios", change: .init(), digest: digest(1), audit: audit("set.create", 1))
            let admin = StoredToken(
                name: "bootstrap", hash: digest(100), role: .admin(.admin, sets: nil), createdAt: time(2))
            let sdk = StoredToken(name: "ios-app", hash: digest(101), role: .sdk(set: "ios"), createdAt: time(3))
            try store.tokens.add(admin, audit: audit("token.create", 2, subject: "bootstrap"))
            try store.tokens.add(sdk, audit: audit("key.create", 3, subject: "ios-app"))
            #expect(try store.tokens.all() == [admin, sdk])

            let sameName = #expect(throws: StoreError.self) {
                try store.tokens.add(
                    StoredToken(
                        name: "ios-app", hash: digest(102), role: .admin(.admin, sets: nil), createdAt: time(4)),
                    audit: audit("key.create", 4))
            }
            #expect(sameName?.isAlreadyExists == true)
            let sameSecret = #expect(throws: StoreError.self) {
                try store.tokens.add(
                    StoredToken(name: "other", hash: digest(100), role: .admin(.admin, sets: nil), createdAt: time(4)),
                    audit: audit("key.create", 4))
            }
            #expect(sameSecret?.isAlreadyExists == true)
            let noSet = #expect(throws: StoreError.self) {
                try store.tokens.add(
                    StoredToken(name: "web", hash: digest(103), role: .sdk(set: "web"), createdAt: time(4)),
                    audit: audit("key.create", 4)
                )
            }
            #expect(noSet?.isNotFound == true)

            #expect(try store.tokens.revoke(name: "ios-app", at: time(5), audit: audit("key.revoke", 5)))
            #expect(try !store.tokens.revoke(name: "ios-app", at: time(6), audit: audit("key.revoke", 6)))
            #expect(try !store.tokens.revoke(name: "nobody", at: time(6), audit: audit("key.revoke", 6)))
            var revoked = sdk
            revoked.revokedAt = time(5)
            #expect(try store.tokens.all() == [admin, revoked])
            // Only the actions that happened are in the log: two creations and one revocation.
            #expect(
                try store.auditLog.records(set: "ios", limit: 10).map(\.action) == [
                    "key.revoke", "key.create", "set.create",
                ])
            #expect(
                try store.auditLog.records(set: nil, limit: 10).map(\.action)
                    == ["key.revoke", "key.create", "token.create", "set.create"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func changesSinceAVersionAreEachItemsNewestBytes(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.fill(store)
            func changes(since base: Int) throws -> SetChanges { try store.changes(set: "ios", since: base) }
            let current = SetChanges(set: "ios", version: 5, createdAt: time(5), digest: digest(5), items: [:])
            #expect(try changes(since: 5) == current)
            var since4 = current
            since4.items = [.flag("b"): body("b2")]
            #expect(try changes(since: 4) == since4)
            // "d" came in version 2 and went in 4; "b" went in 3 and came back in 5.
            var since1 = current
            let gone: [UInt8]? = nil
            since1.items = [
                .flag("a"): body("a2"), .flag("d"): gone, .flag("b"): body("b2"), .cohort("beta"): body("beta2"),
            ]
            #expect(try changes(since: 1) == since1)
            // From nothing: every item there is, and those that came and went (here the same as since version 1).
            #expect(try changes(since: 0) == since1)
            let error = #expect(throws: StoreError.self) { try store.changes(set: "android", since: 0) }
            #expect(error?.isNotFound == true)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theTokenRevisionGrowsWithEveryTokenAddedOrRevoked(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.createSet("ios", change: .init(), digest: digest(1), audit: audit("set.create", 1))
            var seen = [try store.tokens.revision()]
            let admin = StoredToken(
                name: "root", hash: digest(100), role: .admin(.admin, sets: nil), createdAt: time(2))
            try store.tokens.add(admin, audit: audit("token.create", 2))
            seen.append(try store.tokens.revision())
            try store.tokens.add(
                StoredToken(name: "ios-app", hash: digest(101), role: .sdk(set: "ios"), createdAt: time(3)),
                audit: audit("key.create", 3))
            seen.append(try store.tokens.revision())
            try store.tokens.recordUses(["root": time(4)])
            #expect(try store.tokens.revision() == seen.last)
            _ = try store.tokens.revoke(name: "ios-app", at: time(5), audit: audit("key.revoke", 5))
            seen.append(try store.tokens.revision())
            #expect(try !store.tokens.revoke(name: "ios-app", at: time(6), audit: audit("key.revoke", 6)))
            #expect(try store.tokens.revision() == seen.last)
            #expect(seen == seen.sorted() && Set(seen).count == seen.count, "\(seen)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theAuditLogFiltersByActorSubjectTimeAndSet(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.createSet("ios", change: .init(), digest: digest(1), audit: audit("set.create", 1))
            try store.createSet("web", change: .init(), digest: digest(1), audit: audit("set.create", 2))
            let bob = AuditEntry(time: time(3), actor: "bob", action: "flag.kill", subject: "checkout")
            try store.auditLog.record(bob, set: "ios")
            try store.auditLog.record(audit("flag.update", 4, subject: "checkout"), set: "web")
            try store.auditLog.record(AuditEntry(time: time(5), actor: "bob", action: "token.create"), set: nil)
            func actions(set: String? = nil, _ filter: AuditFilter) throws -> [String] {
                try store.auditLog.records(set: set, filter: filter, limit: 100).map(\.action)
            }
            #expect(try actions(AuditFilter(actor: "bob")) == ["token.create", "flag.kill"])
            #expect(try actions(AuditFilter(subject: "checkout")) == ["flag.update", "flag.kill"])
            #expect(try actions(AuditFilter(actor: "bob", subject: "checkout")) == ["flag.kill"])
            // `since` includes its time, `until` leaves its time out.
            #expect(try actions(AuditFilter(since: time(2), until: time(4))) == ["flag.kill", "set.create"])
            #expect(try actions(AuditFilter(since: time(5))) == ["token.create"])
            // A list of sets leaves out the records outside any set.
            #expect(try actions(AuditFilter(sets: ["web"])) == ["flag.update", "set.create"])
            #expect(try actions(AuditFilter(sets: ["ios", "web"])).count == 4)
            #expect(try actions(AuditFilter(sets: [])) == [])
            #expect(try actions(set: "ios", AuditFilter(sets: ["web"])) == [])
            #expect(try actions(set: "ios", AuditFilter(actor: "alice")) == ["set.create"])
            #expect(
                try store.auditLog.records(set: nil, filter: AuditFilter(subject: "checkout"), limit: 1) == [
                    audit("flag.update", 4, subject: "checkout")
                ])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func tokensKeepTheirScopeExpirySessionsAndLastUse(kind: StoreKind) throws {
        try kind.withStore { store in
            let editor = StoredToken(
                name: "ed", hash: digest(100), role: .admin(.editor, sets: ["ios", "web"]), createdAt: time(1),
                expiresAt: time(90))
            func session(_ name: String, _ step: Int) -> StoredToken {
                StoredToken(
                    name: name, hash: digest(100 + step), role: editor.role, createdAt: time(step),
                    expiresAt: time(step + 1), sessionOf: "ed")
            }
            let viewer = StoredToken(name: "vi", hash: digest(99), role: .admin(.viewer, sets: nil), createdAt: time(2))
            let tokens = [editor, session("ed-1", 2), viewer, session("ed-2", 3)]
            for token in tokens {
                try store.tokens.add(token, audit: audit("token.create", 1, subject: token.name))
            }
            // Oldest first, by name within one time.
            #expect(try store.tokens.all() == tokens)

            try store.tokens.recordUses(["ed": time(10), "vi": time(12), "nobody": time(11)])
            try store.tokens.recordUses(["ed": time(8)])
            var expected = tokens
            expected[0].lastUsedAt = time(10)
            expected[2].lastUsedAt = time(12)
            #expect(try store.tokens.all() == expected)

            // A session revoked on its own leaves the token it came from alone; revoking that token revokes the
            // sessions still valid.
            #expect(try store.tokens.revoke(name: "ed-2", at: time(20), audit: audit("token.revoke", 20)))
            #expect(try store.tokens.revoke(name: "ed", at: time(21), audit: audit("token.revoke", 21)))
            expected[3].revokedAt = time(20)
            expected[0].revokedAt = time(21)
            expected[1].revokedAt = time(21)
            #expect(try store.tokens.all() == expected)
            #expect(
                try store.auditLog.records(set: nil, filter: AuditFilter(actor: "alice"), limit: 2).map(\.action) == [
                    "token.revoke", "token.revoke",
                ])
        }
    }

    /// Sessions that ended a week ago are deleted with their set limits, their audit records stay, and the
    /// token revision moves (counting rows would not only grow any more).
    @Test(arguments: StoreKind.allCases)
    func endedSessionsAreDeletedAndTheRevisionStillOnlyGrows(kind: StoreKind) throws {
        try kind.withStore { store in
            let person = StoredToken(
                name: "ed", hash: digest(100), role: .admin(.editor, sets: ["ios"]), createdAt: time(1))
            func session(_ name: String, _ step: Int, expires: Int) -> StoredToken {
                StoredToken(
                    name: name, hash: digest(100 + step), role: person.role, createdAt: time(step),
                    expiresAt: time(expires), sessionOf: "ed")
            }
            let expiredLongAgo = session("s-old", 2, expires: 3)
            let revokedLongAgo = session("s-out", 4, expires: 100)
            let expiredLately = session("s-new", 5, expires: 40)
            let current = session("s-now", 6, expires: 100)
            for token in [person, expiredLongAgo, revokedLongAgo, expiredLately, current] {
                try store.tokens.add(token, audit: audit("token.create", 1, subject: token.name))
            }
            #expect(try store.tokens.revoke(name: "s-out", at: time(7), audit: audit("session.end", 7)))
            let before = try store.tokens.revision()
            #expect(try store.tokens.deleteSessions(endedBefore: time(30)) == 2)
            #expect(try store.tokens.all().map(\.name) == ["ed", "s-new", "s-now"])
            #expect(try store.tokens.all().first { $0.name == "s-now" }?.role == .admin(.editor, sets: ["ios"]))
            let after = try store.tokens.revision()
            #expect(after > before)
            #expect(
                try store.auditLog.records(set: nil, filter: AuditFilter(), limit: 10).map(\.action).contains(
                    "session.end"))
            // Nothing left to delete: nothing moves.
            #expect(try store.tokens.deleteSessions(endedBefore: time(30)) == 0)
            #expect(try store.tokens.revision() == after)
            // Adding after a deletion moves it on.
            try store.tokens.add(session("s-next", 8, expires: 100), audit: audit("session.start", 8))
            #expect(try store.tokens.revision() > after)
        }
    }
}
