import FlagAPI
import FlagCore
import FlagHTTP
import Foundation

/// `/v1/admin/sets/{set}/changes/...`: change requests (docs/reviews.md).
extension FlagServerApp {
    /// `GET …/changes?state=&limit=`: newest first.
    func listChanges(_ call: Call, _ query: ChangeListQuery) throws -> Reply<ChangeList> {
        var states: Set<StoredProposal.State>?
        if let text = query.state {
            var wanted: Set<StoredProposal.State> = []
            for name in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let state = StoredProposal.State(rawValue: String(name)) else {
                    let known = StoredProposal.State.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ServiceError.badRequest("state \"\(name)\" is not one of \(known)", path: "state")
                }
                wanted.insert(state)
            }
            states = wanted
        }
        let limit = query.limit ?? 100
        guard (1...Self.changeListLimit).contains(limit) else {
            throw ServiceError.badRequest("limit must be from 1 to \(Self.changeListLimit)", path: "limit")
        }
        let proposals = try service.proposals(call.set, states: states, limit: limit)
        return Reply(ChangeList(set: call.set, changes: proposals.map(Self.info)))
    }

    /// The most change requests one list answers.
    static let changeListLimit = 1_000

    /// `GET …/changes/{n}`: the request, and its diff against the current version.
    func getChange(_ call: Call) throws -> Reply<ChangeAnswer> {
        let proposal = try service.proposal(call.set, id: try changeID(call))
        let current = try requireState(call)
        let conflicts = FlagService.conflicts(of: proposal, with: current)
        let (flags, cohorts) = Self.diff(proposal) { item, _ in current.bytes(of: item) }
        return Reply(
            ChangeAnswer(
                change: Self.info(proposal), currentVersion: current.version,
                conflicts: conflicts.map { ChangedItem(kind: $0.kind.rawValue, key: $0.key) }, flags: flags,
                cohorts: cohorts))
    }

    /// `POST …/changes/{n}/approve`.
    func approveChange(_ call: Call, _ request: ChangeRequest) throws -> Reply<ChangeInfo> {
        let note = ChangeNote(actor: call.actor, action: "change.approve", reason: request.reason)
        return Reply(Self.info(try service.approveProposal(call.set, id: try changeID(call), note: note)))
    }

    /// `POST …/changes/{n}/reject`.
    func rejectChange(_ call: Call, _ request: ChangeRequest) throws -> Reply<ChangeInfo> {
        let note = ChangeNote(actor: call.actor, action: "change.reject", reason: request.reason)
        return Reply(Self.info(try service.rejectProposal(call.set, id: try changeID(call), note: note)))
    }

    /// `DELETE …/changes/{n}`: by its author, or an admin of the set.
    func withdrawChange(_ call: Call, _ request: ChangeRequest) throws -> Reply<ChangeInfo> {
        let caller = try adminCaller(call)
        let note = ChangeNote(actor: call.actor, action: "change.withdraw", reason: request.reason)
        let proposal = try service.withdrawProposal(
            call.set, id: try changeID(call), note: note, mayWithdrawAny: caller.role >= .admin)
        return Reply(Self.info(proposal))
    }

    /// `POST …/changes/{n}/schedule`: a new time.
    func scheduleChange(_ call: Call, _ request: ScheduleRequest) throws -> Reply<ChangeInfo> {
        let note = ChangeNote(actor: call.actor, action: "change.schedule", reason: request.reason)
        return Reply(
            Self.info(try service.rescheduleProposal(call.set, id: try changeID(call), at: request.at, note: note)))
    }

    /// `POST …/changes/{n}/apply`: one new version, with the version's `ETag`.
    func applyChange(_ call: Call, _ request: ChangeRequest) throws -> Reply<ChangeInfo> {
        let note = ChangeNote(actor: call.actor, action: "change.apply", reason: request.reason)
        let (proposal, result) = try service.applyProposal(call.set, id: try changeID(call), note: note)
        return Reply(Self.info(proposal), version: result.state.version)
    }

    /// The path's `{n}`, a change request's id.
    private func changeID(_ call: Call) throws -> Int {
        let text = call.parameters.version
        guard let id = Int(text), id >= 1 else {
            throw ServiceError.badRequest("a change request's id is a positive integer, not \"\(text)\"", path: "n")
        }
        return id
    }

    /// A stored change request as the API shows it: each item at the base version and as it writes it.
    static func info(_ proposal: StoredProposal) -> ChangeInfo {
        let (flags, cohorts) = diff(proposal) { _, change in change.before }
        return ChangeInfo(
            id: proposal.id, set: proposal.set, title: proposal.title, state: proposal.state.rawValue,
            author: proposal.author, reason: proposal.reason, baseVersion: proposal.baseVersion,
            createdAt: proposal.createdAt, applyAt: proposal.applyAt,
            approvals: proposal.approvals.map { ChangeApproval(actor: $0.actor, time: $0.time, reason: $0.reason) },
            decidedBy: proposal.decidedBy, decidedAt: proposal.decidedAt, decisionReason: proposal.decisionReason,
            appliedVersion: proposal.appliedVersion, failure: proposal.failure, flags: flags, cohorts: cohorts)
    }

    /// The request's items, sorted, each from `before` to what the request writes.
    private static func diff(
        _ proposal: StoredProposal, before: (ItemKey, ProposedItem) -> [UInt8]?
    ) -> (flags: [ItemDiff], cohorts: [ItemDiff]) {
        var flags: [ItemDiff] = []
        var cohorts: [ItemDiff] = []
        for (item, change) in proposal.items.sorted(by: { $0.key < $1.key }) {
            let diff = ItemDiff(
                key: item.key, before: before(item, change).map(RawJSON.init(bytes:)),
                after: change.after.map(RawJSON.init(bytes:)))
            if item.kind == .flag { flags.append(diff) } else { cohorts.append(diff) }
        }
        return (flags, cohorts)
    }
}

extension Call {
    /// The most characters of a change request's title.
    static let proposalTitleLimit = 200

    /// `?propose=TITLE&at=TIME`: the change request a write is to become, scheduled at `TIME` (RFC 3339) when it is
    /// given; `nil` without `propose`.
    func proposalDraft() throws -> ProposalDraft? {
        let at = try request.query("at").map { text in
            do {
                return try ISO8601.date(from: text)
            } catch {
                throw ServiceError.badRequest(
                    "at must be a time such as 2026-12-07T09:00:00Z (RFC 3339), not \"\(text)\"", path: "at")
            }
        }
        guard let title = try proposalTitle() else {
            if at != nil {
                throw ServiceError.badRequest("at schedules a change request: it goes with propose=TITLE", path: "at")
            }
            return nil
        }
        return ProposalDraft(title: title, applyAt: at)
    }

    /// `?propose=TITLE`, checked; `nil` when absent.
    private func proposalTitle() throws -> String? {
        guard let title = request.query("propose") else { return nil }
        let trimmed = title.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            throw ServiceError.badRequest("propose needs a title: ?propose=Turn+the+banner+on", path: "propose")
        }
        guard trimmed.count <= Self.proposalTitleLimit else {
            throw ServiceError.badRequest(
                "propose: the title is \(trimmed.count) characters; at most \(Self.proposalTitleLimit)",
                path: "propose")
        }
        if let refusal = trimmed.controlCharacterRefusal() {
            throw ServiceError.badRequest("propose: the title \(refusal)", path: "propose")
        }
        return trimmed
    }
}
