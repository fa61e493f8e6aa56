/// Bucket of a unit for one salt: murmur3_x86_32(utf8(salt + ":" + unitID), seed 0) mod 10000 (SPEC §2.1).
///
/// Two bucketers are equal when their salts are: the primed hash state is derived from the salt alone.
///
/// ```swift
/// let bucketer = Bucketer(salt: "new-checkout")
/// bucketer.bucket("user-1")                                        // 631
/// RolloutMath.contains(bucket: bucketer.bucket("user-1"), percent: 10)  // true: 631 < 1000
/// ```
public struct Bucketer: Sendable, Hashable {
    /// The number of buckets; bucket numbers are `0..<bucketCount`.
    public static let bucketCount = 10_000

    /// The salt (by default the flag key) that decorrelates flags from one another.
    public let salt: String
    /// The hash state after `salt + ":"`, so that a bucket costs one pass over the unit id only.
    let primed: Murmur3Hasher

    /// Creates a bucketer for a salt, hashing `salt + ":"` once.
    public init(salt: String) {
        self.salt = salt
        var hasher = Murmur3Hasher(seed: 0)
        hasher.combine(salt)
        withUnsafeBytes(of: UInt8(ascii: ":")) { hasher.combine($0) }
        primed = hasher
    }

    /// The bucket of a unit, `0...9999`.
    public func bucket(_ unitID: String) -> Int {
        withBytes(of: unitID) { Self.bucket(primed, UnsafeRawBufferPointer($0)) }
    }

    /// The bucket formula, the one place it is written: the hash state primed with `salt + ":"`, continued over the
    /// unit id's UTF-8 bytes, modulo `bucketCount`. The evaluator calls it with the primed state its program holds.
    @inline(__always)
    static func bucket(_ primed: Murmur3Hasher, _ unit: UnsafeRawBufferPointer) -> Int {
        var hasher = primed
        hasher.combine(unit)
        return Int(hasher.finalize() % UInt32(bucketCount))
    }

    /// Whether a unit falls inside a rollout at `percent` % for this salt.
    public func isInRollout(_ unitID: String, percent: Double) -> Bool {
        RolloutMath.contains(bucket: bucket(unitID), percent: percent)
    }

    /// Two bucketers are equal when their salts are equal.
    public static func == (lhs: Bucketer, rhs: Bucketer) -> Bool {
        lhs.salt == rhs.salt
    }

    /// Hashes the salt only, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(salt)
    }
}

/// Percentages to bucket ranges (SPEC §2.1): a rollout at `p` % holds the buckets `0..<round(p * 100)`.
///
/// Because every rollout starts at bucket 0, a unit inside at `p` % stays inside at every `q > p` %.
public enum RolloutMath {
    /// The first bucket outside a rollout at `percent` %: `round(percent * 100)` clamped to `0...10000`.
    ///
    /// Rounds half away from zero, so 0.005 % steps round up. NaN and negatives give 0 (nobody); 100 % and more
    /// give 10000 (everybody).
    public static func threshold(percent: Double) -> Int {
        let scaled = (percent * 100).rounded()
        // `!(x > 0)` also catches NaN, which must not reach `Int(_:)`.
        guard scaled > 0 else { return 0 }
        guard scaled < Double(Bucketer.bucketCount) else { return Bucketer.bucketCount }
        return Int(scaled)
    }

    /// Whether a bucket lies inside a rollout at `percent` %.
    public static func contains(bucket: Int, percent: Double) -> Bool {
        bucket < threshold(percent: percent)
    }

    /// The variant a bucket falls into when variants with these weights (percent, summing to 100) take
    /// cumulative bucket ranges in list order; nil when the weights leave the bucket uncovered.
    ///
    /// Each range ends at the rounded *cumulative* sum, never at a sum of rounded weights, so rounding errors
    /// do not accumulate: `[33.33, 33.33, 33.34]` ends at 3333, 6666 and 10000.
    public static func variantIndex(bucket: Int, weights: [Double]) -> Int? {
        guard bucket >= 0 else { return nil }
        var cumulative = 0.0
        for (index, weight) in weights.enumerated() {
            cumulative += weight
            if bucket < threshold(percent: cumulative) { return index }
        }
        return nil
    }
}
