/// A map from string keys to values whose copies share their storage, so that a new version of a large flag set
/// costs its change and not the set: the keys are spread over shards by `ByteHash`, and setting or removing a key
/// in a copy copies the one shard it lives in (and the list of shards, one reference each).
///
/// Each shard is an open-addressing table with at least twice as many slots as entries; the shards double in
/// number, all rebuilt at once, when they hold `entriesPerShard` entries on average. A lookup by a precomputed
/// hash (a `FlagHandle`'s) hashes nothing. A slot's position (`Position`) stays valid for the map it came from.
package struct KeyedMap<Value: Sendable>: Sendable {
    /// One key's place: its hash, its key and its value.
    struct Entry: Sendable {
        let hash: UInt64
        let key: String
        let value: Value
    }

    /// An immutable open-addressing table; a change makes a new one. Hashes, keys and values are kept apart so
    /// that a probe reads plain integers and a lookup copies nothing but the value it returns.
    final class Shard: Sendable {
        /// Each slot's hash, 0 for an empty slot (a key whose hash is 0 is stored as 1).
        let hashes: [UInt64]
        let keys: [String]
        let values: [Value?]
        let count: Int

        init(_ entries: [Entry]) {
            var capacity = 2
            while capacity < entries.count * 2 { capacity *= 2 }
            var hashes = [UInt64](repeating: 0, count: capacity)
            var keys = [String](repeating: "", count: capacity)
            var values = [Value?](repeating: nil, count: capacity)
            let mask = capacity - 1
            for entry in entries {
                var index = Int(truncatingIfNeeded: entry.hash) & mask
                while hashes[index] != 0 { index = (index + 1) & mask }
                hashes[index] = KeyedMap.stored(entry.hash)
                keys[index] = entry.key
                values[index] = entry.value
            }
            self.hashes = hashes
            self.keys = keys
            self.values = values
            self.count = entries.count
        }

        /// This shard's entries except the one at `excluded`.
        func entries(excluding excluded: Int = -1) -> [Entry] {
            var entries: [Entry] = []
            entries.reserveCapacity(count)
            for index in hashes.indices where hashes[index] != 0 && index != excluded {
                // A stored hash of 1 may stand for 0: the entry keeps the key's real hash.
                entries.append(Entry(hash: ByteHash.hash(keys[index]), key: keys[index], value: values[index]!))
            }
            return entries
        }
    }

    /// Where an entry sits: its shard and its slot in that shard, packed so that an evaluation result carries it as
    /// one number.
    package typealias Position = Int32

    /// How many entries a shard holds on average before the shards double.
    static var entriesPerShard: Int { 64 }
    /// A position keeps 16 bits for the slot, and a shard has at least twice as many slots as entries.
    static var maximumShardEntries: Int { 1 << 14 }

    private var shards: [Shard] = [Shard([])]
    /// The number of keys.
    package private(set) var count = 0

    /// An empty map.
    package init() {}

    /// A map of `entries`; a key given twice keeps its last value.
    package init<S: Sequence>(_ entries: S) where S.Element == (String, Value) {
        var all: [Entry] = []
        for (key, value) in entries { all.append(Entry(hash: ByteHash.hash(key), key: key, value: value)) }
        rebuild(all, shardCount: Self.shardCount(for: all.count))
    }

    package var isEmpty: Bool { count == 0 }

    // MARK: - Reading

    /// The value of `key`, whose `ByteHash` is `hash`.
    @inline(__always)
    package func value(_ key: String, hash: UInt64) -> Value? {
        position(of: key, hash: hash).map { self[$0] }
    }

    /// The position of `key` (whose `ByteHash` is `hash`), or `nil` when the map does not hold it.
    @inline(__always)
    package func position(of key: String, hash: UInt64) -> Position? {
        let shardIndex = Self.shardIndex(hash, shards.count)
        let shard = shards[shardIndex]
        let stored = Self.stored(hash)
        let mask = shard.hashes.count - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        while true {
            let slotHash = shard.hashes[index]
            if slotHash == 0 { return nil }
            if slotHash == stored && shard.keys[index] == key { return Position(shardIndex << 16 | index) }
            index = (index + 1) & mask
        }
    }

    /// `hash` as a shard stores it: never 0, which marks an empty slot.
    @inline(__always)
    static func stored(_ hash: UInt64) -> UInt64 {
        hash == 0 ? 1 : hash
    }

    /// The value at a position this map gave.
    @inline(__always)
    package subscript(position: Position) -> Value {
        // A position comes from `position(of:hash:)` on this map, so its slot holds an entry.
        shards[Int(position) >> 16].values[Int(position) & 0xFFFF]!
    }

    /// Every key and value, in no particular order.
    package var entries: [(key: String, value: Value)] {
        var result: [(key: String, value: Value)] = []
        result.reserveCapacity(count)
        for shard in shards {
            for index in shard.hashes.indices where shard.hashes[index] != 0 {
                result.append((shard.keys[index], shard.values[index]!))
            }
        }
        return result
    }

    /// Every key, in no particular order.
    package var keys: [String] {
        entries.map(\.key)
    }

    // MARK: - Changing

    /// The value of `key`; setting it (or, with `nil`, removing it) copies only the shard the key lives in.
    package subscript(key: String) -> Value? {
        get { position(of: key, hash: ByteHash.hash(key)).map { self[$0] } }
        set { set(key, newValue) }
    }

    /// Sets (or, with `nil`, removes) the value of `key`.
    package mutating func set(_ key: String, _ value: Value?) {
        let hash = ByteHash.hash(key)
        let shardIndex = Self.shardIndex(hash, shards.count)
        let shard = shards[shardIndex]
        let existing = position(of: key, hash: hash)
        guard let value else {
            guard let existing else { return }
            // Removing from an open-addressing table would break the probe chains behind the slot: the shard is
            // built again without the key.
            shards[shardIndex] = Shard(shard.entries(excluding: Int(existing) & 0xFFFF))
            count -= 1
            return
        }
        let entry = Entry(hash: hash, key: key, value: value)
        if let existing {
            shards[shardIndex] = Shard(shard.entries(excluding: Int(existing) & 0xFFFF) + [entry])
            return
        }
        count += 1
        // A shard past a quarter of the slots a position can name doubles the shards instead of growing alone.
        if count > shards.count * Self.entriesPerShard || shard.count >= Self.maximumShardEntries {
            rebuild(
                entries.map { Entry(hash: ByteHash.hash($0.key), key: $0.key, value: $0.value) } + [entry],
                shardCount: shards.count * 2)
            return
        }
        shards[shardIndex] = Shard(shard.entries() + [entry])
    }

    // MARK: - Building

    private static func shardIndex(_ hash: UInt64, _ shardCount: Int) -> Int {
        Int(truncatingIfNeeded: hash >> 40) & (shardCount - 1)
    }

    /// The power of two of shards for `count` entries.
    private static func shardCount(for count: Int) -> Int {
        var shards = 1
        while count > shards * entriesPerShard { shards *= 2 }
        return shards
    }

    private mutating func rebuild(_ all: [Entry], shardCount: Int) {
        var buckets = [[Entry]](repeating: [], count: shardCount)
        var seen: [String: Int] = [:]
        for entry in all {
            let index = Self.shardIndex(entry.hash, shardCount)
            if let earlier = seen[entry.key] {
                buckets[index][earlier] = entry
            } else {
                seen[entry.key] = buckets[index].count
                buckets[index].append(entry)
            }
        }
        shards = buckets.map(Shard.init)
        count = seen.count
    }
}
