// libFuzzer harness for flag-set documents: decode → compile → evaluate → encode. Run with `Fuzz/run flagset`.
//
// FlagCore is built with -enable-testing and imported @testable (see Fuzz/run). Properties checked on every input;
// a violation traps so that libFuzzer saves the input as a crash:
// - decoding either throws a JSONError or yields a set; compiling and evaluating never crash, whatever the set;
// - evaluation of a flag that is not ready serves the caller's default with an error code; a ready flag serves a
//   value of its type, for fixed contexts and for contexts derived from the set and the input bytes (attribute
//   values taken from the set's own conditions, unit ids from its overrides and cohorts, instants next to its
//   dates), so that rules, cohorts, overrides and schedules actually match;
// - evaluation is deterministic (two evaluations of the same input agree);
// - a set that validates with no problems survives its canonical encoding: the bytes decode to an equal set with
//   no problems, which encodes to the same bytes; the pretty form decodes to the same set;
// - the same bytes read as a patch either fail with a WireFormatError or give a patch that survives its encoding;
//   a valid set's items sent as a patch read back as the set's flags and cohorts.

import Foundation

@testable import FlagCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    checkPatch(bytes)
    let set: FlagSet
    do {
        set = try FlagSet.decode(bytes)
    } catch is JSONError {
        return 0
    } catch {
        fail("decode threw a non-JSONError: \(error)")
    }
    let compiled = CompiledFlagSet(set)
    evaluateSome(compiled, contexts: contexts, instants: instants)
    let derived = derivedContexts(set, seed: bytes)
    evaluateSome(compiled, contexts: derived.contexts, instants: [instants[0]] + derived.instants)
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
        let patch = SetPatch(
            version: set.version + 1, base: set.version, flags: set.flags.mapValues { $0.encoded() },
            cohorts: set.cohorts.mapValues { $0.encoded() })
        let changes = try SetPatch.decode(patch.encoded()).changes()
        check(changes.flags == set.flags && changes.cohorts == set.cohorts, "the set's items do not survive a patch")
        check(changes.readProblems.isEmpty, "the set's items read from a patch with problems: \(changes.readProblems)")
    } catch {
        fail("the canonical encoding does not read back: \(error)")
    }
    return 0
}

/// The input as a patch: refused with the member named, or a patch whose encoding reads back the same, and whose
/// items read without crashing.
private func checkPatch(_ bytes: [UInt8]) {
    let patch: SetPatch
    do {
        patch = try SetPatch.decode(bytes)
    } catch {
        let whole = error.message.hasPrefix("is not valid JSON") || error.message.hasPrefix("must be a JSON object")
        check(error.field != nil || whole, "a patch error names no member: \(error)")
        return
    }
    let encoded = patch.encoded()
    // `check` fails on a thrown error too: an encoding that does not read back.
    check(try SetPatch.decode(encoded) == patch, "a patch does not survive its encoding: \(text(encoded))")
    let changes = patch.changes()
    check(Set(changes.flags.keys).union(changes.unreadableFlags.keys) == Set(patch.flags.keys), "a patch lost a flag")
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
private func evaluateSome(_ compiled: CompiledFlagSet, contexts: [EvaluationContext], instants: [Date]) {
    let set = compiled.flagSet
    let keys = (Array(set.flags.keys) + Array(set.unreadableFlags.keys)).sorted(by: utf8Less).prefix(4)
    for key in keys + ["no-such-flag"] {
        let type = set.flags[key]?.type ?? .json
        // Each flag compiles to a program of its own, holding just its record.
        let ready = compiled.flags[key]?.program.flags[0].state == .ready
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

/// Two contexts and two instants that the set's own targeting is likely to match, chosen by a hash of the input:
/// each condition's attribute gets one of that condition's operands (exact, extended or empty), the unit id is one
/// the set names, and the instants lie a second around dates the set holds.
///
/// Values are cut to 16 characters: on long values a backtracking `matches` pattern runs up to its step limit
/// (about a million steps, 10–15 ms; see `Pattern`) on every input, which would slow the fuzzer a hundredfold. The
/// limit has its own tests (`PatternTests`).
private func derivedContexts(_ set: FlagSet, seed: [UInt8]) -> (contexts: [EvaluationContext], instants: [Date]) {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in seed { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    var conditions: [Condition] = []
    var units = ["u-1"]
    var dates: [Date] = []
    for cohort in set.cohorts.values {
        conditions += cohort.groups.joined()
        units += cohort.include + cohort.exclude
    }
    for flag in set.flags.values {
        for rule in flag.rules { if case .conditions(let list) = rule.target { conditions += list } }
        for override in flag.overrides {
            if case .unit(let unit) = override.target { units.append(unit) }
            dates += override.until.map { [$0] } ?? []
        }
        dates += flag.expiresAt.map { [$0] } ?? []
        if case .schedule(let steps) = flag.rollout?.stage { dates += steps.map(\.at) }
    }
    for condition in conditions where condition.attribute == "unitID" { units += condition.values }
    func next(_ bound: Int) -> Int {
        hash = hash &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return bound <= 1 ? 0 : Int((hash >> 33) % UInt64(bound))
    }
    var contexts: [EvaluationContext] = []
    for _ in 0..<2 {
        var attributes: [String: String] = [:]
        for condition in conditions where condition.attribute != "unitID" {
            var value = condition.values.isEmpty ? "" : condition.values[next(condition.values.count)]
            switch next(4) {
            case 0: value += "1"
            case 1: value = ""
            default: break
            }
            attributes[condition.attribute] = String(value.prefix(16))
        }
        contexts.append(EvaluationContext(unitID: String(units[next(units.count)].prefix(16)), attributes: attributes))
    }
    let derivedInstants = (0..<2).map { _ in
        dates.isEmpty ? instants[0] : dates[next(dates.count)].addingTimeInterval(Double(next(3) - 1))
    }
    return (contexts, derivedInstants)
}
