import Testing

@testable import FlagCore

@Suite("Murmur3")
struct Murmur3Tests {
    /// SPEC §2.1 table: input, murmur3_x86_32 with seed 0.
    static let specTable: [(String, UInt32)] = [
        ("new-checkout:user-1", 2_230_340_631),
        ("new-checkout:user-2", 992_310_789),
        ("a", 1_009_084_850),
        ("checkout:42", 2_630_045_384),
        ("dark-mode:😀-user", 3_664_142_482),
        ("", 0),
    ]

    @Test("SPEC §2.1 hash vectors", arguments: specTable)
    func specVector(input: String, hash: UInt32) {
        #expect(Murmur3.hash32(input) == hash)
        #expect(Murmur3.hash32(input, seed: 0) == hash)
        let bytes = Array(input.utf8)
        #expect(bytes.withUnsafeBytes { Murmur3.hash32($0) } == hash)
    }

    @Test("all 1,395 vectors of Vectors/murmur3_x86_32.json, three seeds")
    func fileVectors() throws {
        let vectors = try PrimitiveVectors.murmur()
        #expect(vectors.count == 1395)
        #expect(Set(vectors.map(\.seed)) == [0, 1, 2_538_058_380])
        #expect(vectors.contains { $0.input.utf8.count > 200 })
        var mismatches = 0
        for vector in vectors {
            let viaString = Murmur3.hash32(vector.input, seed: vector.seed)
            let viaBytes = Array(vector.input.utf8).withUnsafeBytes { Murmur3.hash32($0, seed: vector.seed) }
            if viaString != vector.hash || viaBytes != vector.hash {
                mismatches += 1
                Issue.record(
                    "\(vector.input.debugDescription) seed \(vector.seed): \(viaString), expected \(vector.hash)")
            }
        }
        #expect(mismatches == 0)
    }

    /// SMHasher's `VerificationTest`: keys {}, {0}, {0,1}, … hashed with seed 256 - length, then the 256 results
    /// (little-endian) hashed with seed 0. The reference publishes 0xB0F57EE3 for MurmurHash3_x86_32.
    @Test("SMHasher verification value 0xB0F57EE3")
    func smhasherVerification() {
        let key = (0..<256).map { UInt8($0) }
        var results = [UInt8]()
        for length in 0..<256 {
            let hash = key.withUnsafeBytes {
                Murmur3.hash32(UnsafeRawBufferPointer(rebasing: $0[..<length]), seed: UInt32(256 - length))
            }
            withUnsafeBytes(of: hash.littleEndian) { results.append(contentsOf: $0) }
        }
        #expect(results.withUnsafeBytes { Murmur3.hash32($0) } == 0xB0F5_7EE3)
    }

    @Test("streaming split at every offset equals one-shot")
    func streamingEveryOffset() throws {
        var seen = Set<String>()
        for vector in try PrimitiveVectors.murmur() where seen.insert("\(vector.seed)|\(vector.input)").inserted {
            let bytes = Array(vector.input.utf8)
            bytes.withUnsafeBytes { all in
                for split in 0...all.count {
                    var hasher = Murmur3Hasher(seed: vector.seed)
                    hasher.combine(UnsafeRawBufferPointer(rebasing: all[..<split]))
                    hasher.combine(UnsafeRawBufferPointer(rebasing: all[split...]))
                    #expect(hasher.finalize() == vector.hash, "split at \(split) of \(vector.input.debugDescription)")
                }
            }
        }
    }

    @Test("streaming in every pair of split points and byte by byte")
    func streamingThreePieces() {
        let bytes = Array("0123456789abcdef-ø😀漢".utf8)
        let expected = bytes.withUnsafeBytes { Murmur3.hash32($0, seed: 7) }
        bytes.withUnsafeBytes { all in
            for first in 0...all.count {
                for second in first...all.count {
                    var hasher = Murmur3Hasher(seed: 7)
                    hasher.combine(UnsafeRawBufferPointer(rebasing: all[..<first]))
                    hasher.combine(UnsafeRawBufferPointer(rebasing: all[first..<second]))
                    hasher.combine(UnsafeRawBufferPointer(rebasing: all[second...]))
                    #expect(hasher.finalize() == expected, "splits at \(first), \(second)")
                }
            }
            var byteByByte = Murmur3Hasher(seed: 7)
            for index in 0..<all.count {
                byteByByte.combine(UnsafeRawBufferPointer(rebasing: all[index..<(index + 1)]))
            }
            #expect(byteByByte.finalize() == expected)
        }
    }

    @Test("finalize leaves the hasher usable: copy a primed hasher and continue")
    func finalizeIsNonMutating() {
        var primed = Murmur3Hasher()
        primed.combine("new-checkout:")
        #expect(primed.finalize() == Murmur3.hash32("new-checkout:"))
        #expect(primed.finalize() == Murmur3.hash32("new-checkout:"))
        var first = primed
        first.combine("user-1")
        var second = primed
        second.combine("user-2")
        #expect(first.finalize() == 2_230_340_631)
        #expect(second.finalize() == 992_310_789)
        primed.combine("user-1")
        #expect(primed.finalize() == 2_230_340_631)
    }

    @Test("string and substring-derived strings hash their UTF-8 bytes")
    func stringForms() {
        let long = String(repeating: "ø😀漢abc", count: 40)
        let fromSubstring = String(long.dropFirst(3))
        let expected = Array(fromSubstring.utf8).withUnsafeBytes { Murmur3.hash32($0, seed: 99) }
        #expect(Murmur3.hash32(fromSubstring, seed: 99) == expected)
        // A small string (stored inline, 15 bytes or fewer) and a large one take different storage paths.
        #expect(Murmur3.hash32("a") == 1_009_084_850)
        #expect(Murmur3.hash32(long) == Array(long.utf8).withUnsafeBytes { Murmur3.hash32($0) })
    }
}
