import Foundation

/// A token bucket: `capacity` at once, refilled at `perSecond`.
struct TokenBucket: Sendable {
    let capacity: Double
    let perSecond: Double
    private var tokens: Double
    private var updated: Date

    init(capacity: Double, perSecond: Double, now: Date) {
        self.capacity = capacity
        self.perSecond = perSecond
        self.tokens = capacity
        self.updated = now
    }

    private mutating func refill(now: Date) {
        let elapsed = max(0, now.timeIntervalSince(updated))
        tokens = min(capacity, tokens + elapsed * perSecond)
        updated = now
    }

    /// Takes one token if there is one.
    mutating func take(now: Date) -> Bool {
        refill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Seconds until a token is there.
    func secondsUntilNext(now: Date) -> Double {
        let elapsed = max(0, now.timeIntervalSince(updated))
        let have = min(capacity, tokens + elapsed * perSecond)
        return have >= 1 ? 0 : (1 - have) / perSecond
    }

    /// Whether the bucket is full again (its owner may be forgotten).
    func isFull(now: Date) -> Bool {
        secondsUntilNext(now: now) == 0
            && min(capacity, tokens + max(0, now.timeIntervalSince(updated)) * perSecond)
                >= capacity
    }
}
