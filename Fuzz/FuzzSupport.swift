// Helpers shared by the harnesses; compiled into each harness binary (see Fuzz/run).

/// Checks a property; a violation (or a thrown error) traps, so that libFuzzer records the input as a crash.
func check(_ condition: @autoclosure () throws -> Bool, _ message: @autoclosure () -> String) {
    do {
        if try !condition() { fail(message()) }
    } catch {
        fail("\(message()) (\(error))")
    }
}

/// A property violation: trap, so that libFuzzer records the input as a crash.
func fail(_ message: String) -> Never {
    fatalError("property violated: \(message)")
}

/// The start of `bytes` as text, for messages.
func text(_ bytes: some Collection<UInt8>, limit: Int = 300) -> String {
    String(decoding: bytes.prefix(limit), as: UTF8.self).debugDescription
}

/// The fuzzer's input read from the front as small choices (split sizes, limits), the rest as the payload.
struct FuzzInput {
    private(set) var bytes: ArraySlice<UInt8>

    init(_ data: UnsafePointer<UInt8>, _ size: Int) {
        bytes = Array(UnsafeBufferPointer(start: data, count: size))[...]
    }

    /// The next byte, or 0 when the input is used up.
    mutating func byte() -> UInt8 {
        bytes.popFirst() ?? 0
    }

    /// One of `options`, as the next byte picks it.
    mutating func pick<Option>(_ options: [Option]) -> Option {
        options[Int(byte()) % options.count]
    }

    /// Sizes of reads for `pieces(_:sizes:)`, one for each bound, each from 1 to its bound, as the next bytes pick.
    mutating func readSizes(upTo bounds: Int...) -> [Int] {
        bounds.map { Int(byte()) % $0 + 1 }
    }
}

/// Splits `bytes` into pieces whose sizes cycle through `sizes` (each at least 1).
func pieces(_ bytes: [UInt8], sizes: [Int]) -> [ArraySlice<UInt8>] {
    var result: [ArraySlice<UInt8>] = []
    var offset = 0
    var turn = 0
    while offset < bytes.count {
        let size = max(1, sizes.isEmpty ? bytes.count : sizes[turn % sizes.count])
        let end = min(bytes.count, offset + size)
        result.append(bytes[offset..<end])
        offset = end
        turn += 1
    }
    return result
}
