// libFuzzer harness for the client's local overrides (SPEC §6.4): the env-file parser, the `FLAG_*` environment
// and the typing of an override's text. Run with `Fuzz/run overrides`.
//
// The input is read as UTF-8 text. Properties checked on every input; a violation traps:
// - `parseFile` agrees with a plain reference reader of the documented format, written over Unicode scalars (not
//   grapheme clusters): the same overrides from the same lines, a problem for every other non-blank,
//   non-comment line, with its line number;
// - every key is a flag key; every value is trimmed; writing the overrides back as `key=value` lines reads the same;
// - the environment: every `FLAG_*` variable is either an override or a problem, and the override keys are flag keys;
// - typing: a text read as bool, int, double, string or json is a value of that type (a JSON one re-reads the
//   same from its canonical bytes); int and double agree with Swift's own parsing; a string always reads.

import FlagCore

@testable import FlagClient

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let (overrides, problems) = OverridesParser.parseFile(text, name: "f.env")
    let expected = referenceFile(text)
    check(
        overrides == expected.overrides,
        "parseFile reads \(overrides), the reference \(expected.overrides): \(text.debugDescription)")
    check(
        problems.map(\.source) == expected.problemLines.map { "f.env:\($0)" },
        "problems on \(problems.map(\.source)), the reference on lines \(expected.problemLines): \(text.debugDescription)"
    )

    var written = ""
    for (key, override) in overrides.sorted(by: { $0.key < $1.key }) {
        check(OverridesParser.isFlagKey(key), "'\(key)' is not a flag key")
        let value = override.text
        check(value.first.map { $0 != " " && $0 != "\t" } ?? true, "value \(value.debugDescription) is not trimmed")
        check(value.last.map { $0 != " " && $0 != "\t" && $0 != "\r" } ?? true, "value \(value.debugDescription)")
        written += "\(key)=\(value)\n"
        checkTyping(value)
    }
    let reread = OverridesParser.parseFile(written, name: "f.env")
    check(
        reread.problems.isEmpty && reread.overrides.mapValues(\.text) == overrides.mapValues(\.text),
        "the overrides written back read as \(reread): \(written.debugDescription)")

    // The same lines as environment variables, NAME=VALUE.
    var environment: [String: String] = [:]
    for line in text.unicodeScalars.split(separator: "\n") {
        guard let equals = line.firstIndex(of: "=") else { continue }
        environment[string(line[..<equals])] =
            string(line[line.index(after: equals)...])
    }
    let fromEnvironment = OverridesParser.parseEnvironment(environment)
    let flagNames = environment.keys.filter { $0.hasPrefix("FLAG_") }
    let keys = flagNames.compactMap { OverridesParser.flagKey(forVariable: $0) }
    check(fromEnvironment.problems.count + keys.count == flagNames.count, "a FLAG_ variable neither read nor reported")
    check(Set(keys) == Set(fromEnvironment.overrides.keys), "environment keys \(fromEnvironment.overrides.keys)")
    for key in keys { check(OverridesParser.isFlagKey(key), "'\(key)' from the environment is not a flag key") }
    if text.utf8.count <= 256 { checkTyping(text) }
    return 0
}

/// The typing rules on one text.
private func checkTyping(_ text: String) {
    for type in [FlagType.bool, .int, .double, .string, .json, .unknown("x")] {
        switch OverridesParser.value(text, as: type) {
        case .success(let value):
            check(value.conforms(to: type), "'\(text)' read as \(type.name) gives \(value)")
            if case .json = type {
                check(try JSONReader.parse(value.canonicalBytes) == value, "'\(text)' does not re-read as JSON")
            }
        case .failure(let error):
            check(!error.message.isEmpty, "a typing error without a message")
            check(type != .string, "'\(text)' does not read as a string")
        }
    }
    let int = OverridesParser.value(text, as: .int)
    check((try? int.get()) == Int64(text).map(JSONValue.int), "'\(text)' as int: \(int)")
    if case .success(.double(let double)) = OverridesParser.value(text, as: .double) {
        check(double.isFinite && Double(text) == double, "'\(text)' as double gives \(double)")
    }
}

/// The documented env-file format, read scalar by scalar: lines end with LF (a CR before it, and any trailing
/// CRs, spaces and tabs, are not part of the line); blank and `#` lines are skipped; `export ` may prefix;
/// `NAME=VALUE` with both sides trimmed; NAME is a flag key or `FLAG_` followed by one in capitals with `_` for `-`.
private func referenceFile(_ text: String) -> (overrides: [String: RawOverride], problemLines: [Int]) {
    var overrides: [String: RawOverride] = [:]
    var problemLines: [Int] = []
    let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
    for (index, rawLine) in lines.enumerated() {
        var line = trimmed(rawLine)
        if line.isEmpty || line.first == "#" { continue }
        if line.starts(with: "export ".unicodeScalars) { line = trimmed(line.dropFirst(7)) }
        guard let equals = line.firstIndex(of: "=") else {
            problemLines.append(index + 1)
            continue
        }
        let name = string(trimmed(line[..<equals]))
        var key = name
        if name.hasPrefix("FLAG_") {
            let body = name.unicodeScalars.dropFirst(5).map { scalar -> Unicode.Scalar in
                if scalar == "_" { return "-" }
                return ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32)! : scalar
            }
            key = String(String.UnicodeScalarView(body))
        }
        guard isKey(key) else {
            problemLines.append(index + 1)
            continue
        }
        let value = string(trimmed(line[line.index(after: equals)...]))
        overrides[key] = RawOverride(text: value, source: "f.env:\(index + 1)")
    }
    return (overrides, problemLines)
}

private func trimmed(_ scalars: Substring.UnicodeScalarView) -> Substring.UnicodeScalarView {
    var result = scalars
    while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
    while let last = result.last, last == " " || last == "\t" || last == "\r" { result.removeLast() }
    return result
}

private func string(_ scalars: Substring.UnicodeScalarView) -> String { String(Substring(scalars)) }

private func isKey(_ key: String) -> Bool {
    let scalars = Array(key.unicodeScalars)
    func lowerAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
    }
    guard let first = scalars.first, scalars.count <= 128, lowerAlphanumeric(first) else { return false }
    return scalars.dropFirst().allSatisfy { lowerAlphanumeric($0) || $0 == "." || $0 == "_" || $0 == "-" }
}
