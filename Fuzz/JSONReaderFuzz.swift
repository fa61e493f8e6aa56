// libFuzzer harness for JSONReader and JSONWriter. Build and run with `Fuzz/run json` (see Fuzz/README.md).
//
// FlagCore is built with -enable-testing (see Fuzz/run), so internal API is reachable through @testable.
// Properties checked on every input; a violation traps so that libFuzzer saves the input as a crash:
// - no crash, no sanitizer report, whatever the bytes;
// - a rejection carries a position inside the document;
// - parse and the validating skipper accept exactly the same documents; readRawValue returns the value's bytes;
// - an accepted document's canonical bytes parse to an identical value and are a fixed point;
//   the pretty form parses to the same value too.

@testable import FlagCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let parsed: JSONValue
    do {
        parsed = try JSONReader.parse(bytes)
    } catch let error as JSONError {
        check((0...bytes.count).contains(error.offset), "error offset \(error.offset) outside 0...\(bytes.count)")
        check(error.line >= 1 && error.column >= 1, "error position \(error.line):\(error.column)")
        check(!skips(bytes), "skipValue accepts what parse rejects: \(error)")
        return 0
    } catch {
        fail("parse threw a non-JSONError: \(error)")
    }
    check(skips(bytes), "parse accepts what skipValue rejects")
    do {
        let raw = try JSONReader.read(bytes) { reader in try reader.readRawValue() }
        let rawValue = try JSONReader.parse(raw)
        check(identical(rawValue, parsed), "readRawValue bytes parse to another value")

        let canonical = parsed.canonicalBytes
        let reparsed = try JSONReader.parse(canonical)
        check(identical(reparsed, parsed), "canonical bytes parse to another value: \(text(canonical))")
        check(reparsed.canonicalBytes == canonical, "canonical bytes are not stable: \(text(canonical))")

        var pretty = JSONWriter(pretty: true)
        pretty.value(parsed)
        let prettyValue = try JSONReader.parse(pretty.bytes)
        check(identical(prettyValue, parsed), "pretty bytes parse to another value")
    } catch {
        fail("writer output does not read back: \(error)")
    }
    return 0
}

private func skips(_ bytes: [UInt8]) -> Bool {
    do {
        try JSONReader.read(bytes) { reader in try reader.skipValue() }
        return true
    } catch {
        return false
    }
}

/// Equality without Swift's leniencies: strings scalar by scalar, doubles bit for bit, ints never equal doubles.
private func identical(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): return true
    case (.bool(let a), .bool(let b)): return a == b
    case (.int(let a), .int(let b)): return a == b
    case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
    case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8)
    case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { identical($0, $1) }
    case (.object(let a), .object(let b)):
        guard a.count == b.count else { return false }
        let aKeys = a.keys.sorted(by: utf8Less)
        let bKeys = b.keys.sorted(by: utf8Less)
        guard aKeys.elementsEqual(bKeys, by: { $0.utf8.elementsEqual($1.utf8) }) else { return false }
        return a.allSatisfy { key, value in b[key].map { identical(value, $0) } ?? false }
    default: return false
    }
}
