import FlagAPI
import FlagCore
import Foundation

/// Who made a change and why, for the audit log.
package struct ChangeNote: Sendable {
    /// The token name of whoever made the change.
    package var actor: String
    /// What was done, e.g. `flag.kill`.
    package var action: String
    /// What it was about, e.g. the flag key.
    package var subject: String?
    /// The reason given, if any.
    package var reason: String?
    /// Whether to write a change that active clients cannot evaluate (`allowIncompatible`); the audit says so.
    package var allowIncompatible: Bool
    /// The change request to make instead of writing (`?propose=TITLE&at=TIME`); `nil` writes.
    package var proposal: ProposalDraft?
    /// The change request this write applies: it becomes `applied` in the transaction of the version.
    package var applies: ProposalApplication?
    /// Whether the write goes ahead on a set whose reviews are `required`: a kill or restore, a change request
    /// applied, or an unlimited admin's `?withoutReview=REASON`.
    package var skipsReview = false

    /// A note of one change.
    package init(
        actor: String, action: String, subject: String? = nil, reason: String? = nil, allowIncompatible: Bool = false
    ) {
        self.actor = actor
        self.action = action
        self.subject = subject
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// A change request to make of a write: its title, and when to apply it, for a scheduled change.
/// Only the routes make one, with the memberwise initializer Swift writes.
package struct ProposalDraft: Sendable, Hashable {
    /// What it does, in a line.
    package var title: String
    /// When the server is to apply it; `nil` when someone applies it by hand.
    package var applyAt: Date?
}

/// What a write did: the state now served, and whether it made a new version (a change that changes nothing
/// makes none).
package struct WriteResult: Sendable {
    /// The state after the write.
    package var state: SetState
    /// Whether the write made a new version.
    package var createdVersion: Bool
    /// The state the write was made on; `nil` for a set the write created.
    package var previous: SetState?
    /// The items the write added, replaced or removed, sorted.
    package var changed: [ItemKey]
    /// What the write should tell its caller although it went ahead (the compatibility gate's `warn`).
    package var warnings: [String] = []
    /// The change request the write became instead of a version (`ChangeNote.proposal`).
    package var proposal: StoredProposal?

    /// The result of a write from `previous` to `state` that changed `changed`.
    package init(state: SetState, createdVersion: Bool, previous: SetState?, changed: [ItemKey] = []) {
        self.state = state
        self.createdVersion = createdVersion
        self.previous = previous
        self.changed = changed
    }

    /// The result of creating `state`, a new set.
    package static func created(_ state: SetState) -> WriteResult {
        WriteResult(state: state, createdVersion: true, previous: nil, changed: state.items.keys.sorted())
    }

    /// The answer to the write (`MutationResult`), carrying `item`'s bytes after it when the route names one.
    package func answer(naming item: ItemKey? = nil) -> MutationResult {
        let written = item.flatMap { item in
            state.bytes(of: item).map { json -> MutationResult.Item in
                switch item.kind {
                case .flag: .flag(key: item.key, json: json)
                case .cohort: .cohort(name: item.key, json: json)
                }
            }
        }
        return MutationResult(
            set: state.name, version: state.version, changed: createdVersion, item: written, warnings: warnings,
            changeRequest: proposal?.id)
    }
}

/// What a write changes in a set: the flags and cohorts it writes, and those it removes (`nil`).
package struct SetEdit: Sendable {
    /// Flags written, by key; `nil` removes the flag.
    package var flags: [String: Flag?]
    /// Cohorts written, by name; `nil` removes the cohort.
    package var cohorts: [String: Cohort?]

    /// An edit of the given items.
    package init(flags: [String: Flag?] = [:], cohorts: [String: Cohort?] = [:]) {
        self.flags = flags
        self.cohorts = cohorts
    }

    /// Writes one flag.
    package static func flag(_ flag: Flag) -> SetEdit { SetEdit(flags: [flag.key: flag]) }
}
