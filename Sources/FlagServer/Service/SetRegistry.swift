import Dispatch
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

/// The current state of every set, its document once made, and who is waiting for its next version.
///
/// The states and the subscriptions are behind one lock, which is held only to swap a state, subscribe, unsubscribe
/// and queue signals: a write's own answer never waits for its fan-out. Subscribers are told on one serial queue
/// (`fanout`), in the order the signals were made, off the writer's thread.
///
/// A signal goes to the subscriptions that existed when it was made, under the lock, together with the state swap.
/// A subscriber's first look at the state (`subscribe`'s `initial`) is under the same lock, so it sees either the
/// state before a version and then that version's signal, or the state after it and not the signal: a stream never
/// sees a patch before the document it applies to, and a long-poll never misses a version published between its
/// check and its subscription. Callbacks run one at a time on the fan-out queue: they must be quick (queue bytes,
/// answer a responder) and return whether to stay subscribed. Once `unsubscribe` returns, no call of the callback
/// starts (one already running may finish).
final class SetRegistry: Sendable {
    typealias Callback = @Sendable (SetSignal) -> Bool

    /// One subscriber; `active` goes false when it unsubscribes or declines a signal, and no signal reaches it then.
    private final class Subscription: Sendable {
        let set: String
        let id: Int
        let callback: Callback
        let active = Atomic<Bool>(true)

        init(set: String, id: Int, _ callback: @escaping Callback) {
            self.set = set
            self.id = id
            self.callback = callback
        }
    }

    private struct Entry {
        var state: SetState
        /// The document of `state` as served, once the documents executor made it.
        var served: ServedDocument?
        var subscribers: Subscribers = [:]
    }

    /// A set's subscriptions by id. A signal holds a copy, which costs nothing until the next change of the table.
    private typealias Subscribers = [Int: Subscription]

    private struct Registry {
        var entries: [String: Entry] = [:]
        var nextID = 0
        var closed = false
        /// Whether a store route runs inside `answeringFirst`.
        var answering = false
        /// Signals held until that route has answered: its own versions, and every signal made after the first of
        /// them (so that the order stays the order they were made in).
        var held: [@Sendable () -> Void] = []
    }

    private let registry = Locked(Registry())
    /// Where subscribers are told, one signal after another.
    private let fanout = DispatchQueue(label: "flagserver.fanout", qos: .userInitiated)
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
            guard let entry = registry.entries[state.name], entry.state === state else { return nil }
            if let kept = entry.served, !replacing { return kept }
            registry.entries[state.name]?.served = served
            epoch.add(1, ordering: .releasing)
            tell(entry.subscribers, .served(state, served), in: &registry)
            return served
        }
    }

    /// Swaps in the update's state (with its document, when the writer made it already) and tells every subscriber
    /// of the set on the fan-out queue, then calls `done` there with how many it told (at once, with 0, when the set
    /// has none). Returns without waiting for the subscribers.
    func publish(_ update: SetUpdate, served: ServedDocument? = nil, done: @escaping @Sendable (Int) -> Void = { _ in })
    {
        registry.withLock { registry in
            let name = update.state.name
            epoch.add(1, ordering: .releasing)
            let subscribers = registry.entries[name]?.subscribers ?? [:]
            if registry.entries[name] == nil {
                registry.entries[name] = Entry(state: update.state, served: served)
            } else {
                registry.entries[name]?.state = update.state
                registry.entries[name]?.served = served
            }
            tell(subscribers, .update(update), in: &registry) { done(subscribers.count) }
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
            registry.entries[set]?.subscribers[registry.nextID] = Subscription(set: set, id: registry.nextID, callback)
            return registry.nextID
        }
    }

    /// Ends a subscription; nothing happens for one that has ended already.
    func unsubscribe(_ set: String, _ id: Int) {
        let subscription = registry.withLock { registry in registry.entries[set]?.subscribers.removeValue(forKey: id) }
        subscription?.active.store(false, ordering: .releasing)
    }

    /// Sends a heartbeat to every subscriber, dropping those that have gone.
    func heartbeat() {
        registry.withLock { registry in
            for subscribers in registry.entries.values.map(\.subscribers) {
                tell(subscribers, .heartbeat, in: &registry)
            }
        }
    }

    /// Tells every subscriber the server is going away, refuses new subscriptions, and returns when all were told.
    func close() {
        registry.withLock { registry in
            registry.closed = true
            // A store route still running must not hold the shutdown back: what it holds goes out now, first.
            releaseHeld(in: &registry)
            for name in registry.entries.keys {
                tell(registry.entries[name]?.subscribers ?? [:], .shutdown, in: &registry)
                registry.entries[name]?.subscribers = [:]
            }
        }
        waitForFanout()
    }

    /// Returns when every signal made before the call has been told.
    func waitForFanout() {
        fanout.sync {}
    }

    /// How many subscriptions are open, per set.
    func subscriberCounts() -> [String: Int] {
        registry.withLock { registry in registry.entries.mapValues(\.subscribers.count) }
    }

    /// Runs `body`, a store route that may publish versions and then answers; the fan-out of those versions starts
    /// when it returns, so that the writer's answer does not compete with its own fan-out for the processor. Signals
    /// made meanwhile by others wait only once the route has published something, and only until it returns.
    func answeringFirst<T>(_ body: () throws -> T) rethrows -> T {
        registry.withLock { $0.answering = true }
        defer {
            registry.withLock { releaseHeld(in: &$0) }
        }
        return try body()
    }

    /// Ends the hold of `answeringFirst`: what it held is queued for the fan-out, under the lock, so that a signal
    /// made right after queues behind it.
    private func releaseHeld(in registry: inout Registry) {
        registry.answering = false
        for work in registry.held { fanout.async(execute: work) }
        registry.held = []
    }

    /// Tells `subscribers` of `signal` on the fan-out queue, then runs `done` there; those that decline the signal
    /// are unsubscribed. Called under the lock, so that the fan-out's order is the order the signals were made in.
    private func tell(
        _ subscribers: Subscribers, _ signal: SetSignal, in registry: inout Registry,
        then done: (@Sendable () -> Void)? = nil
    ) {
        guard !subscribers.isEmpty else {
            done?()  // nobody to tell: no thread to wake
            return
        }
        let work: @Sendable () -> Void = { [self] in
            var declined: [Subscription] = []
            for subscription in subscribers.values where subscription.active.load(ordering: .acquiring) {
                if !subscription.callback(signal) {
                    subscription.active.store(false, ordering: .releasing)
                    declined.append(subscription)
                }
            }
            if !declined.isEmpty {
                self.registry.withLock { registry in
                    for subscription in declined {
                        registry.entries[subscription.set]?.subscribers[subscription.id] = nil
                    }
                }
            }
            done?()
        }
        let isUpdate = if case .update = signal { true } else { false }
        if registry.answering && (isUpdate || !registry.held.isEmpty) {
            registry.held.append(work)
        } else {
            fanout.async(execute: work)
        }
    }
}
