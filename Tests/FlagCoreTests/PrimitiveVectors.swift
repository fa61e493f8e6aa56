import Foundation
import Testing

/// The JSON test vectors shipped in `Vectors/` (copied from the SPEC), read with Foundation.
enum PrimitiveVectors {
    /// One MurmurHash3 x86_32 vector.
    struct Murmur: Sendable {
        let input: String
        let seed: UInt32
        let hash: UInt32
    }

    /// One SemVer precedence comparison: -1, 0 or 1.
    struct SemverComparison: Sendable {
        let a: String
        let b: String
        let order: Int
    }

    static func murmur() throws -> [Murmur] {
        let root = try object(named: "murmur3_x86_32")
        let vectors = try #require(root["vectors"] as? [[String: Any]])
        return try vectors.map { vector in
            Murmur(
                input: try #require(vector["input"] as? String),
                seed: try #require((vector["seed"] as? Int).flatMap(UInt32.init(exactly:))),
                hash: try #require((vector["hash"] as? Int).flatMap(UInt32.init(exactly:)))
            )
        }
    }

    static func semver() throws -> (comparisons: [SemverComparison], validity: [(version: String, valid: Bool)]) {
        let root = try object(named: "semver")
        let compare = try #require(root["compare"] as? [[String: Any]])
        let validity = try #require(root["validity"] as? [[String: Any]])
        return (
            try compare.map { entry in
                SemverComparison(
                    a: try #require(entry["a"] as? String),
                    b: try #require(entry["b"] as? String),
                    order: try #require(entry["compare"] as? Int)
                )
            },
            try validity.map { entry in
                (try #require(entry["version"] as? String), try #require(entry["valid"] as? Bool))
            }
        )
    }

    private static func object(named name: String) throws -> [String: Any] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Vectors"))
        let data = try Data(contentsOf: url)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

/// A small deterministic generator so that the round-trip sample is the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random choices for generated cases, drawn from the seeded generator so that a failure repeats.
extension SplitMix64 {
    /// A number in `0..<bound`.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    /// True `percent` times in a hundred.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    /// One of `items`.
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}
