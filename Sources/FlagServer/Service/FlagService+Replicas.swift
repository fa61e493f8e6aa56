import FlagCore
import Foundation

/// Catching up on what other servers sharing the store wrote.
extension FlagService {
    /// Brings `set` up to the store's current version: loads only the items changed since the version served, and
    /// publishes them to this server's streams, long-polls and ETags as a local write would. A set this server has
    /// not seen is loaded whole. Returns whether there was a newer version.
    @discardableResult
    package func catchUp(_ set: String) throws -> Bool {
        try writeLock.withLock { _ in try catchUpHoldingWriteLock(set) }
    }

    /// `catchUp`, for a caller that holds the write lock already (a write that lost a race to another server).
    func catchUpHoldingWriteLock(_ set: String) throws -> Bool {
        guard let current = registry.state(set) else {
            let snapshot = try storeCall { try store.snapshot(set: set, version: nil) }
            registry.install(try storeCall { try servingState(try Self.state(of: snapshot)) })
            return true
        }
        let changes = try storeCall { try store.changes(set: set, since: current.version) }
        guard changes.version > current.version else { return false }
        var change: [ItemKey: [UInt8]?] = [:]
        for (item, bytes) in changes.items where bytes != current.bytes(of: item) {
            change[item] = bytes
        }
        let state = try storeCall { try servingState(try next(after: current, changes: changes, change: change)) }
        // The stored signed patch of a version applies to the version before it only.
        let patch =
            state.isSigned && changes.version == current.version + 1
            ? try storeCall { try store.signing.body(set: set, version: changes.version, .patch) } : nil
        // Without a signed patch a signed version goes out as a put of its signed document: made here, on the
        // documents executor, before it is published.
        let put = state.isSigned && patch == nil ? documents.sync { makeServed(state) } : nil
        publish(
            SetUpdate(state: state, base: current.version, changed: change, signedPatch: patch, put: put),
            replacing: current, served: put)
        return true
    }

    /// The state `changes` leads to from `current`: only the changed items compiled, unless one of them cannot be
    /// read by this server (a newer server wrote it) or the result's digest differs from the stored one; then the
    /// whole version is loaded, as at start.
    private func next(after current: SetState, changes: SetChanges, change: [ItemKey: [UInt8]?]) throws -> SetState {
        var flags: [String: Flag?] = [:]
        var cohorts: [String: Cohort?] = [:]
        var readable = true
        for (item, bytes) in change {
            switch (item.kind, bytes) {
            case (.flag, nil): flags[item.key] = .some(nil)
            case (.cohort, nil): cohorts[item.key] = .some(nil)
            case (.flag, let bytes?):
                let flag = try Flag.decode(bytes, key: item.key).flag
                flags[item.key] = flag
                readable = readable && flag != nil
            case (.cohort, let bytes?):
                let cohort = try Cohort.decode(bytes).cohort
                cohorts[item.key] = cohort
                readable = readable && cohort != nil
            }
        }
        if readable {
            let compiled = current.compiled.updating(
                flags: flags, cohorts: cohorts, version: changes.version, updatedAt: changes.createdAt)
            let state = current.next(compiled, changing: change)
            if state.digest.bytes == changes.digest { return state }
            log(
                "flag set \(changes.set) v\(changes.version): its changes differ from the stored digest; loading it whole"
            )
        }
        return try Self.state(of: store.snapshot(set: changes.set, version: changes.version))
    }
}
