import FlagLock
import Synchronization

/// What a subscriber of a set is told.
package enum SetSignal: Sendable {
    /// A new version.
    case update(SetUpdate)
    /// The document of the current version is ready (it is made when first asked for, not by the write).
    case served(SetState, ServedDocument)
    /// Time for a keep-alive comment (streams) — nothing changed.
    case heartbeat
    /// The server is shutting down: answer or close now.
    case shutdown
}

/// The current state of every set, its document once made, and who is waiting for its next version, behind one lock.
///
/// Swapping a state and telling its subscribers happen under the same lock as a subscriber's first look at the
/// state, so a stream never sees a patch before the document it applies to, and a long-poll never misses a version
/// published between its check and its subscription. Callbacks run under the lock: they must be quick (queue bytes,
/// answer a responder) and must not call back into the registry; they return whether to stay subscribed.
final class SetRegistry: Sendable {
    typealias Callback = @Sendable (SetSignal) -> Bool

    private struct Entry {
        var state: SetState
        /// The document of `state` as served, once the documents executor made it.
        var served: ServedDocument?
        var subscribers: [Int: Callback] = [:]
    }

    private struct Registry {
        var entries: [String: Entry] = [:]
        var nextID = 0
        var closed = false
    }

    private let registry = Locked(Registry())
    /// Counts changes of any set's state; bumped under the lock right after the swap. A reader that loaded it before
    /// looking a state up, and finds it unchanged later, knows that state is still current (the document route's
    /// per-connection memo, `ConnectionMemo`, relies on this).
    let epoch = Atomic<Int>(0)

    /// The current state of a set.
    func state(_ name: String) -> SetState? {
        registry.withLock { $0.entries[name]?.state }
    }

    /// The current state of a set and its document, if made yet.
    func record(_ name: String) -> (state: SetState, served: ServedDocument?)? {
        registry.withLock { registry in registry.entries[name].map { ($0.state, $0.served) } }
    }

    /// Every set's current state, sorted by name.
    func states() -> [SetState] {
        registry.withLock { registry in registry.entries.values.map(\.state) }.sorted { $0.name < $1.name }
    }

    /// Installs a set's state without telling anyone (loading, creating).
    func install(_ state: SetState) {
        registry.withLock { registry in
            if registry.entries[state.name] != nil {
                registry.entries[state.name]?.state = state
                registry.entries[state.name]?.served = nil
            } else {
                registry.entries[state.name] = Entry(state: state)
            }
            epoch.add(1, ordering: .releasing)
        }
    }

    /// Installs the document of `state`, if `state` is still the set's current one and has none yet (or
    /// `replacing` it: the current version signed again by a newly active key), and tells the subscribers.
    /// Returns the document the entry holds for `state` now, or `nil` when a newer version replaced it.
    @discardableResult
    func install(_ served: ServedDocument, for state: SetState, replacing: Bool = false) -> ServedDocument? {
        registry.withLock { registry -> ServedDocument? in
            guard var entry = registry.entries.removeValue(forKey: state.name) else { return nil }
            defer { registry.entries[state.name] = entry }
            guard entry.state === state else { return nil }
            if let kept = entry.served, !replacing { return kept }
            entry.served = served
            epoch.add(1, ordering: .releasing)
            for (id, callback) in entry.subscribers where !callback(.served(state, served)) {
                entry.subscribers[id] = nil
            }
            return served
        }
    }

    /// Swaps in the update's state (with its document, when the writer made it already) and tells every subscriber
    /// of the set; returns how many it told.
    @discardableResult
    func publish(_ update: SetUpdate, served: ServedDocument? = nil) -> Int {
        registry.withLock { registry -> Int in
            // Taken out of the dictionary so that dropping subscribers does not copy the whole table.
            guard var entry = registry.entries.removeValue(forKey: update.state.name) else {
                registry.entries[update.state.name] = Entry(state: update.state, served: served)
                epoch.add(1, ordering: .releasing)
                return 0
            }
            entry.state = update.state
            entry.served = served
            epoch.add(1, ordering: .releasing)
            let told = entry.subscribers.count
            for (id, callback) in entry.subscribers where !callback(.update(update)) {
                entry.subscribers[id] = nil
            }
            registry.entries[update.state.name] = entry
            return told
        }
    }

    /// Subscribes to a set: `initial` sees the current state and its document (if made yet) under the lock, and
    /// decides whether to subscribe (returning the callback) or not (`nil`, e.g. when a long-poll finds a newer
    /// version already). Returns the subscription id, or `nil` when the set does not exist, `initial` declined, or
    /// the registry is closed.
    func subscribe(_ set: String, _ initial: (SetState, ServedDocument?) -> Callback?) -> Int? {
        registry.withLock { registry -> Int? in
            guard !registry.closed, let entry = registry.entries[set], let callback = initial(entry.state, entry.served)
            else {
                return nil
            }
            registry.nextID += 1
            registry.entries[set]?.subscribers[registry.nextID] = callback
            return registry.nextID
        }
    }

    /// Ends a subscription; nothing happens for one that has ended already.
    func unsubscribe(_ set: String, _ id: Int) {
        registry.withLock { registry in
            _ = registry.entries[set]?.subscribers.removeValue(forKey: id)
        }
    }

    /// Sends a heartbeat to every subscriber, dropping those that have gone.
    func heartbeat() {
        registry.withLock { registry in
            for name in Array(registry.entries.keys) {
                guard var entry = registry.entries.removeValue(forKey: name) else { continue }
                for (id, callback) in entry.subscribers where !callback(.heartbeat) { entry.subscribers[id] = nil }
                registry.entries[name] = entry
            }
        }
    }

    /// Tells every subscriber the server is going away and refuses new subscriptions.
    func close() {
        registry.withLock { registry in
            registry.closed = true
            for (name, entry) in registry.entries {
                for callback in entry.subscribers.values { _ = callback(.shutdown) }
                registry.entries[name]?.subscribers = [:]
            }
        }
    }

    /// How many subscriptions are open, per set.
    func subscriberCounts() -> [String: Int] {
        registry.withLock { registry in registry.entries.mapValues(\.subscribers.count) }
    }
}
