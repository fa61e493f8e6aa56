import FlagAPI
import FlagServer
import FlagTestSupport
import Foundation
import Testing

/// The webhook part of the `FlagStore` contract (docs/webhooks.md), on every store (PostgreSQL when a cluster is
/// given): events queued in the transaction of their change, leased one per hook in order, retried, given up,
/// pruned.
extension StoreTests {
    private static func hook(_ name: String, sets: [String]? = nil, events: [String]? = nil) -> StoredWebhook {
        StoredWebhook(
            name: name, url: "https://203.0.113.10/\(name)", sets: sets, events: events, format: .json,
            description: nil, sealedSecret: Array(name.utf8), createdBy: "alice", createdAt: time(0))
    }

    private static func twoSets(_ store: any FlagStore) throws {
        _ = try store.createSets(
            ["ios", "web"].map { name in
                SetCreation(
                    name: name, change: VersionChange(items: [.flag("a"): body("a1")]), digest: digest(1),
                    audit: audit("set.create", 1))
            })
    }

    /// Appends version `version` of `set`, changing flag `a`.
    private static func write(_ store: any FlagStore, _ set: String, _ version: Int, action: String = "flag.kill")
        throws
    {
        _ = try store.append(
            set: set, base: version - 1, change: VersionChange(items: [.flag("a"): body("a\(version)")]),
            digest: digest(version), audit: audit(action, version, subject: "a", reason: "errors"))
    }

    private static func lease(_ store: any FlagStore, at step: Int, owner: String = "one") throws -> [LeasedDelivery] {
        try store.webhooks.lease(owner: owner, now: time(step), until: time(step).addingTimeInterval(30), limit: 10)
    }

    @Test(arguments: StoreKind.allCases)
    func aWriteQueuesItsEventsForTheHooksThatCoverThemAndAFailedWriteQueuesNone(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.twoSets(store)
            try store.webhooks.create(Self.hook("all"), audit: audit("webhook.create", 1, subject: "all"))
            try store.webhooks.create(
                Self.hook("web-versions", sets: ["web"], events: ["version.created"]),
                audit: audit("webhook.create", 1, subject: "web-versions"))
            try Self.write(store, "ios", 2)
            try Self.write(store, "web", 2)
            // A stale base fails, and queues nothing.
            #expect(throws: StoreError.self) { try Self.write(store, "web", 2) }
            // A key made outside any set: only the hook of every set hears of it.
            try store.auditLog.record(audit("key.create", 3, subject: "web-key"), set: "web")

            let all = try store.webhooks.deliveries(of: "all", limit: 10)
            #expect(all.map(\.type) == ["key.created", "version.created", "version.created"])
            #expect(all.map(\.set) == ["web", "web", "ios"])
            let web = try store.webhooks.deliveries(of: "web-versions", limit: 10)
            #expect(web.map(\.type) == ["version.created"])
            // One event, one id, whichever hook it goes to.
            #expect(web.first?.id == all[1].id)
            #expect(Set(all.map(\.id)).count == 3)

            let leased = try Self.lease(store, at: 3)
            let event = try WebhookEvent.decode(answer: try #require(leased.first { $0.hook.name == "all" }).payload)
            #expect(event.type == "version.created")
            #expect(
                event.data
                    == WebhookEventData(
                        set: "ios", version: 2, actor: "alice", action: "flag.kill", reason: "errors", subject: "a",
                        flags: ["a"], cohorts: []))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aHooksEventsGoOutOneAtATimeInOrderAndAFailureIsRetriedFirst(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.twoSets(store)
            try store.webhooks.create(Self.hook("all"), audit: audit("webhook.create", 1))
            for version in 2...4 { try Self.write(store, "ios", version) }
            let first = try #require(try Self.lease(store, at: 5).first)
            #expect(try Self.lease(store, at: 5).isEmpty)  // leased: the later events wait behind it
            let retryAt = time(5).addingTimeInterval(1)
            try store.webhooks.finish(
                first, owner: "one", .retry(status: 500, error: "HTTP 500"), now: time(5), next: retryAt,
                giveUpAt: time(5).addingTimeInterval(86_400))
            #expect(try store.webhooks.lease(owner: "one", now: time(5), until: time(6), limit: 10).isEmpty)
            let again = try #require(
                try store.webhooks.lease(owner: "one", now: retryAt, until: time(6), limit: 10).first)
            #expect(again.id == first.id && again.attempts == 1)
            try store.webhooks.finish(
                again, owner: "one", .delivered(status: 204), now: time(6), next: time(6), giveUpAt: time(9))
            let second = try #require(try Self.lease(store, at: 6).first)
            #expect(second.id > first.id)
            let shown = try store.webhooks.deliveries(of: "all", limit: 10)
            #expect(shown.map(\.state) == ["pending", "pending", "delivered"])
            #expect(shown.last?.attempts == 2 && shown.last?.lastStatus == 204)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aLeaseOutlivesOnlyItsServerAndALostLeaseRecordsNothing(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.twoSets(store)
            try store.webhooks.create(Self.hook("all"), audit: audit("webhook.create", 1))
            try Self.write(store, "ios", 2)
            let taken = try #require(try Self.lease(store, at: 3, owner: "one").first)
            #expect(
                try store.webhooks.lease(owner: "two", now: time(3).addingTimeInterval(29), until: time(4), limit: 9)
                    .isEmpty)
            let retaken = try #require(
                try store.webhooks.lease(owner: "two", now: time(3).addingTimeInterval(30), until: time(4), limit: 9)
                    .first)
            #expect(retaken.id == taken.id)
            // The first server comes back: its outcome is not recorded over the second's lease.
            try store.webhooks.finish(
                taken, owner: "one", .delivered(status: 200), now: time(4), next: time(4), giveUpAt: time(9))
            #expect(try store.webhooks.deliveries(of: "all", limit: 1).first?.state == "pending")
            try store.webhooks.finish(
                retaken, owner: "two", .delivered(status: 200), now: time(4), next: time(4), giveUpAt: time(9))
            #expect(try store.webhooks.deliveries(of: "all", limit: 1).first?.state == "delivered")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aFlagsExpiryIsToldOfOnceWhicheverServerSeesItFirst(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.twoSets(store)
            try store.webhooks.create(Self.hook("ios", sets: ["ios"]), audit: audit("webhook.create", 1))
            let expiry = FlagExpiry(set: "ios", flag: "a", expiresAt: time(2), version: 1)
            #expect(try store.webhooks.noteExpiry(expiry))
            #expect(try !store.webhooks.noteExpiry(expiry))  // another server, or the next look
            #expect(try store.webhooks.noteExpiry(FlagExpiry(set: "web", flag: "a", expiresAt: time(2), version: 1)))
            let delivered = try store.webhooks.deliveries(of: "ios", limit: 10)
            #expect(delivered.map(\.type) == ["flag.expired"])
            let event = try WebhookEvent.decode(answer: try #require(try Self.lease(store, at: 3).first).payload)
            #expect(event.timestamp == time(2))
            #expect(
                event.data
                    == WebhookEventData(set: "ios", version: 1, action: "flag.expired", subject: "a", flags: ["a"]))
            // Once its note is pruned, the same expiry would be told of again: the sender looks back a day only.
            try store.webhooks.prune(finishedBefore: time(3))
            #expect(try store.webhooks.noteExpiry(expiry))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aDayOfFailuresGivesUpA410DisablesAndOldDeliveriesArePruned(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.twoSets(store)
            try store.webhooks.create(Self.hook("flaky"), audit: audit("webhook.create", 1))
            try store.webhooks.create(Self.hook("gone"), audit: audit("webhook.create", 1))
            for version in 2...3 { try Self.write(store, "ios", version) }
            for delivery in try Self.lease(store, at: 4) {
                let outcome: DeliveryOutcome =
                    delivery.hook.name == "gone" ? .gone : .retry(status: nil, error: "the connection was refused")
                // The next attempt would come after the retry window: the delivery fails.
                try store.webhooks.finish(
                    delivery, owner: "one", outcome, now: time(4), next: time(6), giveUpAt: time(5))
            }
            let flaky = try store.webhooks.deliveries(of: "flaky", limit: 10)
            #expect(flaky.map(\.state) == ["pending", "failed"])
            #expect(flaky.last?.lastError == "the connection was refused")
            let hooks = try store.webhooks.hooks()
            let gone = try #require(hooks.first { $0.hook.name == "gone" })
            #expect(gone.hook.disabledAt == time(4))
            #expect(gone.pending.count == 1)
            #expect(try store.webhooks.pending(of: "gone").count == 1)
            // The failed one no longer holds the next back; the disabled hook gets nothing.
            #expect(try Self.lease(store, at: 4).map(\.hook.name) == ["flaky"])
            // Nor is anything queued for it.
            try Self.write(store, "ios", 4)
            #expect(try store.webhooks.deliveries(of: "gone", limit: 10).count == 2)

            #expect(try store.webhooks.prune(finishedBefore: time(4)) == 0)
            #expect(try store.webhooks.prune(finishedBefore: time(5)) == 2)
            #expect(try store.webhooks.deliveries(of: "flaky", limit: 10).map(\.state) == ["pending", "pending"])

            #expect(try store.webhooks.delete("flaky", audit: audit("webhook.delete", 6)))
            #expect(try store.webhooks.hook("flaky") == nil)
            #expect(try store.webhooks.deliveries(of: "flaky", limit: 10).isEmpty)
            #expect(try !store.webhooks.delete("flaky", audit: audit("webhook.delete", 6)))
        }
    }
}
