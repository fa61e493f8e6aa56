import Dispatch
import FlagAPI
import FlagCore
import FlagLock
import FlagSigning
import Foundation
import Synchronization

/// The heart of the server: every set's current version in memory, and every write checked against the whole set,
/// stored as the items it changed, then swapped in and announced to subscribers.
///
/// A write costs what it changes: it compiles the items it touches (`CompiledFlagSet.updating`), stores them, and
/// publishes a state that shares everything else with the version before. Reads take a lock only long enough to
/// copy a reference. Writes are serialized, so versions are made one at a time and subscribers see them in order.
package final class FlagService: Sendable {
    /// The durable store behind the service.
    package let store: any FlagStore
    let clock: ServerClock
    let registry = SetRegistry()
    let log: @Sendable (String) -> Void
    /// Writes that made a version, and writes rejected as invalid or stale, for `/metrics`.
    let counters = ServiceCounters()
    let writeLock = Locked(())
    /// What the clients report; the compatibility gate asks it who is active.
    package let telemetry: ClientTelemetry
    /// This server's fan-out of each set's recent versions, for the propagation figures.
    let fanouts = FanoutLog()
    /// What the sets' private signing keys are sealed with (docs/signing.md); `nil`: new sets are not signed, and
    /// signed sets cannot be written.
    let keyEncryptionKey: KeyEncryptionKey?
    /// Makes, or finds stored, the signed documents of signed sets.
    let documentSigner: DocumentSigner
    /// Each set's active signing key, unsealed once when the keys are loaded or change (`FlagService+Signing`).
    let activeKeys = Locked<[String: ActiveSigningKey]>([:])
    /// The documents executor: where a version's whole document is assembled, and signed for a signed set, when it
    /// is first asked for (`FlagService+Documents`). One at a time, so that a document is made once.
    let documents = DispatchQueue(label: "flagserver.documents")

    /// Loads every set's current version from the store.
    ///
    /// - Parameters:
    ///   - keyEncryptionKey: opens the sets' signing keys; with one, every new set gets a key and is signed.
    ///   - log: where to write operational messages (one line each); never given a token.
    package init(
        store: any FlagStore, clock: ServerClock, keyEncryptionKey: KeyEncryptionKey? = nil,
        telemetryLimits: ClientTelemetry.Limits = .init(), log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        self.store = store
        self.clock = clock
        self.keyEncryptionKey = keyEncryptionKey
        self.documentSigner = DocumentSigner(store: store, log: log)
        self.log = log
        self.telemetry = ClientTelemetry(store: store.telemetry, clock: clock, limits: telemetryLimits, log: log)
        for summary in try store.sets() {
            let snapshot = try store.snapshot(set: summary.name, version: nil)
            let state = try Self.state(of: snapshot)
            // A digest stored by a release before the items digest is the SHA-256 of the whole document.
            if state.digest.bytes != snapshot.digest && SHA256.hash(state.assembledDocument()) != snapshot.digest {
                log("flag set \(summary.name) v\(snapshot.version): its items differ from their stored digest")
            }
            if !state.compiled.problems.isEmpty {
                log("flag set \(summary.name) v\(snapshot.version): \(state.compiled.problems.count) stored problem(s)")
            }
            registry.install(try servingState(state))
        }
    }

    /// The current state of a set, or `nil` if there is no such set.
    package func state(_ set: String) -> SetState? {
        registry.state(set)
    }

    /// The current state of a set, or a 404.
    package func requireState(_ set: String) throws -> SetState {
        guard let state = registry.state(set) else {
            throw ServiceError.notFound("no flag set \"\(set)\"", subject: .set)
        }
        return state
    }

    /// Every set's current state, sorted by name.
    package func states() -> [SetState] {
        registry.states()
    }

    /// Creates a set at version 1: empty, or with the flags and cohorts of `document` (a seed or an import).
    @discardableResult
    package func createSet(_ name: String, from document: FlagSet? = nil, note: ChangeNote) throws -> SetState {
        try createSets([(name, document ?? FlagSet(name: name), note)])[0]
    }

    /// Creates several sets at version 1 in one transaction: all of them or, on any error, none (the seed sets of a
    /// first start, so that a crash halfway cannot leave some of them never imported).
    @discardableResult
    package func createSets(_ sets: [(name: String, document: FlagSet, note: ChangeNote)]) throws -> [SetState] {
        for (name, _, _) in sets where !isValidKey(name) {
            throw ServiceError.badRequest(
                "set name \"\(name)\" must match ^[a-z0-9][a-z0-9._-]{0,127}$", path: "name")
        }
        return try writeLock.withLock { _ in
            var names: Set<String> = []
            var states: [SetState] = []
            var creations: [SetCreation] = []
            var newKeys: [String: PrivateSigningKey] = [:]
            for (name, document, note) in sets {
                if registry.state(name) != nil || !names.insert(name).inserted {
                    throw ServiceError.alreadyExists("flag set \"\(name)\" already exists", subject: .set)
                }
                var set = FlagSet(name: name)
                set.cohorts = document.cohorts
                set.flags = document.flags
                set.version = 1
                set.updatedAt = clock.wholeSecond()
                let state = try validated(set)
                let audit = AuditEntry(
                    time: set.updatedAt ?? clock.now(), actor: note.actor, action: note.action,
                    subject: note.subject ?? name, reason: note.reason)
                let (signingKey, privateKey) = try signingKeyForNewSet(state)
                states.append(state.signed(signingKey != nil))
                if let privateKey { newKeys[name] = privateKey }
                creations.append(
                    SetCreation(
                        name: name, change: VersionChange(items: state.items.mapValues { .some($0) }),
                        digest: state.digest.bytes, audit: audit, signingKey: signingKey))
            }
            do {
                try store.createSets(creations)
            } catch {
                throw ServiceError.storage(error)
            }
            activeKeys.withLock { keys in
                for state in states { keys[state.name] = newKeys[state.name].map { .key($0) } ?? ActiveSigningKey.none }
            }
            for state in states { registry.install(state) }
            counters.writes.add(sets.count, ordering: .relaxed)
            return states
        }
    }

    /// Writes the items that `edit` returns for the current version of `set`, as the next version.
    ///
    /// Only what the edit touches is compiled, but the whole set must stay valid (422 listing every problem);
    /// `ifMatch` other than the current version is a 409. Items written as they are make no change, and an edit
    /// that changes nothing makes no version and records nothing.
    @discardableResult
    package func mutate(
        _ set: String, ifMatch: Int? = nil, note: ChangeNote, _ edit: (SetState) throws -> SetEdit
    ) throws -> WriteResult {
        try writeLock.withLock { _ -> WriteResult in
            try retryingLostRaces(set, ifMatch: ifMatch) { current in
                let edit = try edit(current)
                var flags: [String: Flag?] = [:]
                var cohorts: [String: Cohort?] = [:]
                var change: [ItemKey: [UInt8]?] = [:]
                for (key, flag) in edit.flags where flag != current.compiled.flag(key) {
                    guard flag != nil || current.bytes(of: .flag(key)) != nil else { continue }
                    flags[key] = flag
                    change[.flag(key)] = .some(flag?.encoded())
                }
                for (name, cohort) in edit.cohorts where cohort != current.compiled.cohort(name) {
                    guard cohort != nil || current.bytes(of: .cohort(name)) != nil else { continue }
                    cohorts[name] = cohort
                    change[.cohort(name)] = .some(cohort?.encoded())
                }
                if change.isEmpty { return WriteResult(state: current, createdVersion: false, previous: current) }
                let compiled = current.compiled.updating(
                    flags: flags, cohorts: cohorts, version: current.version + 1, updatedAt: clock.wholeSecond())
                let problems = compiled.problems
                guard problems.isEmpty else {
                    counters.invalid.add(1, ordering: .relaxed)
                    throw ServiceError.invalid(problems)
                }
                return try commit(current.next(compiled, changing: change), to: current, change: change, note: note)
            }
        }
    }

    /// Changes one existing flag of `set` as the next version (see `mutate`); 404 when the set has no such flag.
    @discardableResult
    package func mutateFlag(
        _ set: String, _ key: String, ifMatch: Int? = nil, note: ChangeNote, _ change: (inout Flag) throws -> Void
    ) throws -> WriteResult {
        try mutate(set, ifMatch: ifMatch, note: note) { current in
            guard var flag = current.compiled.flag(key) else {
                throw ServiceError.notFound(
                    "no flag \"\(key)\" in set \"\(set)\"", path: "flags.\(key)", subject: .flag)
            }
            try change(&flag)
            return .flag(flag)
        }
    }

    /// Replaces every flag and cohort of `set` with those of `content`, as the next version: an import or a
    /// rollback, compiled and compared as a whole.
    @discardableResult
    package func replace(_ set: String, with content: FlagSet, ifMatch: Int?, note: ChangeNote) throws -> WriteResult {
        try writeLock.withLock { _ -> WriteResult in
            try retryingLostRaces(set, ifMatch: ifMatch) { current in
                var next = FlagSet(name: set, version: current.version + 1, updatedAt: clock.wholeSecond())
                next.flags = content.flags
                next.cohorts = content.cohorts
                let state = try validated(next, reusing: current)
                let change = SetState.change(from: current.items, to: state.items)
                if change.isEmpty { return WriteResult(state: current, createdVersion: false, previous: current) }
                return try commit(state, to: current, change: change, note: note)
            }
        }
    }

    /// Runs `write` on the current state of `set` under the write lock, checking `ifMatch` first.
    ///
    /// Another server sharing the store may have written versions this one has not loaded yet. An `ifMatch` ahead
    /// of the version served loads them before the check. A write that loses the race in the store loads them too,
    /// then, without `ifMatch`, runs again on the new version (as a write on one server waits for the one before);
    /// with `ifMatch` it is a 409 carrying the current version. A write that changes nothing here is checked against
    /// the store once before it answers so: a kill sent right after another server restored the flag must kill it,
    /// not find it killed in this server's older copy.
    private func retryingLostRaces(
        _ set: String, ifMatch: Int?, _ write: (SetState) throws -> WriteResult
    ) throws -> WriteResult {
        var attempts = 0
        var askedTheStore = false
        while true {
            if let ifMatch, ifMatch > (try requireState(set)).version { _ = try catchUpHoldingWriteLock(set) }
            let current = try requireState(set)
            if let ifMatch, ifMatch != current.version {
                counters.conflicts.add(1, ordering: .relaxed)
                throw ServiceError.conflict(set: set, expected: ifMatch, current: current.version)
            }
            do {
                let result = try write(current)
                guard !result.createdVersion, result.proposal == nil, !askedTheStore else { return result }
                askedTheStore = true
                if try !catchUpHoldingWriteLock(set) { return result }
            } catch let error as ServiceError where error.isLostRace && ifMatch == nil && attempts < Self.raceRetries {
                attempts += 1
            }
        }
    }

    /// How often a write without `If-Match` runs again after losing a race to another server before it answers 409.
    static let raceRetries = 5

    /// Makes `state`, checked and compiled, the version after `current`: through the compatibility gate, stored and
    /// published; or, for a note that proposes it, held back as a change request instead (`FlagService+Proposals`).
    private func commit(
        _ state: SetState, to current: SetState, change: [ItemKey: [UInt8]?], note: ChangeNote
    ) throws -> WriteResult {
        if let draft = note.proposal {
            return try propose(change, to: current, draft: draft, note: note)
        }
        if !note.skipsReview, try settings(state.name).reviews == .required {
            throw ServiceError.reviewRequired(
                "set \"\(state.name)\" requires reviews: propose the change instead (?propose=TITLE, flagctl "
                    + "--propose TITLE) and have another person approve it; an admin not limited to sets may write "
                    + "at once with ?withoutReview=REASON")
        }
        let checked = try checkCompatibility(state, from: current, change: change, note)
        return try append(state, to: current, change: change, note: checked.note, warnings: checked.warnings)
    }

    /// Stores `state` as the version after `current`, then publishes it.
    private func append(
        _ state: SetState, to current: SetState, change: [ItemKey: [UInt8]?], note: ChangeNote, warnings: [String]
    ) throws -> WriteResult {
        let audit = AuditEntry(
            time: state.updatedAt ?? clock.now(), actor: note.actor, action: note.action, subject: note.subject,
            reason: note.reason)
        let signedPatch = try signedPatch(of: state, change: change, base: current.version)
        do {
            _ = try store.append(
                set: state.name, base: current.version, change: VersionChange(items: change),
                digest: state.digest.bytes, audit: audit, signedPatch: signedPatch, applying: note.applies)
        } catch let error as StoreError where error.isProposalMoved {
            throw ServiceError.changeState(error.message)
        } catch let error as StoreError where error.isConflict {
            // Another server sharing the store wrote first: serve what it wrote before answering.
            counters.conflicts.add(1, ordering: .relaxed)
            _ = try catchUpHoldingWriteLock(state.name)
            throw ServiceError.lostRace(
                set: state.name, expected: current.version, current: error.currentVersion ?? current.version)
        } catch {
            throw ServiceError.storage(error)
        }
        let served = state.signed(signedPatch != nil)
        publish(
            SetUpdate(state: served, base: current.version, changed: change, signedPatch: signedPatch),
            replacing: current)
        counters.writes.add(1, ordering: .relaxed)
        var result = WriteResult(state: served, createdVersion: true, previous: current, changed: change.keys.sorted())
        result.warnings = warnings
        return result
    }

    /// Publishes a version that is in the store to this server's subscribers (with its document, when the caller had
    /// to make it already), and notes the fan-out. The flags it changed or removed in `previous` stay countable by
    /// telemetry for a day (clients apply versions late).
    func publish(_ update: SetUpdate, replacing previous: SetState, served: ServedDocument? = nil) {
        let committed = clock.now()
        let started = ContinuousClock.now
        let (set, version, fanouts) = (update.state.name, update.state.version, fanouts)
        registry.publish(update, served: served) { streams in
            let elapsed = ContinuousClock.now - started
            fanouts.record(
                set: set, version: version,
                FanoutRecord(committedAt: committed, streams: streams, milliseconds: elapsed.timeInterval * 1000))
        }
        let replaced = Array(update.patch.flags.keys) + Array(update.patch.removedFlags)
        telemetry.retire(set: update.state.name, flags: replaced.compactMap { previous.compiled.flag($0) })
    }

    /// Compiles and checks a whole set, encoding only the items that differ from `previous`.
    private func validated(_ set: FlagSet, reusing previous: SetState? = nil) throws -> SetState {
        let compiled = CompiledFlagSet(set)
        let problems = compiled.problems
        guard problems.isEmpty else {
            counters.invalid.add(1, ordering: .relaxed)
            throw ServiceError.invalid(problems)
        }
        var items: [ItemKey: [UInt8]] = [:]
        items.reserveCapacity(set.flags.count + set.cohorts.count)
        // An item equal to its previous version keeps the bytes stored with it; the others are encoded.
        func add(_ item: ItemKey, unchanged: Bool, _ encoded: () -> [UInt8]) {
            items[item] = (unchanged ? previous?.bytes(of: item) : nil) ?? encoded()
        }
        for (key, flag) in set.flags {
            add(.flag(key), unchanged: previous?.compiled.flag(key) == flag) { flag.encoded() }
        }
        for (name, cohort) in set.cohorts {
            add(.cohort(name), unchanged: previous?.compiled.cohort(name) == cohort) { cohort.encoded() }
        }
        return SetState(compiled: compiled, items: items)
    }

    /// Rebuilds a stored version's state from its items' bytes, which are kept as stored.
    static func state(of snapshot: Snapshot) throws -> SetState {
        var set = try flagSet(of: snapshot)
        set.readProblems = []
        return SetState(compiled: CompiledFlagSet(set), items: snapshot.items)
    }

    /// The model of a stored version.
    static func flagSet(of snapshot: Snapshot) throws -> FlagSet {
        var set = FlagSet(name: snapshot.set, version: snapshot.version, updatedAt: snapshot.createdAt)
        for (item, bytes) in snapshot.items {
            let path = "\(item.kind == .flag ? "flags" : "cohorts").\(item.key)"
            do {
                switch item.kind {
                case .flag:
                    let (flag, problems) = try Flag.decode(bytes, key: item.key)
                    if let flag { set.flags[item.key] = flag } else { set.unreadableFlags[item.key] = problems }
                case .cohort:
                    let (cohort, problems) = try Cohort.decode(bytes)
                    if let cohort { set.cohorts[item.key] = cohort } else { set.unreadableCohorts[item.key] = problems }
                }
            } catch {
                throw StoreError.corrupt(
                    "\(snapshot.set) v\(snapshot.version) \(path) is not valid JSON (\(error)); restore from a backup")
            }
        }
        return set
    }
}

/// Counts of what the service did, read by `/metrics`.
final class ServiceCounters: Sendable {
    /// Writes that made a version (or created a set).
    let writes = Atomic<Int>(0)
    /// Writes rejected because the set would have been invalid (422).
    let invalid = Atomic<Int>(0)
    /// Writes rejected because they were based on a stale version (409).
    let conflicts = Atomic<Int>(0)
}
