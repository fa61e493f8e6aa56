import FlagCore
import Foundation

/// Under ``FlagClient/ApplyPolicy/manual`` a version waits for `activate()` across relaunches, as a fetched Remote
/// Config waits for `activate()`: the cache sets the activated version aside when a newer one arrives
/// (`Cache+Activated.swift`), a launch starts from it with the newest waiting, and `activate()` forgets it.
extension FlagClient {
    /// `newest` (the launch from the newest version cached), or, under `.manual`, the same launch starting from the
    /// activated version set aside with the newest waiting. The activated copy must be older than the newest, not
    /// below the verified bootstrap document's version, and verify like the cache; otherwise, and under the other
    /// policies, it is forgotten. A read-only client only ever reads the newest, and never writes.
    static func startFromActivated(
        _ newest: StartingSet, _ configuration: Configuration, verifier: SetVerifier?, now: Date,
        log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) -> StartingSet {
        guard let cache = newest.cache, !cache.readOnly else { return newest }
        let set = configuration.set
        do {
            if configuration.applyNewVersions == .manual, newest.cached != nil,
                let waiting = newest.source as? LazySource, let activated = try cache.activated(set: set),
                activated.version < waiting.version, activated.version >= newest.floor,
                let (index, patches) = try readCached(activated, set: set, verifier: verifier, log: log)
            {
                let inUse = LazySource(index: index, patches: patches)
                var starting = newest
                starting.source = inUse
                starting.state = naming(newest.state, inUse.version)
                starting.pending = waiting.withKills()
                starting.activated = (activated.document, patches)
                log(.debug, "starting from the activated set v\(inUse.version); v\(waiting.version) waits")
                return starting
            }
        } catch let error as SetRefusal {
            log(.error, "the activated set kept aside is not used: \(error.message); starting from the newest")
        } catch {
            log(.warning, "could not read the activated set kept aside (\(error)); starting from the newest")
        }
        do {
            try cache.discardActivated(set: set, now: now)
        } catch {
            log(.warning, "could not forget the activated set kept aside: \(error)")
        }
        return newest
    }

    /// `state`, naming `version` as the version in use.
    private static func naming(_ state: ClientState, _ version: Int) -> ClientState {
        switch state {
        case .cached: .cached(version: version)
        case .live: .live(version: version)
        case .refused(_, let refusal): .refused(version: version, refusal)
        case .defaultsOnly, .stale: state
        }
    }

    /// After `activate()` under `.manual`: the newest version cached is the activated one now, so the one set aside
    /// is forgotten (unless a newer one was stored meanwhile). A failure is logged; the next launch then starts from
    /// the version set aside, with the newest waiting again.
    func forgetActivated() {
        guard core.keepsActivated, let cache = core.cache else { return }
        do {
            try cache.discardActivated(set: configuration.set, activated: { core.activatedVersion }, now: core.now())
        } catch {
            core.log(.warning, "could not record the activation in the flag cache: \(error)")
        }
    }
}
