import FlagAPI
import Foundation

/// A change request as stored: a write held back until someone approves and applies it (docs/reviews.md).
package struct StoredProposal: Sendable, Hashable {
    /// Where a change request is in its life.
    package enum State: String, Sendable, Hashable, CaseIterable {
        /// Waiting for an approval.
        case open
        /// Approved; anyone who may write the set may apply it.
        case approved
        /// Approved (or needing no approval) and waiting for its `applyAt`, when the server applies it.
        case scheduled
        /// Written as a version (`appliedVersion`).
        case applied
        /// Refused by a reviewer.
        case rejected
        /// Taken back by its author or an admin.
        case withdrawn
        /// Applying it failed (`failure` says why): the compatibility gate or the set's checks refused it.
        case failed

        /// Whether nothing can happen to it any more.
        package var isFinal: Bool { self != .open && self != .approved && self != .scheduled }
    }

    /// Its number, unique on the server.
    package var id: Int
    /// The set it changes.
    package var set: String
    /// What it does, in a line.
    package var title: String
    /// Who proposed it: the token's name, or the person of a dashboard session.
    package var author: String
    /// Why, as the author gave it.
    package var reason: String?
    /// Whether the author allowed what active clients cannot evaluate.
    package var allowIncompatible: Bool
    /// The version it was made against.
    package var baseVersion: Int
    /// When it was proposed.
    package var createdAt: Date
    /// Where it is.
    package var state: State
    /// When it is to be applied, for a scheduled change.
    package var applyAt: Date?
    /// Each item it changes: its bytes at `baseVersion` (`nil`: absent) and the bytes it writes (`nil`: removes).
    package var items: [ItemKey: ProposedItem]
    /// Who approved it, oldest first.
    package var approvals: [ProposalApproval] = []
    /// Who rejected, withdrew, applied it or failed to, when, and why.
    package var decidedBy: String?
    /// When it was decided.
    package var decidedAt: Date?
    /// The reason given with the decision.
    package var decisionReason: String?
    /// The version applying it made.
    package var appliedVersion: Int?
    /// Why applying it failed.
    package var failure: String?

    /// A new, open change request (its `id` is given when it is stored).
    package init(
        set: String, title: String, author: String, reason: String?, allowIncompatible: Bool, baseVersion: Int,
        createdAt: Date, applyAt: Date? = nil, items: [ItemKey: ProposedItem]
    ) {
        self.applyAt = applyAt
        self.id = 0
        self.set = set
        self.title = title
        self.author = author
        self.reason = reason
        self.allowIncompatible = allowIncompatible
        self.baseVersion = baseVersion
        self.createdAt = createdAt
        self.state = .open
        self.items = items
    }
}

/// One item of a change request: as it was at the base version, and as the request writes it.
package struct ProposedItem: Sendable, Hashable {
    /// Its bytes at the base version; `nil` when the set did not have it.
    package var before: [UInt8]?
    /// The bytes the request writes; `nil` when it removes the item.
    package var after: [UInt8]?

    /// An item changed from `before` to `after`.
    package init(before: [UInt8]?, after: [UInt8]?) {
        self.before = before
        self.after = after
    }
}

/// An approval of a change request.
package struct ProposalApproval: Sendable, Hashable {
    /// Who approved.
    package var actor: String
    /// When.
    package var time: Date
    /// Why, as given.
    package var reason: String?

    /// An approval by `actor`.
    package init(actor: String, time: Date, reason: String?) {
        self.actor = actor
        self.time = time
        self.reason = reason
    }
}

/// Change requests: one concern of the store, written once for SQLite and PostgreSQL over `SQLExecutor`.
package struct ProposalStore: Sendable {
    let database: any SQLStore

    /// The change-request concern of `database`.
    package init(_ database: any SQLStore) {
        self.database = database
    }

    /// Stores a new change request with its audit record, in one transaction; returns it with its id.
    package func insert(_ proposal: StoredProposal, audit: AuditEntry) throws -> StoredProposal {
        try database.writing("storing a change request of \"\(proposal.set)\"") { db in
            guard try db.currentVersion(of: proposal.set) != nil else { throw StoreError.notFound(set: proposal.set) }
            let id = try db.firstRow(
                """
                INSERT INTO change_request
                    (set_name, title, author, reason, allow_incompatible, base_version, created_at, state, apply_at)
                VALUES ($1, $2, $3, $4, $5, $6, \(db.dialect.time(7)), $8, \(db.dialect.time(9))) RETURNING id
                """,
                [
                    .text(proposal.set), .text(proposal.title), .text(proposal.author), .text(proposal.reason),
                    .integer(proposal.allowIncompatible ? 1 : 0), .integer(proposal.baseVersion),
                    .time(proposal.createdAt), .text(proposal.state.rawValue), .time(proposal.applyAt),
                ]
            ) { try $0.int(0) }
            guard let id else { throw StoreError.corrupt("the store returned no id for a new change request") }
            for (item, change) in proposal.items.sorted(by: { $0.key < $1.key }) {
                try db.run(
                    "INSERT INTO change_request_item (change_id, kind, item_key, before, after) VALUES ($1, $2, $3, $4, $5)",
                    [
                        .integer(id), .text(item.kind.rawValue), .text(item.key), Self.bytes(change.before),
                        Self.bytes(change.after),
                    ])
            }
            var audit = audit
            audit.subject = "change \(id)"
            _ = try db.insertAudit(audit, set: proposal.set)
            var stored = proposal
            stored.id = id
            return stored
        }
    }

    /// The set's change requests, newest first, at most `limit`; only those in `states` when it is given.
    package func proposals(set: String, states: Set<StoredProposal.State>?, limit: Int) throws -> [StoredProposal] {
        try database.reading("reading the change requests of \"\(set)\"") { db in
            guard try db.currentVersion(of: set) != nil else { throw StoreError.notFound(set: set) }
            var arguments: [SQLValue] = [.text(set), .integer(max(0, limit))]
            var condition = ""
            if let states {
                let parameters = states.map(\.rawValue).sorted().map { state -> String in
                    arguments.append(.text(state))
                    return "$\(arguments.count)"
                }
                condition = parameters.isEmpty ? " AND 1 = 0" : " AND state IN (\(parameters.joined(separator: ", ")))"
            }
            return try Self.read(
                where: "set_name = $1\(condition) ORDER BY id DESC LIMIT $2", arguments, set: set, db)
        }
    }

    /// One change request of the set, or `nil`.
    package func proposal(set: String, id: Int) throws -> StoredProposal? {
        try database.reading("reading change request \(id) of \"\(set)\"") { db in
            try Self.read(where: "set_name = $1 AND id = $2", [.text(set), .integer(id)], set: set, db).first
        }
    }

    /// Stores a decision on a change request (its state, who decided, an approval added), with its audit record when
    /// it has one, in one transaction: `false`, and nothing stored, when its state is no longer `expected` (someone
    /// decided first). Applying one has no record of its own: the version it made has one.
    package func update(
        _ proposal: StoredProposal, from expected: StoredProposal.State, approval: ProposalApproval? = nil,
        audit: AuditEntry?
    ) throws -> Bool {
        try database.writing("storing change request \(proposal.id) of \"\(proposal.set)\"") { db in
            let updated = try db.run(
                """
                UPDATE change_request SET state = $1, decided_by = $2, decided_at = \(db.dialect.time(3)),
                    decision_reason = $4, applied_version = $5, failure = $6, apply_at = \(db.dialect.time(10))
                WHERE id = $7 AND set_name = $8 AND state = $9
                """,
                [
                    .text(proposal.state.rawValue), .text(proposal.decidedBy), .time(proposal.decidedAt),
                    .text(proposal.decisionReason), .integer(proposal.appliedVersion), .text(proposal.failure),
                    .integer(proposal.id), .text(proposal.set), .text(expected.rawValue), .time(proposal.applyAt),
                ])
            guard updated == 1 else { return false }
            if let approval {
                try db.run(
                    """
                    INSERT INTO change_request_approval (change_id, actor, time, reason)
                    VALUES ($1, $2, \(db.dialect.time(3)), $4)
                    """,
                    [.integer(proposal.id), .text(approval.actor), .time(approval.time), .text(approval.reason)])
            }
            if var audit {
                audit.subject = "change \(proposal.id)"
                _ = try db.insertAudit(audit, set: proposal.set)
            }
            return true
        }
    }

    /// The scheduled change requests whose time is `now` or past, on every set, soonest first, at most `limit`.
    package func due(at now: Date, limit: Int) throws -> [(set: String, id: Int, applyAt: Date)] {
        try database.reading("reading the scheduled change requests") { db in
            try db.rows(
                """
                SELECT set_name, id, \(db.dialect.microseconds(of: "apply_at")) FROM change_request
                WHERE state = 'scheduled' AND apply_at <= \(db.dialect.time(1)) ORDER BY apply_at, id LIMIT $2
                """,
                [.time(now), .integer(max(0, limit))]
            ) { (try $0.text(0), try $0.int(1), try $0.date(2)) }
        }
    }

    /// How many of the server's change requests are open (or approved) and how many scheduled, for `/metrics`.
    package func pending() throws -> (open: Int, scheduled: Int) {
        try database.reading("counting the change requests") { db in
            let counts = try db.rows(
                """
                SELECT state, count(*) FROM change_request WHERE state IN ('open', 'approved', 'scheduled')
                GROUP BY state
                """, []
            ) { (try $0.text(0), try $0.int(1)) }
            let byState = Dictionary(counts, uniquingKeysWith: +)
            return ((byState["open"] ?? 0) + (byState["approved"] ?? 0), byState["scheduled"] ?? 0)
        }
    }

    private static func bytes(_ bytes: [UInt8]?) -> SQLValue { bytes.map { .bytes($0) } ?? .null }

    /// The change requests of `set` that `condition` selects (in its order, with its limit; `arguments` bind its
    /// parameters), each with its items and approvals: three queries, however many requests.
    private static func read(
        where condition: String, _ arguments: [SQLValue], set: String, _ db: any SQLExecutor
    ) throws -> [StoredProposal] {
        let time = db.dialect.microseconds
        let proposals = try db.rows(
            """
            SELECT id, title, author, reason, allow_incompatible, base_version, \(time("created_at")), state,
                decided_by, \(time("decided_at")), decision_reason, applied_version, failure, \(time("apply_at"))
            FROM change_request WHERE \(condition)
            """,
            arguments
        ) { row -> StoredProposal in
            let id = try row.int(0)
            let stateText = try row.text(7)
            guard let state = StoredProposal.State(rawValue: stateText) else {
                throw StoreError.corrupt("change request \(id) has the unknown state \"\(stateText)\"")
            }
            var proposal = StoredProposal(
                set: set, title: try row.text(1), author: try row.text(2), reason: try row.optionalText(3),
                allowIncompatible: try row.int(4) != 0, baseVersion: try row.int(5), createdAt: try row.date(6),
                items: [:])
            proposal.id = id
            proposal.state = state
            proposal.decidedBy = try row.optionalText(8)
            proposal.decidedAt = try row.optionalDate(9)
            proposal.decisionReason = try row.optionalText(10)
            proposal.appliedVersion = try row.optionalInt(11)
            proposal.failure = try row.optionalText(12)
            proposal.applyAt = try row.optionalDate(13)
            return proposal
        }
        guard !proposals.isEmpty else { return [] }
        let ids = db.dialect.integerList(proposals.map(\.id))
        var items: [Int: [ItemKey: ProposedItem]] = [:]
        _ = try db.rows(
            """
            SELECT change_id, kind, item_key, before, after FROM change_request_item
            WHERE change_id \(db.dialect.isIn(list: 1))
            """,
            [ids]
        ) { row in
            let id = try row.int(0)
            let kindText = try row.text(1)
            guard let kind = ItemKind(rawValue: kindText) else {
                throw StoreError.corrupt("change request \(id) has an item of the unknown kind \"\(kindText)\"")
            }
            items[id, default: [:]][ItemKey(kind, try row.text(2))] = ProposedItem(
                before: try row.optionalBytes(3), after: try row.optionalBytes(4))
        }
        var approvals: [Int: [ProposalApproval]] = [:]
        _ = try db.rows(
            """
            SELECT change_id, actor, \(time("time")), reason FROM change_request_approval
            WHERE change_id \(db.dialect.isIn(list: 1)) ORDER BY time, actor
            """,
            [ids]
        ) { row in
            approvals[try row.int(0), default: []].append(
                ProposalApproval(actor: try row.text(1), time: try row.date(2), reason: try row.optionalText(3)))
        }
        return proposals.map { proposal in
            var proposal = proposal
            proposal.items = items[proposal.id] ?? [:]
            proposal.approvals = approvals[proposal.id] ?? []
            return proposal
        }
    }
}

/// A change request that a version applies: its state moves from `from` to `applied` in the version's own
/// transaction, so that the version and the request's end are stored together or not at all.
package struct ProposalApplication: Sendable, Hashable {
    /// The request.
    package var id: Int
    /// The state it must still be in; another state (someone decided first, another server applied it) undoes the
    /// version.
    package var from: StoredProposal.State
    /// Who applied it: a person, or `flagserver` for a scheduled change.
    package var by: String
    /// The reason given with the apply.
    package var reason: String?

    /// The application of request `id` from state `from`.
    package init(id: Int, from: StoredProposal.State, by: String, reason: String?) {
        self.id = id
        self.from = from
        self.by = by
        self.reason = reason
    }
}

extension SQLExecutor {
    /// Marks change request `application.id` of `set` applied as `version`, inside the transaction that stores the
    /// version; `StoreError.proposalMoved` (which undoes the transaction) when it is no longer in the state expected.
    func markApplied(_ application: ProposalApplication, set: String, version: Int, time: Date) throws {
        let moved = try run(
            """
            UPDATE change_request SET state = 'applied', applied_version = $1, decided_by = $2,
                decided_at = \(dialect.time(3)), decision_reason = $4
            WHERE id = $5 AND set_name = $6 AND state = $7
            """,
            [
                .integer(version), .text(application.by), .time(time), .text(application.reason),
                .integer(application.id), .text(set), .text(application.from.rawValue),
            ])
        guard moved == 1 else { throw StoreError.proposalMoved(id: application.id) }
    }
}
