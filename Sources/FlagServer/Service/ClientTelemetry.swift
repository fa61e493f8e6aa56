import FlagCore
import FlagLock
import Foundation
import Synchronization

/// What the clients report (docs/telemetry.md): the instance ids this server issues, the reports it accepts, and
/// the counts it aggregates and flushes to the store.
///
/// A shipped SDK key is public, so everything here is bounded and costs the sender: new ids per client address,
/// instances per key (the least recently reporting evicted first) and in all, flag keys per set between flushes,
/// rows per set and hour, and reports per instance, per key and per source address. An id counts nowhere until
/// its first report, and counts are kept only for flags and variants the set has (docs/telemetry.md, "Threat
/// model"). What a bound drops is counted in `dropped` for `/metrics`. Reports are taken on a queue of their own
/// and written by a flush every `flushInterval`, never on the store queue that admin writes (a kill) wait on.
package final class ClientTelemetry: Sendable {
    let store: TelemetryStore
    let clock: ServerClock
    let limits: Limits
    let log: @Sendable (String) -> Void
    /// Reports and flushes run here, one at a time.
    let queue = DispatchQueue(label: "flagserver.telemetry")
    let state: Locked<State>
    /// What counts are kept of, per set. A lock of its own: versions are published on the write path, which must not
    /// wait for a report being taken.
    let vocabularies = Locked([String: TelemetryVocabulary]())
    let reader: InstanceReader
    private let dropCounts = Locked([DropReason: Int]())
    /// Reports accepted, for `/metrics`.
    let accepted = Atomic<Int>(0)

    /// Telemetry over the store's telemetry concern.
    package init(
        store: TelemetryStore, clock: ServerClock, limits: Limits = Limits(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.store = store
        self.clock = clock
        self.limits = limits
        self.log = log
        self.reader = InstanceReader(store: store, clock: clock, expiry: limits.expiry)
        self.state = Locked(
            State(
                addressBuckets: AddressBuckets(
                    capacity: limits.reportsPerAddressPerSecond, perSecond: limits.reportsPerAddressPerSecond,
                    limit: limits.addresses),
                mintBuckets: AddressBuckets(
                    capacity: limits.mintBurst, perSecond: limits.mintsPerSecond, limit: limits.addresses)))
    }

    // MARK: - State

    struct InstanceKey: Hashable {
        var set: String
        var id: String
    }

    struct PendingKey: Hashable {
        var set: String
        var hour: Int
    }

    /// A row of counts in the store, within a set and hour.
    struct UsageRow: Hashable {
        var flag: String
        var variant: String
    }

    /// An instance this server issued or took a report of.
    struct Local {
        var stored: StoredInstance
        /// The key (token name) it was issued to: for the per-key cap, and a report must come with it.
        var key: String
        /// Streams of this server it is bound to now.
        var openStreams = 0
        /// When a connection of this server last held it, or issued it.
        var lastHeld: Date
        /// Whether it has reported: until then it is provisional.
        var reported: Bool
        var bucket: TokenBucket
    }

    struct State {
        var instances: [InstanceKey: Local] = [:]
        var perKey: [String: Int] = [:]
        /// Ids issued and not reported yet, per key, oldest first: the first to evict at the key's cap. Entries
        /// that reported or left meanwhile are skipped when met.
        var provisional: [String: IssueQueue] = [:]
        var keyBuckets: [String: TokenBucket] = [:]
        var addressBuckets: AddressBuckets
        var mintBuckets: AddressBuckets
        /// Counts since the last flush, by the hour they were taken in: set and hour → flag → variant → count.
        var pending: [PendingKey: [String: [String: Int]]] = [:]
        /// The flag × variant rows each set has had counts of this hour, for `rowsPerSetPerHour`.
        var rows: [PendingKey: Set<UsageRow>] = [:]
        var dirty: Set<InstanceKey> = []
        /// Ids replaced by a new one (a client reconnected to a server that did not know its id): written without
        /// their report by the next flush, so that the old id does not linger as an active, lagging instance.
        var replaced: [StoredInstance] = []
        var lastPrune = Date.distantPast
        /// Evaluations reported per set since the server started, for `/metrics`.
        var evaluations: [String: Int] = [:]
        /// Active instances per set and applied version (`nil`: none yet), across every server sharing the store,
        /// as of `gaugeRefreshed`.
        var clientsByVersion: [String: [Int?: Int]] = [:]
        var gaugeRefreshed = Date.distantPast
    }

    // MARK: - Reports

    /// Why a report was refused, with what to tell the client.
    struct Refusal: Error {
        let reason: DropReason
        let message: String
        /// Seconds to wait, for a rate limit.
        var retryAfter: Int?
    }

    /// Spends one report of `address`'s budget (the client's address, without a port), before its body is even
    /// decoded: the one check a flood from a few sources meets first, and the cheapest.
    func admit(address: String) throws {
        let now = clock.now()
        try state.withLock { state in
            guard state.addressBuckets.take(address, now: now) else {
                throw refuse(.rateLimitedAddress, "this address sent more than its reports per second", retryAfter: 1)
            }
        }
    }

    /// Takes a report of `set` from `key` (its source admitted already): checks its instance (issued to `key`),
    /// then the instance's and the key's budgets, keeps its state, and adds to the next flush the counts of what
    /// `flags` (the set's current version) has or had in the last day. The key's budget is spent only by reports of
    /// real instances, so made-up ids cannot use it up. Runs on `queue` (it may ask the store about an id issued by
    /// another server sharing it).
    func accept(_ report: TelemetryReport, set: String, key: String, flags: CompiledFlagSet) throws {
        let now = clock.now()
        let instanceKey = InstanceKey(set: set, id: report.instance)
        if state.withLock({ $0.instances[instanceKey] == nil }) { try adopt(instanceKey, key: key, now: now) }
        let known = { (state: State) -> Local? in
            guard let local = state.instances[instanceKey], self.isValid(local, now: now), local.key == key else {
                return nil
            }
            return local
        }
        let unknown = {
            self.refuse(
                .unknownInstance,
                "instance \"\(report.instance)\" was not issued to a connection with this key in the last "
                    + "\(Int(self.limits.expiry / 60)) minutes: reconnect the stream (or poll) for a new id")
        }
        // A made-up id is refused before its counts cost anything.
        guard state.withLock({ known($0) }) != nil else { throw unknown() }
        let counts = kept(report.counts, set: set, flags: flags, now: now)
        try state.withLock { state in
            guard var local = known(state) else { throw unknown() }
            guard local.bucket.take(now: now) else {
                let wait = Int(local.bucket.secondsUntilNext(now: now).rounded(.up))
                state.instances[instanceKey] = local
                throw refuse(
                    .rateLimitedInstance,
                    "instance \"\(report.instance)\" reports too often: at most \(Int(limits.reportBurst)) at once, "
                        + "then one every \(Int(limits.reportInterval)) s",
                    retryAfter: max(1, wait))
            }
            var keyBucket =
                state.keyBuckets[key]
                ?? TokenBucket(
                    capacity: limits.reportsPerKeyPerSecond, perSecond: limits.reportsPerKeyPerSecond, now: now)
            guard keyBucket.take(now: now) else {
                throw refuse(.rateLimitedKey, "this key sent more than its reports per second", retryAfter: 1)
            }
            state.keyBuckets[key] = keyBucket
            var kept = report
            kept.counts = [:]
            local.stored.report = kept.encoded()
            local.stored.lastSeen = now
            local.reported = true
            local.lastHeld = max(local.lastHeld, now)
            if let version = report.version, local.stored.applied[version] == nil,
                version > (local.stored.applied.keys.max() ?? 0)
            {
                local.stored.applied[version] = now
                while local.stored.applied.count > StoredInstance.appliedLimit,
                    let oldest = local.stored.applied.keys.min()
                {
                    local.stored.applied[oldest] = nil
                }
            }
            state.instances[instanceKey] = local
            state.dirty.insert(instanceKey)
            add(counts, set: set, at: now, into: &state)
            let evaluations = report.counts.values.reduce(0) { total, variants in
                variants.values.reduce(total) { total, reasons in reasons.values.reduce(total, +) }
            }
            state.evaluations[set, default: 0] += evaluations
        }
        accepted.add(1, ordering: .relaxed)
    }

    /// Makes an instance another server issued known here, if the store has it (seen within `expiry`).
    private func adopt(_ instanceKey: InstanceKey, key: String, now: Date) throws {
        let stored: StoredInstance?
        do {
            stored = try store.instance(
                set: instanceKey.set, id: instanceKey.id, seenSince: now.addingTimeInterval(-limits.expiry))
        } catch {
            // The store may be down: the report is refused, and the client keeps its counts for the next try.
            throw refuse(.unknownInstance, "instance \"\(instanceKey.id)\" could not be checked now: \(error)")
        }
        // Issued to another key: as if unknown (an id written before servers kept its key is taken with any).
        guard let stored, stored.key == nil || stored.key == key else { return }
        state.withLock { state in
            guard state.instances[instanceKey] == nil, makeRoom(for: key, now: now, in: &state) else { return }
            let lastHeld = stored.report == nil ? stored.firstSeen : stored.lastSeen
            state.instances[instanceKey] = Local(
                stored: stored, key: key, lastHeld: lastHeld, reported: stored.report != nil,
                bucket: TokenBucket(capacity: limits.reportBurst, perSecond: 1 / limits.reportInterval, now: now))
            state.perKey[key, default: 0] += 1
            if stored.report == nil { state.provisional[key, default: IssueQueue()].append(instanceKey) }
        }
    }

    /// The counts of `counts` that are kept: of flags `flags` has, or had within `retiredFlagWindow`, and variants
    /// such a flag can report. The others are counted as dropped.
    private func kept(
        _ counts: TelemetryReport.Counts, set: String, flags: CompiledFlagSet, now: Date
    ) -> TelemetryReport.Counts {
        guard !counts.isEmpty else { return counts }
        var kept: TelemetryReport.Counts = [:]
        var dropped: [DropReason: Int] = [:]
        vocabularies.withLock { vocabularies in
            var vocabulary = vocabularies.removeValue(forKey: set) ?? TelemetryVocabulary()
            defer { vocabularies[set] = vocabulary }
            for (flag, variants) in counts {
                for (variant, reasons) in variants {
                    switch vocabulary.check(flag: flag, variant: variant, in: flags, now: now) {
                    case .kept: kept[flag, default: [:]][variant] = reasons
                    case .unknownFlag: dropped[.unknownFlag, default: 0] += 1
                    case .unknownVariant: dropped[.unknownVariant, default: 0] += 1
                    }
                }
            }
        }
        if !dropped.isEmpty { dropCounts.withLock { $0.merge(dropped, uniquingKeysWith: +) } }
        return kept
    }

    /// Adds counts of `set` taken at `time` to the next flush, dropping flag keys beyond `flagsPerSet` (per set
    /// between flushes) and rows beyond `rowsPerSetPerHour`.
    private func add(_ counts: TelemetryReport.Counts, set: String, at time: Date, into state: inout State) {
        guard !counts.isEmpty else { return }
        let key = PendingKey(set: set, hour: Self.hour(of: time))
        var pending = state.pending.removeValue(forKey: key) ?? [:]
        var rows = state.rows.removeValue(forKey: key) ?? []
        for (flag, variants) in counts {
            if pending[flag] == nil && pending.count >= limits.flagsPerSet {
                count(.flagCap)
                continue
            }
            for (variant, reasons) in variants {
                let total = reasons.values.reduce(0, +)
                guard total > 0 else { continue }
                let row = UsageRow(flag: flag, variant: variant)
                if !rows.contains(row) {
                    guard rows.count < limits.rowsPerSetPerHour else {
                        count(.rowCap)
                        continue
                    }
                    rows.insert(row)
                }
                pending[flag, default: [:]][variant, default: 0] += total
            }
        }
        state.pending[key] = pending
        state.rows[key] = rows
    }

    /// Counts evaluations the server made itself (OFREP, the admin API's evaluate): `flag` → `variant` → count.
    func countServerEvaluations(set: String, _ counts: [String: [String: Int]]) {
        let now = clock.now()
        state.withLock { state in
            add(counts.mapValues { $0.mapValues { ["SERVER": $0] } }, set: set, at: now, into: &state)
        }
    }

    private func refuse(_ reason: DropReason, _ message: String, retryAfter: Int? = nil) -> Refusal {
        count(reason)
        return Refusal(reason: reason, message: message, retryAfter: retryAfter)
    }

    /// Counts something dropped.
    func count(_ reason: DropReason) {
        dropCounts.withLock { $0[reason, default: 0] += 1 }
    }

    /// What was dropped so far, by reason, for `/metrics`.
    var dropped: [DropReason: Int] { dropCounts.withLock { $0 } }

    // MARK: - Flushing

    /// Writes what changed since the last flush to the store; on a failure the counts are kept for the next one
    /// (bounded as before), and the failure is logged and counted. Forgets instances that expired, and prunes the
    /// store's old counts and instances once an hour.
    func flush() {
        let now = clock.now()
        let batch = state.withLock { state -> TelemetryBatch in
            var batch = TelemetryBatch(instances: state.replaced)
            state.replaced = []
            for key in state.dirty {
                if let local = state.instances[key] { batch.instances.append(local.stored) }
            }
            state.dirty = []
            for (key, flags) in state.pending {
                for (flag, variants) in flags {
                    for (variant, count) in variants {
                        batch.counts.append(
                            UsageCount(
                                set: key.set, flag: flag, variant: variant, hour: key.hour, count: count,
                                lastAt: min(now, Date(timeIntervalSince1970: Double(key.hour + 1) * 3600))))
                    }
                }
            }
            state.pending = [:]
            let hour = Self.hour(of: now)
            state.rows = state.rows.filter { $0.key.hour >= hour }
            for (key, local) in state.instances where !isValid(local, now: now) {
                forget(key, in: &state)
            }
            trimProvisional(now: now, in: &state)
            return batch
        }
        // One short transaction at a time: an admin write sharing the store's connection waits for one, not all.
        var unwritten = batch.chunked(rows: limits.rowsPerTransaction)[...]
        do {
            while let chunk = unwritten.first {
                try store.record(chunk)
                unwritten = unwritten.dropFirst()
            }
        } catch {
            count(.flushFailed)
            log("writing telemetry to the store failed (kept for the next flush): \(error)")
            let batch = TelemetryBatch(
                instances: unwritten.flatMap(\.instances), counts: unwritten.flatMap(\.counts))
            state.withLock { state in
                for count in batch.counts {
                    let time = Date(timeIntervalSince1970: Double(count.hour) * 3600)
                    add([count.flag: [count.variant: ["": count.count]]], set: count.set, at: time, into: &state)
                }
                for instance in batch.instances {
                    let key = InstanceKey(set: instance.set, id: instance.id)
                    if state.instances[key] != nil { state.dirty.insert(key) }
                }
            }
            return
        }
        let prune = state.withLock { state in
            guard now.timeIntervalSince(state.lastPrune) >= 3600 else { return false }
            state.lastPrune = now
            return true
        }
        if prune {
            do {
                try store.prune(
                    countsBefore: Self.hour(of: now) - limits.retentionDays * 24,
                    instancesBefore: now.addingTimeInterval(-limits.expiry))
            } catch {
                log("pruning old telemetry failed: \(error)")
            }
        }
    }

    /// Whole hours since 1970 (UTC).
    static func hour(of date: Date) -> Int {
        Int((date.timeIntervalSince1970 / 3600).rounded(.down))
    }
}
