import FlagLock
import Foundation
import Synchronization

/// The streams and waiting long-polls by the token they were opened with, so that each ends the moment its token
/// stops being valid (SPEC §4: "the streams it opened end").
///
/// `TokenAuthority.onRevoked` calls `end(_:)` on the revoking thread, before the revocation returns: a write made
/// after it finds the stream finished and sends it nothing. An expiry is a deadline of its own
/// (`FlagServerApp.watchToken`).
final class TokenWatch: Sendable {
    private struct State {
        var ends: [String: [Int: @Sendable () -> Void]] = [:]
        var nextID = 0
    }

    private let state = Locked(State())

    /// Calls `end` once the token named `token` is revoked; returns the id to `remove` it with.
    func add(token: String, end: @escaping @Sendable () -> Void) -> Int {
        state.withLock { state in
            state.nextID += 1
            state.ends[token, default: [:]][state.nextID] = end
            return state.nextID
        }
    }

    /// Forgets an entry; nothing happens for one that has ended already.
    func remove(token: String, id: Int) {
        state.withLock { state in
            state.ends[token]?[id] = nil
            if state.ends[token]?.isEmpty == true { state.ends[token] = nil }
        }
    }

    /// Ends everything opened with the tokens named `tokens`. The ends run outside the lock: they finish streams and
    /// answer polls, which may end up in `remove`.
    func end(_ tokens: Set<String>) {
        let ends = state.withLock { state in
            tokens.flatMap { state.ends.removeValue(forKey: $0)?.values.map { $0 } ?? [] }
        }
        for end in ends { end() }
    }

    /// How many streams and polls are watched, for tests.
    var count: Int { state.withLock { $0.ends.values.reduce(0) { $0 + $1.count } } }
}

extension FlagServerApp {
    /// Ends a stream or long-poll of `call` with `end` when its token stops being valid: revoked (here, or by another
    /// server sharing the store) or expired, at the moment of expiry. Returns what stops the watch once the answer
    /// ended for another reason; nil when the token is not valid any more, and the caller ends at once. `end` may be
    /// called from any thread, and must do nothing the second time.
    func watchToken(of call: Call, _ end: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        guard let principal = call.principal, let token = principal.revocableName else { return {} }
        let watch = self.watch
        let deadlines = self.deadlines
        let expiry = Atomic<Int>(0)
        let id = watch.add(token: token) {
            deadlines.remove(expiry.load(ordering: .acquiring))
            end()
        }
        let stop: @Sendable () -> Void = {
            watch.remove(token: token, id: id)
            deadlines.remove(expiry.load(ordering: .acquiring))
        }
        if let expiresAt = principal.expiresAt {
            let left = expiresAt.timeIntervalSince(clock.now())
            guard left > 0 else {
                stop()
                return nil
            }
            let deadline = deadlines.add(after: .seconds(left)) {
                watch.remove(token: token, id: id)
                end()
            }
            expiry.store(deadline, ordering: .releasing)
        }
        // A revocation after the caller was checked and before `add` ended nothing here: it moved the generation.
        if tokens.generation.load(ordering: .acquiring) != call.generation, !tokens.isActive(name: token) {
            stop()
            return nil
        }
        return stop
    }
}
