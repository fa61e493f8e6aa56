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

/// A token bucket per source address, for rate limits keyed on who sends. It remembers at most `limit` addresses:
/// when full it forgets those whose bucket is full again (they are as new), and if none is, all of them, so that a
/// flood from many addresses costs a bounded amount of memory and at worst a fresh budget.
struct AddressBuckets: Sendable {
    let capacity: Double
    let perSecond: Double
    let limit: Int
    private var buckets: [String: TokenBucket] = [:]

    init(capacity: Double, perSecond: Double, limit: Int) {
        self.capacity = capacity
        self.perSecond = perSecond
        self.limit = limit
    }

    /// Takes one token of `address`'s bucket, if there is one.
    mutating func take(_ address: String, now: Date) -> Bool {
        if buckets[address] == nil, buckets.count >= limit {
            buckets = buckets.filter { !$0.value.isFull(now: now) }
            if buckets.count >= limit { buckets = [:] }
        }
        var bucket = buckets[address] ?? TokenBucket(capacity: capacity, perSecond: perSecond, now: now)
        defer { buckets[address] = bucket }
        return bucket.take(now: now)
    }
}
