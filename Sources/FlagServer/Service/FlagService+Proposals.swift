import FlagCore
import Foundation

/// Change requests (docs/reviews.md): a write held back as the items it would change, approved by another person,
/// then applied as one version through the same checks as any write.
extension FlagService {
    /// Stores `change`, made against `current`, as an open change request instead of a version.
    func propose(
        _ change: [ItemKey: [UInt8]?], to current: SetState, title: String, note: ChangeNote
    ) throws -> WriteResult {
        var items: [ItemKey: ProposedItem] = [:]
        for (item, after) in change { items[item] = ProposedItem(before: current.bytes(of: item), after: after) }
        let now = clock.now()
        let draft = StoredProposal(
            set: current.name, title: title, author: note.actor, reason: note.reason,
            allowIncompatible: note.allowIncompatible, baseVersion: current.version, createdAt: now, items: items)
        let what = [note.action, note.subject].compactMap { $0 }.joined(separator: " ")
        let audit = AuditRecord(
            actor: note.actor, action: "change.propose",
            reason: ["\(title) (\(what))", note.reason].compactMap { $0 }.joined(separator: "; "), subject: nil,
            time: now)
        let stored = try storeCall { try store.proposals.insert(draft, audit: audit) }
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

    /// Approves an open change request. Its author may not: a change needs a second person.
    package func approveProposal(_ set: String, id: Int, note: ChangeNote) throws -> StoredProposal {
        var proposal = try proposal(set, id: id)
        try Self.require(proposal, in: [.open], to: "approved")
        guard proposal.author != note.actor else {
            throw ServiceError.forbidden(
                "\"\(note.actor)\" proposed change request \(id) and may not approve it: another person must")
        }
        let approval = ProposalApproval(actor: note.actor, time: clock.now(), reason: note.reason)
        proposal.state = .approved
        proposal.approvals.append(approval)
        try decide(proposal, from: .open, approval: approval, note: note, action: "change.approve")
        return proposal
    }

    /// Rejects an open or approved change request.
    package func rejectProposal(_ set: String, id: Int, note: ChangeNote) throws -> StoredProposal {
        try close(set, id: id, as: .rejected, note: note, action: "change.reject")
    }

    /// Withdraws an open or approved change request: its author may, and an admin of the set (`mayWithdrawAny`).
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

    /// Writes an approved change request as one version, through the set's checks and the compatibility gate as any
    /// write (an open one too when `needsApproval` is `false`).
    ///
    /// An item it changes that changed since its base version is a 409 `change_conflict` naming it, and the request
    /// stays as it was; items it does not touch may have changed. A write the set's checks or the gate refuse leaves
    /// it `failed`, with the server's message.
    package func applyProposal(
        _ set: String, id: Int, note: ChangeNote, needsApproval: Bool
    ) throws -> (StoredProposal, WriteResult) {
        var proposal = try proposal(set, id: id)
        let state = proposal.state
        try Self.require(proposal, in: needsApproval ? [.approved] : [.open, .approved], to: "applied")
        var written = note
        written.action = "change.apply"
        written.subject = "change \(id)"
        written.allowIncompatible = proposal.allowIncompatible
        written.proposal = nil
        written.skipsReview = true
        let approvers = proposal.approvals.map(\.actor)
        written.reason = [
            "\(proposal.title), proposed by \(proposal.author)"
                + (approvers.isEmpty ? "" : ", approved by \(approvers.joined(separator: ", "))"),
            note.reason,
        ].compactMap { $0 }.joined(separator: "; ")
        let result: WriteResult
        do {
            result = try mutate(set, note: written) { current in try Self.edit(of: proposal, on: current) }
        } catch let error as ServiceError where error.status == 422 {
            proposal.state = .failed
            proposal.failure = error.message
            proposal.decidedBy = note.actor
            proposal.decidedAt = clock.now()
            try decide(proposal, from: state, note: note, action: "change.fail")
            throw error
        }
        proposal.state = .applied
        proposal.appliedVersion = result.state.version
        proposal.decidedBy = note.actor
        proposal.decidedAt = clock.now()
        proposal.decisionReason = note.reason
        try decide(proposal, from: state, note: nil, action: "change.applied")
        return (proposal, result)
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
            switch item.kind {
            case .flag:
                guard let bytes = change.after else {
                    edit.flags[item.key] = .some(nil)
                    continue
                }
                guard let flag = try? Flag.decode(bytes, key: item.key).0 else {
                    throw ServiceError.corrupt("change request \(proposal.id) holds an unreadable \(path)")
                }
                edit.flags[item.key] = flag
            case .cohort:
                guard let bytes = change.after else {
                    edit.cohorts[item.key] = .some(nil)
                    continue
                }
                guard let cohort = try? Cohort.decode(bytes).0 else {
                    throw ServiceError.corrupt("change request \(proposal.id) holds an unreadable \(path)")
                }
                edit.cohorts[item.key] = cohort
            }
        }
        return edit
    }

    /// Rejects or withdraws an open or approved change request.
    private func close(
        _ set: String, id: Int, as state: StoredProposal.State, note: ChangeNote, action: String
    ) throws -> StoredProposal {
        var proposal = try proposal(set, id: id)
        let before = proposal.state
        try Self.require(proposal, in: [.open, .approved], to: state == .rejected ? "rejected" : "withdrawn")
        proposal.state = state
        proposal.decidedBy = note.actor
        proposal.decidedAt = clock.now()
        proposal.decisionReason = note.reason
        try decide(proposal, from: before, note: note, action: action)
        return proposal
    }

    /// Stores a decision, audited as `action` unless `note` is `nil` (an apply, whose version is audited); a 409
    /// `change_state` when someone decided first.
    private func decide(
        _ proposal: StoredProposal, from state: StoredProposal.State, approval: ProposalApproval? = nil,
        note: ChangeNote?, action: String
    ) throws {
        let audit = note.map { note in
            AuditRecord(
                actor: note.actor, action: action, reason: proposal.failure ?? note.reason, subject: nil,
                time: clock.now())
        }
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
