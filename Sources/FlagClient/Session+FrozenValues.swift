import FlagCore

extension FlagSession {
    /// What a frozen read found.
    @usableFromInline
    enum FrozenLookup: Sendable {
        /// The frozen value.
        case value(JSONValue)
        /// The frozen evaluation failed: the caller's default.
        case fallback
        /// Not frozen yet, or a local override may apply: take the full path.
        case missing
    }

    /// The frozen values by flag name, in an open-addressing table probed with the hash that the `FlagKey`
    /// computed once: a frozen read compares integers and then one name, and never runs a hasher.
    struct FrozenValues: Sendable {
        /// 0 marks an empty slot; real hashes of 0 are stored as 1.
        private var hashes: [Int] = []
        private var names: [String] = []
        private var values: [FrozenLookup] = []
        private var count = 0

        static func normalized(_ hash: Int) -> Int { hash == 0 ? 1 : hash }

        /// The value frozen for `name`, whose `hashValue` is `hash`.
        @inline(__always)
        func find(_ name: String, hash: Int) -> FrozenLookup {
            guard !hashes.isEmpty else { return .missing }
            let hash = Self.normalized(hash)
            let mask = hashes.count - 1
            var index = hash & mask
            while true {
                let stored = hashes[index]
                if stored == 0 { return .missing }
                if stored == hash && names[index] == name { return values[index] }
                index = (index + 1) & mask
            }
        }

        /// Sets the value for `name`.
        mutating func set(_ name: String, _ value: FrozenLookup) {
            if (count + 1) * 2 > hashes.count { grow() }
            let hash = Self.normalized(name.hashValue)
            let mask = hashes.count - 1
            var index = hash & mask
            while hashes[index] != 0 {
                if hashes[index] == hash && names[index] == name {
                    values[index] = value
                    return
                }
                index = (index + 1) & mask
            }
            hashes[index] = hash
            names[index] = name
            values[index] = value
            count += 1
        }

        private mutating func grow() {
            let old = (hashes, names, values)
            let capacity = max(8, hashes.count * 2)
            hashes = Array(repeating: 0, count: capacity)
            names = Array(repeating: "", count: capacity)
            values = Array(repeating: .missing, count: capacity)
            count = 0
            for index in old.0.indices where old.0[index] != 0 { set(old.1[index], old.2[index]) }
        }
    }
}
