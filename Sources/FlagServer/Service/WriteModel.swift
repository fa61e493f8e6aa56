import FlagAPI
import FlagCore

/// Who made a change and why, for the audit log.
public struct ChangeNote: Sendable {
    /// The token name of whoever made the change.
    public var actor: String
    /// What was done, e.g. `flag.kill`.
    public var action: String
    /// What it was about, e.g. the flag key.
    public var subject: String?
    /// The reason given, if any.
    public var reason: String?
    /// Whether to write a change that active clients cannot evaluate (`allowIncompatible`); the audit says so.
    public var allowIncompatible: Bool

    /// A note of one change.
    public init(
        actor: String, action: String, subject: String? = nil, reason: String? = nil, allowIncompatible: Bool = false
    ) {
        self.actor = actor
        self.action = action
        self.subject = subject
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// What a write did: the state now served, and whether it made a new version (a change that changes nothing
/// makes none).
public struct WriteResult: Sendable {
    /// The state after the write.
    public var state: SetState
    /// Whether the write made a new version.
    public var createdVersion: Bool
    /// The state the write was made on; `nil` for a set the write created.
    public var previous: SetState?
    /// The items the write added, replaced or removed, sorted.
    public var changed: [ItemKey]
    /// What the write should tell its caller although it went ahead (the compatibility gate's `warn`).
    public var warnings: [String] = []

    /// The result of a write from `previous` to `state` that changed `changed`.
    public init(state: SetState, createdVersion: Bool, previous: SetState?, changed: [ItemKey] = []) {
        self.state = state
        self.createdVersion = createdVersion
        self.previous = previous
        self.changed = changed
    }

    /// The result of creating `state`, a new set.
    public static func created(_ state: SetState) -> WriteResult {
        WriteResult(state: state, createdVersion: true, previous: nil, changed: state.items.keys.sorted())
    }

    /// The answer to the write (`MutationResult`), carrying `item`'s bytes after it when the route names one.
    public func answer(naming item: ItemKey? = nil) -> MutationResult {
        let written = item.flatMap { item in
            state.bytes(of: item).map { json -> MutationResult.Item in
                switch item.kind {
                case .flag: .flag(key: item.key, json: json)
                case .cohort: .cohort(name: item.key, json: json)
                }
            }
        }
        return MutationResult(
            set: state.name, version: state.version, changed: createdVersion, item: written, warnings: warnings)
    }
}

/// What a write changes in a set: the flags and cohorts it writes, and those it removes (`nil`).
public struct SetEdit: Sendable {
    /// Flags written, by key; `nil` removes the flag.
    public var flags: [String: Flag?]
    /// Cohorts written, by name; `nil` removes the cohort.
    public var cohorts: [String: Cohort?]

    /// An edit of the given items.
    public init(flags: [String: Flag?] = [:], cohorts: [String: Cohort?] = [:]) {
        self.flags = flags
        self.cohorts = cohorts
    }

    /// Writes one flag.
    public static func flag(_ flag: Flag) -> SetEdit { SetEdit(flags: [flag.key: flag]) }
}
