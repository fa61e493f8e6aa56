import Testing

@testable import FlagCore

/// The map every compiled set keeps its flags in: a copy shares its storage, and a change to a copy changes only
/// that copy.
@Suite("KeyedMap: a map whose copies share storage")
struct KeyedMapTests {
    @Test func holdsWhatADictionaryHoldsThroughGrowthAndRemoval() {
        var map = KeyedMap<Int>()
        var reference: [String: Int] = [:]
        var random = SplitMix64(seed: 7)
        for step in 0..<20_000 {
            let key = "k\(random.below(3_000))"
            if random.chance(25) {
                map[key] = nil
                reference[key] = nil
            } else {
                map[key] = step
                reference[key] = step
            }
        }
        #expect(map.count == reference.count)
        for index in 0..<3_000 { #expect(map["k\(index)"] == reference["k\(index)"]) }
        #expect(Dictionary(uniqueKeysWithValues: map.entries.map { ($0.key, $0.value) }) == reference)
    }

    @Test func aChangedCopyLeavesTheOriginalAsItWas() {
        let original = KeyedMap((0..<1_000).map { ("k\($0)", $0) })
        var copy = original
        copy["k1"] = -1
        copy["k2"] = nil
        copy["new"] = 5
        #expect(original["k1"] == 1 && original["k2"] == 2 && original["new"] == nil && original.count == 1_000)
        #expect(copy["k1"] == -1 && copy["k2"] == nil && copy["new"] == 5 && copy.count == 1_000)
    }

    @Test func aPositionNamesTheValueItWasFoundAt() {
        let map = KeyedMap((0..<500).map { ("key-\($0)", $0) })
        for index in 0..<500 {
            let key = "key-\(index)"
            let position = map.position(of: key, hash: ByteHash.hash(key))
            #expect(position.map { map[$0] } == index)
        }
        #expect(map.position(of: "absent", hash: ByteHash.hash("absent")) == nil)
    }

    @Test func aKeyGivenTwiceKeepsItsLastValue() {
        let map = KeyedMap([("a", 1), ("b", 2), ("a", 3)])
        #expect(map.count == 2 && map["a"] == 3 && map["b"] == 2)
    }
}
