import FlagCore
import Foundation

/// Where the server's logic gets the time from: the system clock in production, a fixed one in tests.
public struct ServerClock: Sendable {
    /// The current time.
    public var now: @Sendable () -> Date

    /// A clock reading `now`.
    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The system's wall clock.
    public static var system: ServerClock { ServerClock { Date() } }

    /// The current time cut to whole seconds, as documents and audit records carry it, so that a document rebuilt
    /// from the store is byte for byte the one served.
    func wholeSecond() -> Date {
        Date(timeIntervalSince1970: now().timeIntervalSince1970.rounded(.down))
    }
}

/// One version of a set: compiled for evaluation, and each flag's and cohort's canonical bytes as stored. Plain,
/// immutable data shared by every reader; reading it never does I/O.
///
/// The next version shares with this one everything its change leaves alone (`KeyedMap`), so making it costs the
/// change, not the set. The whole document, which only a client's first fetch needs, is not part of the state: the
/// service's documents executor assembles (and for a signed set signs) it when it is first asked for, and installs
/// it beside the state in the set's registry entry (`FlagService+Documents`).
package final class SetState: Sendable {
    /// The set compiled for evaluation, with its model.
    package let compiled: CompiledFlagSet
    /// Each flag's canonical bytes, by key.
    let flagBytes: KeyedMap<[UInt8]>
    /// Each cohort's canonical bytes, by name.
    let cohortBytes: KeyedMap<[UInt8]>
    /// The digest of the items, stored with the version.
    let digest: ItemsDigest
    /// Whether the set had an active signing key when this version was made: its document is then served signed
    /// (docs/signing.md).
    let isSigned: Bool

    /// The state of a whole set: `compiled` and every item's bytes (a set created, imported, rolled back or loaded).
    init(compiled: CompiledFlagSet, items: [ItemKey: [UInt8]], isSigned: Bool = false) {
        self.compiled = compiled
        flagBytes = KeyedMap(items.lazy.filter { $0.key.kind == .flag }.map { ($0.key.key, $0.value) })
        cohortBytes = KeyedMap(items.lazy.filter { $0.key.kind == .cohort }.map { ($0.key.key, $0.value) })
        digest = ItemsDigest(items.lazy.map { (key: $0.key, value: $0.value) })
        self.isSigned = isSigned
    }

    private init(
        compiled: CompiledFlagSet, flagBytes: KeyedMap<[UInt8]>, cohortBytes: KeyedMap<[UInt8]>, digest: ItemsDigest,
        isSigned: Bool
    ) {
        self.compiled = compiled
        self.flagBytes = flagBytes
        self.cohortBytes = cohortBytes
        self.digest = digest
        self.isSigned = isSigned
    }

    /// This version, of a set that is signed (or not).
    func signed(_ isSigned: Bool) -> SetState {
        guard isSigned != self.isSigned else { return self }
        return SetState(
            compiled: compiled, flagBytes: flagBytes, cohortBytes: cohortBytes, digest: digest, isSigned: isSigned)
    }

    /// The next version: `compiled`, updated from this version's, with the items of `change` written (new bytes) or
    /// removed (`nil`). Costs the change.
    func next(_ compiled: CompiledFlagSet, changing change: [ItemKey: [UInt8]?]) -> SetState {
        var (flags, cohorts, digest) = (flagBytes, cohortBytes, digest)
        for (item, bytes) in change {
            if let old = self.bytes(of: item) { digest.remove(item, old) }
            if let bytes { digest.add(item, bytes) }
            switch item.kind {
            case .flag: flags[item.key] = bytes
            case .cohort: cohorts[item.key] = bytes
            }
        }
        return SetState(
            compiled: compiled, flagBytes: flags, cohortBytes: cohorts, digest: digest, isSigned: isSigned)
    }

    /// The set's name.
    package var name: String { compiled.name }
    /// The version this state serves.
    package var version: Int { compiled.version }
    /// When this version was made.
    package var updatedAt: Date? { compiled.updatedAt }
    /// The `ETag` of this version: `"{version}"`.
    package var etag: String { "\"\(version)\"" }
    /// How many cohorts the set has.
    package var cohortCount: Int { cohortBytes.count }

    /// The canonical bytes of a flag or cohort, as stored.
    package func bytes(of item: ItemKey) -> [UInt8]? {
        switch item.kind {
        case .flag: flagBytes[item.key]
        case .cohort: cohortBytes[item.key]
        }
    }

    /// Every item's canonical bytes: what an import compares, what a new set stores.
    package var items: [ItemKey: [UInt8]] {
        var items: [ItemKey: [UInt8]] = [:]
        items.reserveCapacity(flagBytes.count + cohortBytes.count)
        for (key, bytes) in flagBytes.entries { items[.flag(key)] = bytes }
        for (name, bytes) in cohortBytes.entries { items[.cohort(name)] = bytes }
        return items
    }

    /// The document of this version assembled from its items' bytes: O(set), and not necessarily what is served (a
    /// signed set serves the bytes the first server stored). Only the documents executor and the start-up check
    /// call it.
    func assembledDocument() -> [UInt8] {
        FlagSet.assemble(
            schema: compiled.schema, name: name, version: version, updatedAt: updatedAt,
            cohorts: Dictionary(uniqueKeysWithValues: cohortBytes.entries.map { ($0.key, $0.value) }),
            flags: Dictionary(uniqueKeysWithValues: flagBytes.entries.map { ($0.key, $0.value) }))
    }

    /// What differs from `old` to `new`: new bytes for added or changed items, `nil` for removed ones.
    static func change(from old: [ItemKey: [UInt8]], to new: [ItemKey: [UInt8]]) -> [ItemKey: [UInt8]?] {
        var change: [ItemKey: [UInt8]?] = [:]
        for (item, bytes) in new where old[item] != bytes { change[item] = .some(bytes) }
        for item in old.keys where new[item] == nil { change[item] = .some(nil) }
        return change
    }

    /// Each flag's and cohort's canonical bytes in `set`, encoded.
    static func items(of set: FlagSet) -> [ItemKey: [UInt8]] {
        var items: [ItemKey: [UInt8]] = [:]
        items.reserveCapacity(set.flags.count + set.cohorts.count)
        for (key, flag) in set.flags { items[.flag(key)] = flag.encoded() }
        for (name, cohort) in set.cohorts { items[.cohort(name)] = cohort.encoded() }
        return items
    }
}

/// A version's document as served, and its signature when the set is signed. A class, so that the answers made of
/// it can tell it from another document of the same version (the current one signed again by a newly active key).
package final class ServedDocument: Sendable {
    /// The bytes served.
    package let bytes: [UInt8]
    /// The `Flagstaff-Signature` value over `bytes`.
    package let signature: String?

    init(bytes: [UInt8], signature: String?) {
        self.bytes = bytes
        self.signature = signature
    }
}

/// A new version of a set as subscribers see it: the new state and what changed, encoded once for everyone.
package struct SetUpdate: Sendable {
    /// The state after the change.
    package let state: SetState
    /// What changed over the version before: the changed items' canonical bytes and the removed names.
    package let patch: SetPatch
    /// The Server-Sent Events frame of the patch (SPEC §4), built once per version and written as is to every
    /// stream.
    package let patchEvent: [UInt8]

    /// The update to `state` from `base`; `changed` maps each changed item to its new bytes, or `nil` if removed.
    ///
    /// A signed version's event is its signed patch, `signedPatch`. A signed version without one (a server that
    /// caught up on several versions at once, whose patch nobody signed) is sent as a `put` of its signed document,
    /// `put`, instead: a verifying client must not be sent an unsigned patch it would refuse.
    init(
        state: SetState, base: Int, changed: [ItemKey: [UInt8]?], signedPatch: SignedBody? = nil,
        put: ServedDocument? = nil
    ) {
        self.state = state
        self.patch = SetPatch(version: state.version, base: base, changed: changed)
        let id = String(state.version)
        if let signedPatch {
            patchEvent = SetStreamEvent.patch.frame(id: id, signature: signedPatch.signature, data: signedPatch.bytes)
        } else if let put {
            patchEvent = SetStreamEvent.put.frame(id: id, signature: put.signature, data: put.bytes)
        } else {
            patchEvent = SetStreamEvent.patch.frame(id: id, data: patch.encoded())
        }
    }

    /// The version the change was made on.
    package var base: Int { patch.base }
}

extension SetPatch {
    /// The patch of a change of stored items: its cost is the change's, not the set's.
    init(version: Int, base: Int, changed: [ItemKey: [UInt8]?]) {
        self.init(version: version, base: base)
        for (item, bytes) in changed {
            switch (item.kind, bytes) {
            case (.flag, let bytes?): flags[item.key] = bytes
            case (.flag, nil): removedFlags.insert(item.key)
            case (.cohort, let bytes?): cohorts[item.key] = bytes
            case (.cohort, nil): removedCohorts.insert(item.key)
            }
        }
    }
}
