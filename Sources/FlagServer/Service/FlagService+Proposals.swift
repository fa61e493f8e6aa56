import FlagAPI
import FlagCore
import Foundation

/// Change requests (docs/reviews.md): a write held back as the items it would change, approved by another person,
/// then applied as one version through the same checks as any write, by hand or by the server at its `applyAt`.
extension FlagService {
    /// Stores `change`, made against `current`, as a change request instead of a version: `open`, or `scheduled`
    /// when it has a time and the set does not require reviews.
    func propose(
        _ change: [ItemKey: [UInt8]?], to current: SetState, draft: ProposalDraft, note: ChangeNote
    ) throws -> WriteResult {
        let now = clock.now()
        if let applyAt = draft.applyAt, applyAt <= now {
            throw ServiceError.badRequest(
                "at: \(ISO8601.format(applyAt)) is not in the future (now \(ISO8601.format(now)))", path: "at")
        }
        var items: [ItemKey: ProposedItem] = [:]
        for (item, after) in change { items[item] = ProposedItem(before: current.bytes(of: item), after: after) }
        var draftRecord = StoredProposal(
            set: current.name, title: draft.title, author: note.actor, reason: note.reason,
            allowIncompatible: note.allowIncompatible, baseVersion: current.version, createdAt: now,
            applyAt: draft.applyAt, items: items)
        if draft.applyAt != nil, try settings(current.name).reviews == .off { draftRecord.state = .scheduled }
        let what = [note.action, note.subject].compactMap { $0 }.joined(separator: " ")
        let when = draft.applyAt.map { ", at \(ISO8601.format($0))" } ?? ""
        let audit = AuditEntry(
            time: now, actor: note.actor, action: "change.propose",
            reason: ["\(draft.title) (\(what)\(when))", note.reason].compactMap { $0 }.joined(separator: "; "))
        let stored = try storeCall { try store.proposals.insert(draftRecord, audit: audit) }
        var result = WriteResult(
            state: current, createdVersion: false, previous: current, changed: change.keys.sorted())
        result.proposal = stored
        return result
    }

    /// The set's settings; the defaults for a set that has none stored.
    package func settings(_ set: String) throws -> SetSettings {
        try storeCall { try store.settings.read(set: set) }
    }

    /// The set's change requests, newest first; only those in `states` when it is given.
    package func proposals(
        _ set: String, states: Set<StoredProposal.State>? = nil, limit: Int = 100
    ) throws -> [StoredProposal] {
        _ = try requireState(set)
        return try storeCall { try store.proposals.proposals(set: set, states: states, limit: limit) }
    }

    /// One change request of the set, or a 404.
    package func proposal(_ set: String, id: Int) throws -> StoredProposal {
        _ = try requireState(set)
        guard let proposal = try storeCall({ try store.proposals.proposal(set: set, id: id) }) else {
            throw ServiceError.notFound("set \"\(set)\" has no change request \(id)", path: "n", subject: .change)
        }
        return proposal
    }

    /// Approves an open change request: `approved`, or `scheduled` when it has a time. Its author may not: a change
    /// needs a second person.
    package func approveProposal(_ set: String, id: Int, note: ChangeNote) throws -> StoredProposal {
        var proposal = try proposal(set, id: id)
        try Self.require(proposal, in: [.open], to: "approved")
        guard proposal.author != note.actor else {
            throw ServiceError.forbidden(
                "\"\(note.actor)\" proposed change request \(id) and may not approve it: another person must")
        }
        let approval = ProposalApproval(actor: note.actor, time: clock.now(), reason: note.reason)
        proposal.state = proposal.applyAt == nil ? .approved : .scheduled
        proposal.approvals.append(approval)
        try decide(proposal, from: .open, approval: approval, note: note, action: "change.approve")
        return proposal
    }

    /// Rejects a change request that has not been applied.
    package func rejectProposal(_ set: String, id: Int, note: ChangeNote) throws -> StoredProposal {
        try close(set, id: id, as: .rejected, note: note, action: "change.reject")
    }

    /// Withdraws a change request that has not been applied: its author may, and an admin of the set
    /// (`mayWithdrawAny`).
    package func withdrawProposal(
        _ set: String, id: Int, note: ChangeNote, mayWithdrawAny: Bool
    ) throws -> StoredProposal {
        let proposal = try proposal(set, id: id)
        guard proposal.author == note.actor || mayWithdrawAny else {
            throw ServiceError.forbidden(
                "change request \(id) is \"\(proposal.author)\"'s: only its author or an admin of the set may "
                    + "withdraw it (\"\(note.actor)\" may reject it)")
        }
        return try close(set, id: id, as: .withdrawn, note: note, action: "change.withdraw")
    }

    /// Gives a change request that has not been applied a new time: an approved one becomes `scheduled`, and so
    /// does an open one on a set that does not require reviews.
    package func rescheduleProposal(_ set: String, id: Int, at: Date, note: ChangeNote) throws -> StoredProposal {
        var proposal = try proposal(set, id: id)
        let before = proposal.state
        try Self.require(proposal, in: [.open, .approved, .scheduled], to: "scheduled")
        let now = clock.now()
        guard at > now else {
            throw ServiceError.badRequest(
                "at: \(ISO8601.format(at)) is not in the future (now \(ISO8601.format(now)))", path: "at")
        }
        proposal.applyAt = at
        let reviews = try settings(set).reviews
        if before == .approved || (before == .open && reviews == .off) { proposal.state = .scheduled }
        try decide(proposal, from: before, note: note, action: "change.schedule")
        return proposal
    }

    /// Writes a change request as one version, through the set's checks and the compatibility gate as any write: an
    /// approved or scheduled one, or an open one on a set that does not require reviews. `scheduledLateness` is set
    /// when the server applies a scheduled change at its time: how long after it.
    ///
    /// The version and the request's `applied` are stored in one transaction, so that a request is applied once
    /// however many servers try. An item it changes that changed since its base version is a 409 `change_conflict`
    /// naming it; the request stays as it was, unless the server was applying it at its time. A write the set's
    /// checks or the gate refuse leaves the request `failed`, with the server's message.
    package func applyProposal(
        _ set: String, id: Int, note: ChangeNote, scheduledLateness: Double? = nil
    ) throws -> (StoredProposal, WriteResult) {
        var proposal = try proposal(set, id: id)
        let state = proposal.state
        let allowed: [StoredProposal.State]
        if scheduledLateness != nil {
            allowed = [.scheduled]
        } else if try settings(set).reviews == .required {
            allowed = [.approved, .scheduled]
        } else {
            allowed = [.open, .approved, .scheduled]
        }
        try Self.require(proposal, in: allowed, to: "applied")
        var written = note
        written.action = "change.apply"
        written.subject = "change \(id)"
        written.allowIncompatible = proposal.allowIncompatible
        written.proposal = nil
        written.skipsReview = true
        written.applies = ProposalApplication(id: id, from: state, by: note.actor, reason: note.reason)
        written.reason = Self.applyReason(proposal, lateness: scheduledLateness, given: note.reason)
        let result: WriteResult
        do {
            result = try mutate(set, note: written) { current in try Self.edit(of: proposal, on: current) }
        } catch let error as ServiceError {
            // Someone decided on it, or another server applied it, meanwhile: what they did stands.
            let now = try self.proposal(set, id: id)
            guard now.state == state else {
                throw ServiceError.changeState("change request \(id) is \(now.state.rawValue) now: \(error.message)")
            }
            guard error.refusesTheWrite || (error.isChangeConflict && scheduledLateness != nil) else { throw error }
            proposal.state = .failed
            proposal.failure = error.message
            proposal.decidedBy = note.actor
            proposal.decidedAt = clock.now()
            try decide(proposal, from: state, note: note, action: "change.fail")
            throw error
        }
        if !result.createdVersion {
            // Every item is already as the request writes it: nothing to write, and nothing left to do.
            proposal.appliedVersion = result.state.version
            proposal.state = .applied
            proposal.decidedBy = note.actor
            proposal.decidedAt = clock.now()
            proposal.decisionReason = note.reason
            var unchanged = written
            unchanged.reason = [written.reason, "nothing to change"].compactMap { $0 }.joined(separator: "; ")
            try decide(proposal, from: state, note: unchanged, action: "change.apply")
            return (proposal, result)
        }
        proposal.state = .applied
        proposal.appliedVersion = result.state.version
        proposal.decidedBy = note.actor
        proposal.decidedAt = result.state.updatedAt ?? clock.now()
        proposal.decisionReason = note.reason
        return (proposal, result)
    }

    /// Applies the scheduled change requests that are due, soonest first; returns how late each applied one was, in
    /// seconds. A request another server applied first is left to it; one that fails is `failed`, and logged.
    package func applyDueProposals() -> [Double] {
        let now = clock.now()
        let due: [(set: String, id: Int, applyAt: Date)]
        do {
            due = try storeCall { try store.proposals.due(at: now, limit: Self.dueBatch) }
        } catch {
            log("reading the scheduled change requests failed: \(error)")
            return []
        }
        var lateness: [Double] = []
        for change in due where state(change.set) != nil {
            let late = max(0, clock.now().timeIntervalSince(change.applyAt))
            do {
                _ = try applyProposal(
                    change.set, id: change.id, note: ChangeNote(actor: "flagserver", action: "change.apply"),
                    scheduledLateness: late)
                lateness.append(late)
            } catch let error as ServiceError where error.isChangeState {
                continue
            } catch {
                log("scheduled change request \(change.id) of set \"\(change.set)\" failed: \(error)")
            }
        }
        return lateness
    }

    /// The most scheduled change requests one pass of the scheduler applies; the rest wait for the next pass.
    static let dueBatch = 100

    /// The audit reason of the version that applies `proposal`: its title, author and approvers, how late a
    /// scheduled change came, and the reason given.
    private static func applyReason(_ proposal: StoredProposal, lateness: Double?, given: String?) -> String {
        let approvers = proposal.approvals.map(\.actor)
        var parts = [
            "\(proposal.title), proposed by \(proposal.author)"
                + (approvers.isEmpty ? "" : ", approved by \(approvers.joined(separator: ", "))")
        ]
        if let lateness, let applyAt = proposal.applyAt {
            let late =
                lateness < 1 ? "" : ", \(Int(lateness.rounded())) s late (the server was not running at that time)"
            parts.append("scheduled for \(ISO8601.format(applyAt))\(late)")
        }
        if let given { parts.append(given) }
        return parts.joined(separator: "; ")
    }

    /// The items of `proposal` that changed in `current` since its base version.
    package static func conflicts(of proposal: StoredProposal, with current: SetState) -> [ItemKey] {
        proposal.items.filter { item, change in current.bytes(of: item) != change.before }.keys.sorted()
    }

    /// The edit that applies `proposal` to `current`; a 409 `change_conflict` when an item it changes has changed.
    private static func edit(of proposal: StoredProposal, on current: SetState) throws -> SetEdit {
        let conflicts = conflicts(of: proposal, with: current)
        guard conflicts.isEmpty else {
            throw ServiceError.changeConflict(
                "change request \(proposal.id) was made on version \(proposal.baseVersion), and since then "
                    + "\(conflicts.map(\.description).joined(separator: ", ")) changed (now version "
                    + "\(current.version)); see its diff (GET …/changes/\(proposal.id)), then withdraw it and "
                    + "propose it again")
        }
        var edit = SetEdit()
        for (item, change) in proposal.items {
            let path = "\(item.kind == .flag ? "flags" : "cohorts").\(item.key)"
            do {
                switch (item.kind, change.after) {
                case (.flag, nil): edit.flags[item.key] = .some(nil)
                case (.cohort, nil): edit.cohorts[item.key] = .some(nil)
                case (.flag, let bytes?):
                    let (flag, problems) = try Flag.decode(bytes, key: item.key)
                    guard let flag else { throw StoreError.corrupt("\(problems)") }
                    edit.flags[item.key] = flag
                case (.cohort, let bytes?):
                    let (cohort, problems) = try Cohort.decode(bytes)
                    guard let cohort else { throw StoreError.corrupt("\(problems)") }
                    edit.cohorts[item.key] = cohort
                }
            } catch {
                throw ServiceError.corrupt(
                    "change request \(proposal.id) holds an unreadable \(path) (\(error)); withdraw it and propose it again"
                )
            }
        }
        return edit
    }

    /// Rejects or withdraws a change request that has not been applied.
    private func close(
        _ set: String, id: Int, as state: StoredProposal.State, note: ChangeNote, action: String
    ) throws -> StoredProposal {
        var proposal = try proposal(set, id: id)
        let before = proposal.state
        try Self.require(
            proposal, in: [.open, .approved, .scheduled], to: state == .rejected ? "rejected" : "withdrawn")
        proposal.state = state
        proposal.decidedBy = note.actor
        proposal.decidedAt = clock.now()
        proposal.decisionReason = note.reason
        try decide(proposal, from: before, note: note, action: action)
        return proposal
    }

    /// Stores a decision, audited as `action`; a 409 `change_state` when someone decided first.
    private func decide(
        _ proposal: StoredProposal, from state: StoredProposal.State, approval: ProposalApproval? = nil,
        note: ChangeNote, action: String
    ) throws {
        let audit = AuditEntry(
            time: clock.now(), actor: note.actor, action: action, reason: proposal.failure ?? note.reason)
        let stored = try storeCall {
            try store.proposals.update(proposal, from: state, approval: approval, audit: audit)
        }
        guard stored else {
            throw ServiceError.changeState(
                "change request \(proposal.id) was decided by someone else meanwhile; read it again")
        }
    }

    /// A 409 `change_state` unless `proposal` is in one of `states`.
    private static func require(
        _ proposal: StoredProposal, in states: [StoredProposal.State], to verb: String
    ) throws {
        guard !states.contains(proposal.state) else { return }
        let allowed = states.map(\.rawValue).joined(separator: " or ")
        throw ServiceError.changeState(
            "change request \(proposal.id) is \(proposal.state.rawValue); only one that is \(allowed) can be \(verb)")
    }
}
