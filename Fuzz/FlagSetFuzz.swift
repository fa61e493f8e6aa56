// libFuzzer harness for flag-set documents: decode → compile → evaluate → encode. Run with `Fuzz/run flagset`.
//
// Compiled into one module with Sources/FlagCore/*.swift (see Fuzz/README.md). Properties checked on every input;
// a violation traps so that libFuzzer saves the input as a crash:
// - decoding either throws a JSONError or yields a set; compiling and evaluating never crash, whatever the set;
// - evaluation of a flag that is not ready serves the caller's default with an error code;
// - evaluation is deterministic (two evaluations of the same input agree);
// - a set that validates with no problems survives its canonical encoding: the bytes decode to an equal set with
//   no problems, which encodes to the same bytes; the pretty form decodes to the same set.

import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let set: FlagSet
    do {
        set = try FlagSet.decode(bytes)
    } catch is JSONError {
        return 0
    } catch {
        fail("decode threw a non-JSONError: \(error)")
    }
    let compiled = CompiledFlagSet(set)
    evaluateSome(compiled)
    let canonical = set.encoded()
    let pretty = set.encoded(pretty: true)
    guard compiled.problems.isEmpty else { return 0 }

    do {
        let again = try FlagSet.decode(canonical)
        check(again == set, "the canonical encoding decodes to another set: \(text(canonical))")
        check(again.readProblems.isEmpty, "the canonical encoding reads with problems: \(again.readProblems)")
        check(CompiledFlagSet(again).problems.isEmpty, "the canonical encoding no longer validates")
        check(again.encoded() == canonical, "the canonical encoding is not stable: \(text(canonical))")
        check(try FlagSet.decode(pretty) == set, "the pretty encoding decodes to another set")
        for (key, flag) in set.flags {
            let (single, problems) = try Flag.decode(flag.encoded(), key: key)
            check(single == flag && problems.isEmpty, "flag '\(key)' does not survive Flag.decode(encoded())")
        }
        for (name, cohort) in set.cohorts {
            let (single, problems) = try Cohort.decode(cohort.encoded())
            check(single == cohort && problems.isEmpty, "cohort '\(name)' does not survive Cohort.decode(encoded())")
        }
    } catch {
        fail("the canonical encoding does not read back: \(error)")
    }
    return 0
}

/// Fixed instants: the demo set's schedule, and the ends of the range a timestamp can name.
private let instants: [Date] = [
    Date(timeIntervalSince1970: 1_795_942_800),  // 2026-11-29T09:00:00Z
    Date(timeIntervalSince1970: -62_135_596_800),  // 0001-01-01T00:00:00Z
    Date(timeIntervalSince1970: 253_402_300_799),  // 9999-12-31T23:59:59Z
]

private let contexts: [EvaluationContext] = [
    EvaluationContext(unitID: "u-1"),
    EvaluationContext(unitID: "", attributes: ["country": "DE", "appVersion": "5.2.0", "platform": "ios"]),
    EvaluationContext(
        unitID: "qa-1",
        attributes: [
            "email": "a@flagstaff.dev", "screenWidth": "1024", "appVersion": "5.10.0-beta.1+x", "unitID": "spoof",
            "at": "2026-11-29T10:00:00Z", "country": "AT", "n": "-1e308",
        ]),
    EvaluationContext(unitID: "\u{FC}-\u{1F600}", attributes: ["country": "", "appVersion": "5", "a": "\u{0}"]),
]

/// A caller's default for each type.
private func fallback(for type: FlagType) -> JSONValue {
    switch type {
    case .bool: .bool(false)
    case .int: .int(-1)
    case .double: .double(0.5)
    case .string: .string("fallback")
    case .json, .unknown: .null
    }
}

/// Evaluates up to four flags (and one missing key) for every context and instant, asking for the flag's own type.
private func evaluateSome(_ compiled: CompiledFlagSet) {
    let set = compiled.flagSet
    let keys = (Array(set.flags.keys) + Array(set.unreadableFlags.keys)).sorted(by: utf8Less).prefix(4)
    for key in keys + ["no-such-flag"] {
        let type = set.flags[key]?.type ?? .json
        let index = compiled.program.flagIndex(key, hash: ByteHash.hash(key))
        let ready = index >= 0 && compiled.program.flags[index].state == .ready
        let handle = FlagHandle(key)
        for context in contexts {
            for now in instants {
                let detail = compiled.evaluate(key, type: type, default: fallback(for: type), context: context, at: now)
                let repeated = compiled.evaluate(
                    key, type: type, default: fallback(for: type), context: context, at: now)
                let same = detail.value == repeated.value && detail.reason == repeated.reason
                check(same && detail.variant == repeated.variant, "evaluating '\(key)' twice gives two results")
                let byHandle = compiled.evaluate(
                    handle, type: type, default: fallback(for: type), context: context, at: now)
                check(
                    byHandle.value == detail.value && byHandle.reason == detail.reason
                        && byHandle.variant == detail.variant && byHandle.errorCode == detail.errorCode,
                    "'\(key)' evaluates differently by handle and by key")
                if ready {
                    check(detail.errorCode == nil, "'\(key)' is ready but failed: \(detail.errorMessage ?? "")")
                    check(detail.value.conforms(to: type), "'\(key)' served \(detail.value), not a \(type.name)")
                } else {
                    check(detail.value == fallback(for: type), "'\(key)' is not ready but served \(detail.value)")
                    check(detail.errorCode != nil, "'\(key)' is not ready but has no error code")
                }
                let typed: EvaluationDetail<Bool> = compiled.evaluate(key, default: true, context: context, at: now)
                if !ready || type != FlagType.bool { check(typed.value, "'\(key)' served false to a Bool caller") }
            }
            _ = compiled.explain(key, context: context, at: instants[0])
        }
    }
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes.prefix(300), as: UTF8.self) }

private func check(_ condition: @autoclosure () throws -> Bool, _ message: @autoclosure () -> String) {
    do {
        if try !condition() { fail(message()) }
    } catch {
        fail("\(message()) (\(error))")
    }
}

/// A property violation: trap, so that libFuzzer records the input as a crash.
private func fail(_ message: String) -> Never {
    fatalError("FlagSetFuzz: \(message)")
}
