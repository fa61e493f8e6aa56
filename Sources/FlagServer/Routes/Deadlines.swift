import Dispatch
import FlagLock
import Synchronization

/// Long-poll timeouts on one coarse timer. A poll answered early removes its entry, leaving nothing behind; one
/// `asyncAfter` per poll would keep each answered poll's closure alive until its deadline (up to 300 s).
final class Deadlines: Sendable {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let fire: @Sendable () -> Void
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var nextID = 0
    }

    private let state = Locked(State())
    private let timer: HeartbeatTimer

    /// A timer on `queue` checking every `tick` (the timeouts' resolution).
    init(queue: DispatchQueue, tick: Duration = .milliseconds(100)) {
        let source = DispatchSource.makeTimerSource(queue: queue)
        timer = HeartbeatTimer(source: source)
        source.schedule(deadline: .now() + tick.timeInterval, repeating: tick.timeInterval, leeway: .milliseconds(20))
        source.setEventHandler { [weak self] in self?.fireExpired() }
        source.resume()
    }

    deinit {
        timer.source.cancel()
    }

    /// Calls `fire` once `delay` has passed, unless removed first; returns the id to remove it with.
    func add(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> Int {
        let deadline = ContinuousClock.now + delay
        return state.withLock { state in
            state.nextID += 1
            state.entries[state.nextID] = Entry(deadline: deadline, fire: fire)
            return state.nextID
        }
    }

    /// Forgets a deadline; nothing happens for one that has fired or been removed.
    func remove(_ id: Int) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// How many deadlines are pending.
    var count: Int { state.withLock { $0.entries.count } }

    private func fireExpired() {
        let now = ContinuousClock.now
        let due = state.withLock { state -> [Entry] in
            guard !state.entries.isEmpty else { return [] }
            let expired = state.entries.filter { $0.value.deadline <= now }
            for id in expired.keys { state.entries[id] = nil }
            return Array(expired.values)
        }
        for entry in due { entry.fire() }
    }
}
