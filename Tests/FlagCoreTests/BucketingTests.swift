import Testing

@testable import FlagCore

@Suite("Bucketing")
struct BucketingTests {
    /// SPEC §2.1 table split at the first ':' into salt and unit: (salt, unit, bucket).
    static let specBuckets: [(String, String, Int)] = [
        ("new-checkout", "user-1", 631),
        ("new-checkout", "user-2", 789),
        ("checkout", "42", 5384),
        ("dark-mode", "😀-user", 2482),
    ]

    @Test("SPEC §2.1 bucket vectors", arguments: specBuckets)
    func specBucket(salt: String, unit: String, bucket: Int) {
        #expect(Bucketer(salt: salt).bucket(unit) == bucket)
    }

    @Test("SPEC §2.1 buckets of inputs without a salt separator: hash mod 10000")
    func specBucketsOfWholeInputs() {
        #expect(Int(Murmur3.hash32("a") % 10_000) == 4850)
        #expect(Int(Murmur3.hash32("") % 10_000) == 0)
    }

    @Test("bucket equals the file vectors' seed-0 hash mod 10000 for every split of the input into salt and unit")
    func bucketMatchesFileVectors() throws {
        for vector in try PrimitiveVectors.murmur() where vector.seed == 0 {
            guard let colon = vector.input.firstIndex(of: ":") else {
                // No separator: the empty salt gives ":" + input, so only the hash itself can be checked here.
                continue
            }
            let bucketer = Bucketer(salt: String(vector.input[..<colon]))
            let unit = String(vector.input[vector.input.index(after: colon)...])
            #expect(bucketer.bucket(unit) == Int(vector.hash % 10_000), "\(vector.input.debugDescription)")
        }
        // The salt may be empty: bucket("", u) hashes ":" + u.
        #expect(Bucketer(salt: "").bucket("x") == Int(Murmur3.hash32(":x") % 10_000))
    }

    @Test("bucketers compare and hash by salt")
    func bucketerIdentity() {
        #expect(Bucketer(salt: "a") == Bucketer(salt: "a"))
        #expect(Bucketer(salt: "a") != Bucketer(salt: "b"))
        #expect(Set([Bucketer(salt: "a"), Bucketer(salt: "a"), Bucketer(salt: "b")]).count == 2)
        #expect(Bucketer(salt: "new-checkout").salt == "new-checkout")
    }

    @Test("a unit inside at p % stays inside at every q > p %")
    func monotonicRollout() {
        let percents: [Double] = [0, 0.01, 0.02, 0.5, 1, 2, 5, 10, 12.5, 20, 33.33, 50, 66.67, 99, 99.99, 100]
        let bucketer = Bucketer(salt: "monotonic")
        var insideCounts = [Int](repeating: 0, count: percents.count)
        for index in 0..<5000 {
            let unit = "unit-\(index)"
            let inside = percents.map { bucketer.isInRollout(unit, percent: $0) }
            for (position, isInside) in inside.enumerated() where isInside {
                insideCounts[position] += 1
                #expect(inside[position...].allSatisfy { $0 }, "\(unit) left the rollout above \(percents[position]) %")
            }
        }
        #expect(insideCounts.first == 0)
        #expect(insideCounts.last == 5000)
        #expect(insideCounts == insideCounts.sorted())
        // Between consecutive percents, the thresholds themselves never decrease.
        let thresholds = stride(from: 0.0, through: 100.0, by: 0.001).map { RolloutMath.threshold(percent: $0) }
        #expect(zip(thresholds, thresholds.dropFirst()).allSatisfy { $0 <= $1 })
    }

    /// Chi-square over 100,000 units into 100 cells (bucket / 100); 148.2 is the 99.9 % critical value at df 99.
    @Test("uniformity: chi-square below the 99.9 % critical value", arguments: ["new-checkout", "dark-mode", "x"])
    func uniformity(salt: String) {
        let bucketer = Bucketer(salt: salt)
        var cells = [Int](repeating: 0, count: 100)
        let units = 100_000
        for index in 0..<units {
            let bucket = bucketer.bucket("user-\(index)")
            #expect((0...9999).contains(bucket))
            cells[bucket / 100] += 1
        }
        let expected = Double(units) / 100
        let chiSquare = cells.reduce(0.0) { $0 + (Double($1) - expected) * (Double($1) - expected) / expected }
        #expect(chiSquare < 148.2, "chi-square \(chiSquare)")
    }

    @Test("percent thresholds: round(p * 100) in 0.01 % steps, clamped")
    func thresholds() {
        let cases: [(Double, Int)] = [
            (0, 0), (0.004, 0), (0.01, 1), (0.02, 2), (0.5, 50), (1, 100), (12.5, 1250), (33.33, 3333),
            (50, 5000), (66.666, 6667), (99.99, 9999), (100, 10_000), (150, 10_000), (-5, 0),
            (.nan, 0), (.infinity, 10_000), (-.infinity, 0), (0.125, 13),
        ]
        for (percent, threshold) in cases {
            #expect(RolloutMath.threshold(percent: percent) == threshold, "percent \(percent)")
        }
    }

    @Test("0 % holds nobody, 100 % everybody, 0.01 % exactly bucket 0")
    func containsEdges() {
        #expect(!(0...9999).contains { RolloutMath.contains(bucket: $0, percent: 0) })
        #expect((0...9999).allSatisfy { RolloutMath.contains(bucket: $0, percent: 100) })
        #expect((0...9999).filter { RolloutMath.contains(bucket: $0, percent: 0.01) } == [0])
        #expect(RolloutMath.contains(bucket: 9998, percent: 99.99))
        #expect(!RolloutMath.contains(bucket: 9999, percent: 99.99))
        #expect(RolloutMath.contains(bucket: 630, percent: 6.31) && !RolloutMath.contains(bucket: 631, percent: 6.31))
        // SPEC vector: new-checkout:user-1 is bucket 631, inside from 6.32 % on.
        let bucketer = Bucketer(salt: "new-checkout")
        #expect(!bucketer.isInRollout("user-1", percent: 6.31))
        #expect(bucketer.isInRollout("user-1", percent: 6.32))
    }

    @Test("split [34, 33, 33] takes buckets 0–3399, 3400–6699, 6700–9999")
    func evenishSplit() {
        let weights: [Double] = [34, 33, 33]
        for (bucket, index) in [(0, 0), (3399, 0), (3400, 1), (6699, 1), (6700, 2), (9999, 2)] {
            #expect(RolloutMath.variantIndex(bucket: bucket, weights: weights) == index, "bucket \(bucket)")
        }
        #expect(variantSizes(weights) == [3400, 3300, 3300])
    }

    @Test("fractional weights end each range at the rounded cumulative sum")
    func fractionalSplits() {
        #expect(variantSizes([33.33, 33.33, 33.34]) == [3333, 3333, 3334])
        #expect(variantSizes([12.5, 87.5]) == [1250, 8750])
        #expect(variantSizes([0.01, 99.99]) == [1, 9999])
        // 33.335 + 33.335 = 66.67 exactly in the rounding, not 3334 + 3334.
        #expect(variantSizes([33.335, 33.335, 33.33]) == [3334, 3333, 3333])
        #expect(variantSizes([100]) == [10_000])
        #expect(variantSizes([50, 0, 50]) == [5000, 0, 5000])
    }

    @Test("uncovered buckets and buckets out of range have no variant")
    func uncovered() {
        #expect(RolloutMath.variantIndex(bucket: 0, weights: []) == nil)
        #expect(RolloutMath.variantIndex(bucket: 5000, weights: [50]) == nil)
        #expect(RolloutMath.variantIndex(bucket: 4999, weights: [50]) == 0)
        #expect(RolloutMath.variantIndex(bucket: 10_000, weights: [50, 50]) == nil)
        #expect(RolloutMath.variantIndex(bucket: -1, weights: [50, 50]) == nil)
    }

    private func variantSizes(_ weights: [Double]) -> [Int] {
        var sizes = [Int](repeating: 0, count: weights.count)
        for bucket in 0..<10_000 {
            if let index = RolloutMath.variantIndex(bucket: bucket, weights: weights) { sizes[index] += 1 }
        }
        return sizes
    }
}
