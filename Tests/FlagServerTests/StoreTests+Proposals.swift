import FlagAPI
import FlagServer
import FlagTestSupport
import Foundation
import Testing

/// The change-request part of the `FlagStore` contract, on every store (PostgreSQL when a cluster is given).
extension StoreTests {
    private static let proposedAt = Date(timeIntervalSince1970: 1_800_000_000.25)

    private static func draft(_ title: String) -> StoredProposal {
        StoredProposal(
            set: "ios", title: title, author: "alice", reason: "why", allowIncompatible: true, baseVersion: 1,
            createdAt: proposedAt,
            items: [
                .flag("a"): ProposedItem(before: Array(#"{"type":"bool"}"#.utf8), after: nil),
                .cohort("c"): ProposedItem(before: nil, after: Array(#"{"include":["u"]}"#.utf8)),
            ])
    }

    @Test(arguments: StoreKind.allCases)
    func changeRequestsKeepTheirItemsApprovalsAndDecisions(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.fill(store)
            let audit = AuditEntry(time: Self.proposedAt, actor: "alice", action: "change.propose")
            let first = try store.proposals.insert(Self.draft("one"), audit: audit)
            let second = try store.proposals.insert(Self.draft("two"), audit: audit)
            #expect(second.id > first.id)
            var read = try #require(try store.proposals.proposal(set: "ios", id: first.id))
            #expect(read == first)
            #expect(read.items[.flag("a")]?.after == nil)
            #expect(try store.proposals.proposal(set: "android", id: first.id) == nil)
            #expect(try store.auditLog.records(set: "ios", limit: 1).first?.subject == "change \(second.id)")

            let approval = ProposalApproval(actor: "bob", time: Self.proposedAt.addingTimeInterval(60), reason: "ok")
            read.state = .approved
            read.approvals = [approval]
            let decided = AuditEntry(time: approval.time, actor: "bob", action: "change.approve", reason: "ok")
            #expect(try store.proposals.update(read, from: .open, approval: approval, audit: decided))
            // Someone else decided first: the state is no longer `open`, and nothing is stored.
            #expect(try !store.proposals.update(read, from: .open, approval: approval, audit: decided))
            #expect(try store.proposals.proposal(set: "ios", id: first.id) == read)

            read.state = .applied
            read.appliedVersion = 2
            read.decidedBy = "carol"
            read.decidedAt = approval.time
            #expect(try store.proposals.update(read, from: .approved, audit: nil))
            #expect(try store.proposals.proposal(set: "ios", id: first.id) == read)
            #expect(try store.auditLog.records(set: "ios", limit: 1).first?.action == "change.approve")

            let all = try store.proposals.proposals(set: "ios", states: nil, limit: 10)
            #expect(all.map(\.title) == ["two", "one"])
            #expect(try store.proposals.proposals(set: "ios", states: [.open], limit: 10).map(\.title) == ["two"])
            #expect(try store.proposals.proposals(set: "ios", states: [], limit: 10).isEmpty)
            #expect(try store.proposals.proposals(set: "ios", states: nil, limit: 1).count == 1)
            #expect(throws: StoreError.self) { try store.proposals.proposals(set: "nope", states: nil, limit: 1) }
            var lost = Self.draft("lost")
            lost.set = "nope"
            #expect(throws: StoreError.self) { try store.proposals.insert(lost, audit: audit) }
        }
    }
}
