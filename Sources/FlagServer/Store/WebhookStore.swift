import FlagAPI
import Foundation

/// Webhooks and their outbox (docs/webhooks.md): one concern of the store, written once for SQLite and PostgreSQL
/// over `SQLExecutor`. Events are queued by `SQLExecutor.insertAudit`, in the transaction of the change they tell
/// of; senders on every server lease the oldest pending delivery of each hook, so that a hook's events go out in
/// order, one at a time.
package struct WebhookStore: Sendable {
    let database: any SQLStore

    /// The webhook concern of `database`.
    package init(_ database: any SQLStore) {
        self.database = database
    }

    /// Every hook, by name, with how many deliveries of each wait and since when.
    package func hooks() throws -> [(hook: StoredWebhook, pending: PendingSummary)] {
        try database.reading("reading the webhooks") { db in
            let pending = try db.pendingSummaries()
            return try db.selectHooks(where: nil, []).map { ($0, pending[$0.name] ?? PendingSummary(count: 0)) }
        }
    }

    /// How many deliveries of the hook `name` are pending, and since when.
    package func pending(of name: String) throws -> PendingSummary {
        try database.reading("reading the pending deliveries of webhook \(name)") { db in
            try db.pendingSummaries(of: name)[name] ?? PendingSummary(count: 0)
        }
    }

    /// The hook `name`, or `nil`.
    package func hook(_ name: String) throws -> StoredWebhook? {
        try database.reading("reading webhook \(name)") { db in
            try db.selectHooks(where: "name = $1", [.text(name)]).first
        }
    }

    /// Stores a new hook, atomically with its audit record; `alreadyExists` for a name in use.
    package func create(_ hook: StoredWebhook, audit: AuditEntry) throws {
        try database.writing("creating webhook \(hook.name)") { db in
            let time = db.dialect.time
            let added = try db.run(
                """
                INSERT INTO webhook (name, url, sets, events, format, description, sealed_secret, created_by, created_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, \(time(9))) ON CONFLICT (name) DO NOTHING
                """,
                [
                    .text(hook.name), .text(hook.url), .text(hook.sets.map(Self.list)),
                    .text(hook.events.map(Self.list)),
                    .text(hook.format.rawValue), .text(hook.description), .bytes(hook.sealedSecret),
                    .text(hook.createdBy), .time(hook.createdAt),
                ])
            guard added == 1 else { throw StoreError.alreadyExists("a webhook named \(hook.name)") }
            try db.insertAudit(audit, set: nil)
        }
    }

    /// Removes the hook and its deliveries, pending ones included; `false` when there is no such hook.
    package func delete(_ name: String, audit: AuditEntry) throws -> Bool {
        try database.writing("deleting webhook \(name)") { db in
            try db.run("DELETE FROM webhook_delivery WHERE hook = $1", [.text(name)])
            guard try db.run("DELETE FROM webhook WHERE name = $1", [.text(name)]) == 1 else { return false }
            try db.insertAudit(audit, set: nil)
            return true
        }
    }

    /// Replaces the hook's secret with `sealed`; the one it had signs too until `until`. `false` when there is no
    /// such hook.
    package func rotate(_ name: String, sealed: [UInt8], until: Date, audit: AuditEntry) throws -> Bool {
        try database.writing("rotating the secret of webhook \(name)") { db in
            let changed = try db.run(
                """
                UPDATE webhook SET previous_sealed_secret = sealed_secret, previous_until = \(db.dialect.time(2)),
                    sealed_secret = $3
                WHERE name = $1
                """,
                [.text(name), .time(until), .bytes(sealed)])
            guard changed == 1 else { return false }
            try db.insertAudit(audit, set: nil)
            return true
        }
    }

    /// Queues `event` for the hook `name` alone (a test), with its audit record; `false` when there is no such hook.
    package func enqueue(_ event: WebhookEvent, id: String, to name: String, audit: AuditEntry) throws -> Bool {
        try database.writing("queuing a test event for webhook \(name)") { db in
            guard try db.selectHooks(where: "name = $1", [.text(name)]).first != nil else { return false }
            try db.insertDelivery(hook: name, id: id, event: event, set: nil)
            try db.insertAudit(audit, set: nil)
            return true
        }
    }

    /// The hook's last `limit` deliveries, newest first.
    package func deliveries(of name: String, limit: Int) throws -> [WebhookDeliveryInfo] {
        try database.reading("reading the deliveries of webhook \(name)") { db in
            let micro = db.dialect.microseconds
            return try db.rows(
                """
                SELECT event_id, event_type, set_name, \(micro("created_at")), state, attempts,
                    \(micro("next_attempt_at")), last_status, last_error, \(micro("finished_at"))
                FROM webhook_delivery WHERE hook = $1 ORDER BY id DESC LIMIT $2
                """,
                [.text(name), .integer(limit)]
            ) { row in
                let state = try row.text(4)
                return WebhookDeliveryInfo(
                    id: try row.text(0), type: try row.text(1), set: try row.optionalText(2),
                    createdAt: try row.date(3), state: state, attempts: try row.int(5),
                    nextAttemptAt: state == "pending" ? try row.optionalDate(6) : nil,
                    lastStatus: try row.optionalInt(7), lastError: try row.optionalText(8),
                    finishedAt: try row.optionalDate(9))
            }
        }
    }

    /// Leases for `owner`, until `leaseUntil`, the oldest pending delivery of each enabled hook that is due at `now`
    /// and not leased by anyone, at most `limit`. A later event of a hook is never leased while an earlier one is
    /// pending: that is what keeps a hook's events in order.
    package func lease(owner: String, now: Date, until leaseUntil: Date, limit: Int) throws -> [LeasedDelivery] {
        try database.writing("leasing webhook deliveries") { db in
            let time = db.dialect.time
            let due = try db.rows(
                """
                SELECT d.id FROM webhook_delivery AS d JOIN webhook AS w ON w.name = d.hook
                WHERE d.state = 'pending' AND w.disabled_at IS NULL AND d.next_attempt_at <= \(time(1))
                    AND (d.lease_until IS NULL OR d.lease_until <= \(time(1)))
                    AND d.id = (SELECT min(e.id) FROM webhook_delivery AS e WHERE e.hook = d.hook AND e.state = 'pending')
                ORDER BY d.id LIMIT $2 \(db.dialect.skipLocked(of: "d"))
                """,
                [.time(now), .integer(limit)]
            ) { try $0.int64(0) }
            guard !due.isEmpty else { return [] }
            let ids = db.dialect.integerList(due.map { Int($0) })
            try db.run(
                "UPDATE webhook_delivery SET lease_owner = $1, lease_until = \(time(2)) WHERE id \(db.dialect.isIn(list: 3))",
                [.text(owner), .time(leaseUntil), ids])
            let hooks = Dictionary(
                try db.selectHooks(where: nil, []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            return try db.rows(
                """
                SELECT id, hook, event_id, event_type, payload, \(db.dialect.microseconds(of: "created_at")), attempts
                FROM webhook_delivery WHERE id \(db.dialect.isIn(list: 1)) ORDER BY id
                """,
                [ids]
            ) { row in
                let name = try row.text(1)
                guard let hook = hooks[name] else {
                    throw StoreError.corrupt("a webhook delivery names the webhook \(name), which does not exist")
                }
                return LeasedDelivery(
                    id: try row.int64(0), hook: hook, eventID: try row.text(2), eventType: try row.text(3),
                    payload: try row.bytes(4), createdAt: try row.date(5), attempts: try row.int(6))
            }
        }
    }

    /// Records the outcome of an attempt on a delivery `owner` leased; nothing when the lease was lost meanwhile (it
    /// ran out and another server took the delivery). A retry due after `giveUpAt` marks the delivery failed.
    package func finish(
        _ delivery: LeasedDelivery, owner: String, _ outcome: DeliveryOutcome, now: Date, next: Date, giveUpAt: Date
    ) throws {
        try database.writing("recording a webhook delivery") { db in
            let time = db.dialect.time
            let attempts = delivery.attempts + 1
            let (state, status, error, nextAttempt): (String, Int?, String?, Date)
            switch outcome {
            case .delivered(let code): (state, status, error, nextAttempt) = ("delivered", code, nil, now)
            case .gone:
                (state, status, error, nextAttempt) = ("failed", 410, "the receiver answered 410 Gone", now)
            case .retry(let code, let reason):
                let expired = next > giveUpAt
                (state, status, error, nextAttempt) = (expired ? "failed" : "pending", code, reason, next)
            }
            let changed = try db.run(
                """
                UPDATE webhook_delivery SET state = $1, attempts = $2, last_status = $3, last_error = $4,
                    next_attempt_at = \(time(5)), lease_owner = NULL, lease_until = NULL,
                    finished_at = CASE WHEN $1 = 'pending' THEN NULL ELSE \(time(6)) END
                WHERE id = $7 AND lease_owner = $8 AND state = 'pending'
                """,
                [
                    .text(state), .integer(attempts), .integer(status), .text(error), .time(nextAttempt), .time(now),
                    .integer(Int(delivery.id)), .text(owner),
                ])
            if changed == 1, outcome == .gone {
                try db.run(
                    """
                    UPDATE webhook SET disabled_at = \(time(2)), disabled_reason = $3
                    WHERE name = $1 AND disabled_at IS NULL
                    """,
                    [
                        .text(delivery.hook.name), .time(now),
                        .text("the receiver answered 410 Gone to event \(delivery.eventID)"),
                    ])
            }
        }
    }

    /// Queues `flag.expired` for `expiry` unless some server has already: `true` when this call did.
    @discardableResult
    package func noteExpiry(_ expiry: FlagExpiry) throws -> Bool {
        try database.writing("noting the expiry of \(expiry.flag) in \(expiry.set)") { db in
            let noted = try db.run(
                """
                INSERT INTO flag_expiry_notice (set_name, flag_key, expires_at) VALUES ($1, $2, \(db.dialect.time(3)))
                ON CONFLICT DO NOTHING
                """,
                [.text(expiry.set), .text(expiry.flag), .time(expiry.expiresAt)])
            guard noted == 1 else { return false }
            let event = WebhookEvent(
                type: WebhookEventType.flagExpired.rawValue, timestamp: expiry.expiresAt,
                data: WebhookEventData(
                    set: expiry.set, version: expiry.version, action: "flag.expired", subject: expiry.flag,
                    flags: [expiry.flag]))
            try db.insertEvents([event], set: expiry.set)
            return true
        }
    }

    /// Removes deliveries delivered or failed before `before`, and the notes of expiries before it; returns how
    /// many deliveries.
    @discardableResult
    package func prune(finishedBefore before: Date) throws -> Int {
        try database.writing("pruning webhook deliveries") { db in
            try db.run("DELETE FROM flag_expiry_notice WHERE expires_at < \(db.dialect.time(1))", [.time(before)])
            return try db.run(
                "DELETE FROM webhook_delivery WHERE state <> 'pending' AND finished_at < \(db.dialect.time(1))",
                [.time(before)])
        }
    }

    /// A list as stored: one name a line.
    static func list(_ names: [String]) -> String { names.joined(separator: "\n") }
}

extension SQLExecutor {
    /// Queues the events `record` tells of for every enabled hook that covers them, in the caller's transaction:
    /// an event exists if and only if its change committed. One read of the hooks when none covers anything.
    func insertEvents(for record: AuditEntry, set: String?, detail: EventDetail) throws {
        try insertEvents(WebhookEvents.of(record, set: set, detail: detail), set: set)
    }

    /// Queues `events` (of `set`, or of none) for every enabled hook that covers them, in the caller's transaction.
    fileprivate func insertEvents(_ events: [WebhookEvent], set: String?) throws {
        guard !events.isEmpty else { return }
        let hooks = try selectHooks(where: "disabled_at IS NULL", [])
        for event in events {
            var id: String?
            for hook in hooks where hook.covers(event.type, set: set) {
                // One id per event, the same for every hook it goes to.
                let eventID = id ?? WebhookEvents.newID()
                id = eventID
                try insertDelivery(hook: hook.name, id: eventID, event: event, set: set)
            }
        }
    }

    /// Queues `event` for `hook`, due at once.
    fileprivate func insertDelivery(hook: String, id: String, event: WebhookEvent, set: String?) throws {
        try run(
            """
            INSERT INTO webhook_delivery (hook, event_id, event_type, set_name, payload, created_at, state, next_attempt_at)
            VALUES ($1, $2, $3, $4, $5, \(dialect.time(6)), 'pending', \(dialect.time(6)))
            """,
            [
                .text(hook), .text(id), .text(event.type), .text(set), .bytes(try event.encodedAnswer()),
                .time(event.timestamp),
            ])
    }

    /// The hooks that `condition` admits (every hook when `nil`), by name.
    fileprivate func selectHooks(where condition: String?, _ arguments: [SQLValue]) throws -> [StoredWebhook] {
        let micro = dialect.microseconds
        return try rows(
            """
            SELECT name, url, sets, events, format, description, sealed_secret, previous_sealed_secret,
                \(micro("previous_until")), created_by, \(micro("created_at")), \(micro("disabled_at")), disabled_reason
            FROM webhook \(condition.map { "WHERE " + $0 } ?? "") ORDER BY name
            """,
            arguments
        ) { row in
            let name = try row.text(0)
            let formatText = try row.text(4)
            guard let format = WebhookFormat(rawValue: formatText) else {
                throw StoreError.corrupt("webhook \(name) has the unknown format \"\(formatText)\"")
            }
            func list(_ column: Int) throws -> [String]? {
                try row.optionalText(column).map { $0.split(separator: "\n").map(String.init) }
            }
            return StoredWebhook(
                name: name, url: try row.text(1), sets: try list(2), events: try list(3), format: format,
                description: try row.optionalText(5), sealedSecret: try row.bytes(6),
                previousSealedSecret: try row.optionalBytes(7), previousUntil: try row.optionalDate(8),
                createdBy: try row.text(9), createdAt: try row.date(10), disabledAt: try row.optionalDate(11),
                disabledReason: try row.optionalText(12))
        }
    }

    /// How many deliveries of each hook (or of `hook` alone) are pending, and the oldest one's time.
    fileprivate func pendingSummaries(of hook: String? = nil) throws -> [String: PendingSummary] {
        let pairs = try rows(
            """
            SELECT hook, count(*), min(\(dialect.microseconds(of: "created_at"))) FROM webhook_delivery
            WHERE state = 'pending' AND (CAST($1 AS text) IS NULL OR hook = $1) GROUP BY hook
            """,
            [.text(hook)]
        ) { row in (try row.text(0), PendingSummary(count: try row.int(1), oldest: try row.optionalDate(2))) }
        return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
    }
}
