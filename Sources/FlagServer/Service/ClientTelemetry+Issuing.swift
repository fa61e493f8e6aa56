import Foundation

/// Issuing instance ids, and which ids are still worth a report (docs/telemetry.md, "How the instance id is
/// issued"). An id costs its sender: a client address gets a burst of new ids, then one a second; an id counts
/// nowhere until its first report, and expires a minute after its issue without one; at a key's cap the id that
/// reported least recently (one that never did, first) makes room for the new one.
extension ClientTelemetry {
    /// The id for a connection of `key` to `set` from the client `address` (without its port): the one the client
    /// `presented` when this server knows it for that key (so an id survives reconnects), else a new one; `nil` when
    /// `address` is over its rate of new ids (the answer then carries none). `stream` binds it to the connection
    /// until `streamClosed`.
    func issue(set: String, presented: String?, key: String, stream: Bool, address: String) -> String? {
        let now = clock.now()
        return state.withLock { state in
            if let presented, let known = state.instances[InstanceKey(set: set, id: presented)], known.key == key,
                isValid(known, now: now)
            {
                let instanceKey = InstanceKey(set: set, id: presented)
                // A poll presenting an id it never reported with does not keep it alive: a report does.
                if stream || known.reported { state.instances[instanceKey]?.lastHeld = now }
                if stream { state.instances[instanceKey]?.openStreams += 1 }
                return presented
            }
            guard state.mintBuckets.take(address, now: now) else {
                count(.mintRateLimited)
                return nil
            }
            let id = Self.newID()
            guard makeRoom(for: key, now: now, in: &state) else {
                // Over the cap of all instances the connection still gets an id, so the client works, but nothing of
                // it is kept: its reports are refused as unknown.
                count(.instanceCap)
                return id
            }
            let instanceKey = InstanceKey(set: set, id: id)
            let stored = StoredInstance(
                set: set, id: id, firstSeen: now, lastSeen: now, report: nil, applied: [:], key: key)
            state.instances[instanceKey] = Local(
                stored: stored, key: key, openStreams: stream ? 1 : 0, lastHeld: now, reported: false,
                bucket: TokenBucket(capacity: limits.reportBurst, perSecond: 1 / limits.reportInterval, now: now))
            state.perKey[key, default: 0] += 1
            state.provisional[key, default: IssueQueue()].append(instanceKey)
            state.dirty.insert(instanceKey)
            if let presented, Self.isWellFormed(presented) {
                // Written by the next flush without a report, which takes the old id out of every server's
                // instances (they read the row as new, and an instance without a report is no instance).
                state.replaced.append(
                    StoredInstance(set: set, id: presented, firstSeen: now, lastSeen: now, report: nil, applied: [:]))
            }
            return id
        }
    }

    /// A stream bound to the id has closed: the id stays valid a while longer (`isValid`).
    func streamClosed(set: String, id: String) {
        let now = clock.now()
        state.withLock { state in
            let key = InstanceKey(set: set, id: id)
            guard state.instances[key] != nil else { return }
            state.instances[key]?.openStreams -= 1
            state.instances[key]?.lastHeld = now
        }
    }

    /// Whether an instance's id is still worth a report: bound to a stream now; else, once it has reported, held or
    /// reported within `expiry`; before its first report, issued (or its stream closed) within `provisionalExpiry`.
    func isValid(_ local: Local, now: Date) -> Bool {
        if local.openStreams > 0 { return true }
        let since = now.timeIntervalSince(max(local.lastHeld, local.stored.lastSeen))
        return since <= (local.reported ? limits.expiry : limits.provisionalExpiry)
    }

    /// Makes room for one more instance of `key`: at the key's cap, evicts the one that reported least recently
    /// (one that never reported and is not held by a stream, first). False when every instance in all is taken.
    func makeRoom(for key: String, now: Date, in state: inout State) -> Bool {
        if state.perKey[key, default: 0] >= limits.instancesPerKey {
            guard let victim = leastRecentlyReported(of: key, now: now, in: &state) else { return false }
            state.replaced.append(
                StoredInstance(
                    set: victim.set, id: victim.id, firstSeen: now, lastSeen: now, report: nil, applied: [:], key: key))
            forget(victim, in: &state)
            count(.instanceEvicted)
        }
        return state.instances.count < limits.instances
    }

    /// The instance of `key` to evict: the oldest provisional one not held by a stream, found at the front of the
    /// key's queue; else the one whose last report is oldest, by a scan (the cap reached by clients that report).
    private func leastRecentlyReported(of key: String, now: Date, in state: inout State) -> InstanceKey? {
        while let candidate = state.provisional[key]?.popFirst() {
            if let local = state.instances[candidate], !local.reported, local.openStreams == 0 { return candidate }
        }
        func rank(_ local: Local) -> (Int, Date) {
            local.reported ? (0, local.stored.lastSeen) : (1, local.stored.firstSeen)
        }
        return state.instances.filter { $0.value.key == key }.min { rank($0.value) < rank($1.value) }?.key
    }

    /// Drops an instance from memory (an expired or evicted one).
    func forget(_ instanceKey: InstanceKey, in state: inout State) {
        guard let local = state.instances.removeValue(forKey: instanceKey) else { return }
        state.perKey[local.key, default: 1] -= 1
        if state.perKey[local.key] == 0 { state.perKey[local.key] = nil }
    }

    /// Drops from the front of each key's provisional queue what has reported, left, or is too old to still be
    /// provisional, so that the queues hold at most the last `provisionalExpiry` of new ids.
    func trimProvisional(now: Date, in state: inout State) {
        let instances = state.instances
        for key in Array(state.provisional.keys) {
            state.provisional[key]?.dropFirst { candidate in
                guard let local = instances[candidate] else { return true }
                return local.reported || now.timeIntervalSince(local.stored.firstSeen) > limits.provisionalExpiry
            }
            if state.provisional[key]?.isEmpty == true { state.provisional[key] = nil }
        }
    }
}

/// Instance ids in the order they were issued, taken from the front in amortized constant time.
struct IssueQueue: Sendable {
    private var items: [ClientTelemetry.InstanceKey] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }

    mutating func append(_ key: ClientTelemetry.InstanceKey) {
        items.append(key)
    }

    /// Takes the oldest.
    mutating func popFirst() -> ClientTelemetry.InstanceKey? {
        guard head < items.count else { return nil }
        let first = items[head]
        head += 1
        compact()
        return first
    }

    /// Drops the oldest while `stale` says so.
    mutating func dropFirst(while stale: (ClientTelemetry.InstanceKey) -> Bool) {
        while head < items.count, stale(items[head]) { head += 1 }
        compact()
    }

    /// Frees the taken front once it is half the storage.
    private mutating func compact() {
        guard head > 32, head * 2 >= items.count else { return }
        items.removeFirst(head)
        head = 0
    }
}
