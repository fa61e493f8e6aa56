import FlagCore
import Foundation

/// The set in use and, under an apply policy that holds new versions (`.nextLaunch`, `.manual`), the newest set
/// received that waits. Kills do not wait: each flag a waiting set kills is served killed at once, from the
/// compiled set that killed it, until the waiting set is put in use. A restore (a flag killed in the set in use and
/// not in a waiting one, or killed in one waiting set and not in a newer one) waits like any other change: serving
/// a flag killed a little longer is the safe direction.
struct HeldVersions: Sendable {
    /// The set in use, without the kills of a waiting one. Under `.nextSession`, the client's source itself.
    var inUse: (any EvaluationSource)?
    /// The newest set received, not yet in use.
    var pending: (any EvaluationSource)?
    /// The flags killed by the sets received since the set in use, with the compiled set that killed each.
    var pierced: [String: (value: JSONValue, compiled: CompiledFlagSet)] = [:]

    /// What sessions evaluate: the set in use itself (the same object, so that reads cost what they did), or the
    /// set in use under the kills of the waiting sets.
    var source: (any EvaluationSource)? {
        guard let inUse, !pierced.isEmpty else { return inUse }
        return KilledOverSource(base: inUse, pierced: pierced)
    }

    /// `state` naming the version in use: the refresh loop names the server's newest, which may be waiting.
    func naming(_ state: ClientState) -> ClientState {
        guard let version = inUse?.version else { return state }
        switch state {
        case .live: return .live(version: version)
        case .cached: return .cached(version: version)
        case .defaultsOnly, .stale, .refused: return state
        }
    }
}

extension ClientCore.Current {
    /// Takes a set the refresh loop received: in use at once without `holding`, when no set is in use (a first
    /// launch with neither cache nor bootstrap document would otherwise serve compiled defaults all along), or when
    /// it is the version in use in another form; else it waits, its kills applied.
    mutating func receive(_ new: any EvaluationSource, holding: Bool) {
        if !holding || versions.inUse == nil {
            versions = HeldVersions(inUse: new)
        } else if new.version == versions.inUse?.version {
            versions.inUse = new
        } else {
            versions.pending = new
            let killedInUse = versions.inUse?.killed ?? [:]
            for (key, value) in new.killed ?? [:] where killedInUse[key] == nil {
                versions.pierced[key] = (value, new.compiled(for: key))
            }
        }
        source = versions.source
    }
}

/// The set in use, and the kills of the waiting sets over it: a flag killed in a waiting set evaluates from the set
/// that killed it (to its kill value), every other flag from the set in use. Only new sessions' first reads come
/// here, and only while a killed flag waits; the set in use is used directly otherwise.
final class KilledOverSource: EvaluationSource {
    let base: any EvaluationSource
    private let kills: [String: CompiledFlagSet]
    let killed: [String: JSONValue]?

    init(base: any EvaluationSource, pierced: [String: (value: JSONValue, compiled: CompiledFlagSet)]) {
        self.base = base
        self.kills = pierced.mapValues(\.compiled)
        var killed = base.killed ?? [:]
        for (key, kill) in pierced { killed[key] = kill.value }
        self.killed = killed
    }

    /// The version in use: what a session's details and the client's state name.
    var version: Int { base.version }

    func compiled(for key: String) -> CompiledFlagSet {
        kills[key] ?? base.compiled(for: key)
    }

    /// The set in use's: a waiting set's kills change no flag's presence.
    var flagKeys: Set<String> { base.flagKeys }

    /// As every source evaluates, except that a flag requiring one a waiting set killed sees that flag's kill value
    /// (a killed prerequisite's dependents follow the kill, whichever set they come from), unless the session froze
    /// the prerequisite: an open session's frozen value is the kill value already, once the kill reached it.
    func evaluation(
        _ handle: FlagHandle, type: FlagType, context: EvaluationContext, frozen: PrerequisiteLookup,
        clock now: () -> Date
    ) -> Evaluation {
        let killedByWaiting = { (slot: Int, key: () -> String) -> FrozenPrerequisite in
            let key = key()
            let frozenValue = frozen(slot, { key })
            guard case .notFrozen = frozenValue, self.kills[key] != nil, let value = self.killed?[key] else {
                return frozenValue
            }
            return .served(value)
        }
        return evaluation(
            in: compiled(for: handle.key), handle, type: type, context: context, frozen: killedByWaiting, clock: now)
    }
}

/// The set in use and the waiting one before and after a change, for what follows it outside the lock.
struct VersionChange {
    struct Side {
        let source: (any EvaluationSource)?
        let state: ClientState
        let versions: Versions

        init(_ current: ClientCore.Current) {
            source = current.source
            state = current.state
            versions = Versions(inUse: current.versions.inUse?.version, pending: current.versions.pending?.version)
        }
    }

    struct Versions: Equatable {
        let inUse: Int?
        let pending: Int?
    }

    let before: Side
    let after: Side
}

extension ClientCore {
    /// The newest set received, waiting or in use: what the refresh loop applies a patch over.
    var newestSource: (any EvaluationSource)? {
        current.withLock { $0.versions.pending ?? $0.versions.inUse }
    }

    /// Under `.manual`, the version in use, for the cache to set aside before it stores a newer one; `nil` under the
    /// other policies.
    var activatedVersion: Int? {
        guard keepsActivated else { return nil }
        return current.withLock { $0.versions.inUse?.version }
    }

    /// Replaces the set in use with the same version in another form (the activated version compiled whole in the
    /// background), while that version is still in use; it never waits. Sessions see the same flags, so nothing is
    /// announced.
    func replaceInUse(_ source: any EvaluationSource) {
        current.withLock { current in
            guard current.versions.inUse?.version == source.version else { return }
            current.versions.inUse = source
            current.source = current.versions.source
        }
    }

    /// The version waiting under `.nextLaunch` or `.manual`.
    var pendingVersion: Int? {
        current.withLock { $0.versions.pending?.version }
    }

    /// Puts the waiting set in use; `false` when none waits. Its kills are in use already; a flag it restores
    /// serves again in new sessions (open sessions keep a kill, as always).
    func activate() -> Bool {
        change { current in
            guard let pending = current.versions.pending else { return false }
            current.versions = HeldVersions(inUse: pending)
            current.source = pending
            current.state = current.versions.naming(current.state)
            return true
        }
    }

    /// The app went to the background: a live state becomes stale, since nothing refreshes it until `resume()`.
    func suspended() {
        change { current in
            guard case .live = current.state else { return false }
            current.state = .stale(since: dependencies.now().addingTimeInterval(current.skew))
            return true
        }
    }
}
