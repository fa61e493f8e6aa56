import FlagCore
import Foundation

/// A flag with five rules (a cohort and attribute conditions) and a flag-level rollout, as the issue describes.
func benchmarkFlag(key: String, start: Date) -> Flag {
    var flag = Flag(key: key, type: .bool, kind: .release, defaultValue: .bool(false), killValue: .bool(false))
    flag.rules = [
        Rule(name: "beta", target: .cohort("beta"), serve: .value(.bool(true))),
        Rule(
            name: "staff",
            target: .conditions([Condition(attribute: "email", op: .endsWith, values: ["@example.com"])]),
            serve: .value(.bool(true))),
        Rule(
            name: "old-app",
            target: .conditions([Condition(attribute: "appVersion", op: .semverLt, values: ["4.0.0"])]),
            serve: .value(.bool(false))),
        Rule(
            name: "de-half",
            target: .conditions([
                Condition(attribute: "country", op: .eq, values: ["DE"]),
                Condition(attribute: "plan", op: .in, values: ["pro", "team"]),
            ]),
            serve: .rollout(Rollout(value: .bool(true), stage: .percent(50)))),
        Rule(
            name: "big-accounts",
            target: .conditions([Condition(attribute: "seats", op: .gte, values: ["500"])]),
            serve: .value(.bool(true))),
    ]
    flag.rollout = Rollout.preset("apple", start: start, value: .bool(true))
    return flag
}

/// A flag with one attribute rule (`country eq DE`) and a flag-level 25 % rollout.
func ruleAndRolloutFlag(key: String) -> Flag {
    var flag = Flag(key: key, type: .bool, defaultValue: .bool(false))
    flag.rules = [
        Rule(
            name: "de", target: .conditions([Condition(attribute: "country", op: .eq, values: ["DE"])]),
            serve: .value(.bool(true)))
    ]
    flag.rollout = Rollout(value: .bool(true), stage: .percent(25))
    return flag
}

func benchmarkCohorts() -> [String: Cohort] {
    [
        "beta": Cohort(
            include: (0..<50).map { "beta-\($0)" },
            groups: [[Condition(attribute: "appVersion", op: .semverGte, values: ["9.0.0"])]])
    ]
}

func benchmarkEvaluation() {
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    let now = start.addingTimeInterval(3.5 * 86_400)
    let set = FlagSet(
        name: "bench", version: 1, cohorts: benchmarkCohorts(), flags: ["f": benchmarkFlag(key: "f", start: start)])
    let compiled = CompiledFlagSet(set)
    guard compiled.problems.isEmpty else {
        print("benchmark set has problems: \(compiled.problems)")
        exit(1)
    }
    let countries = ["US", "DE", "FR", "GB", "AT"]
    let unitCount = quick ? 10_000 : 100_000
    let contexts = (0..<unitCount).map { index in
        EvaluationContext(
            unitID: "user-\(index)",
            attributes: [
                "country": countries[index % countries.count], "appVersion": "5.\(index % 7).0",
                "email": "user\(index)@mail.test", "plan": index % 3 == 0 ? "pro" : "free",
            ])
    }
    var inside = 0
    /// Nanoseconds per evaluation of `flag` in `compiled` over every context, the best of several runs.
    func measure(_ compiled: CompiledFlagSet, _ flag: String, byKey: Bool = false) -> Double {
        let handle = FlagHandle(flag)
        let seconds = best(runs: quick ? 3 : 7) {
            inside = 0
            // Indexing a buffer borrows each context; `for context in contexts` would copy (retain) it first.
            contexts.withUnsafeBufferPointer { buffer in
                if byKey {
                    for index in buffer.indices
                    where compiled.evaluate(flag, default: false, context: buffer[index], at: now).value {
                        inside += 1
                    }
                } else {
                    for index in buffer.indices
                    where compiled.evaluate(handle, default: false, context: buffer[index], at: now).value {
                        inside += 1
                    }
                }
            }
        }
        return seconds / Double(unitCount) * 1e9
    }
    // Handles are resolved once, as a client does per flag key; `.by-key` hashes the key string on every call.
    report("eval.5rules+rollout", measure(compiled, "f"), "ns/eval")
    report("eval.share-true", Double(inside) / Double(unitCount) * 100, "%")
    report("eval.5rules+rollout.by-key", measure(compiled, "f", byKey: true), "ns/eval")

    // One attribute rule and a 25 % rollout: the common shape of a release flag.
    let ruleAndRollout = CompiledFlagSet(
        FlagSet(name: "bench", version: 1, flags: ["simple": ruleAndRolloutFlag(key: "simple")]))
    report("eval.rule+rollout25", measure(ruleAndRollout, "simple"), "ns/eval")
    report("eval.rule+rollout25.share-true", Double(inside) / Double(unitCount) * 100, "%")

    // The fixed cost of an evaluation: a flag with no targeting at all.
    let plain = CompiledFlagSet(
        FlagSet(name: "bench", version: 1, flags: ["plain": Flag(key: "plain", type: .bool, defaultValue: .bool(true))])
    )
    report("eval.no-targeting", measure(plain, "plain"), "ns/eval")
}

/// A document of `count` flags, each with five rules and a seven-step schedule: about 1 KB a flag.
func benchmarkDocument(flags count: Int) -> [UInt8] {
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    var flags: [String: Flag] = [:]
    for index in 0..<count {
        var flag = benchmarkFlag(key: "flag-\(index)", start: start)
        flag.description = "Benchmark flag number \(index), with five rules and a phased rollout"
        flag.owner = "team-\(index % 12)"
        flag.expiresAt = start.addingTimeInterval(42 * 86_400)
        flag.expiredValue = .bool(true)
        flags[flag.key] = flag
    }
    return FlagSet(name: "bench", version: 1, updatedAt: start, cohorts: benchmarkCohorts(), flags: flags).encoded()
}

func benchmarkDecoding() {
    let bytes = benchmarkDocument(flags: 1_000)
    report("doc.size", Double(bytes.count) / 1_048_576, "MiB")
    let runs = quick ? 3 : 9
    var problems = 0
    let decodeAndValidate = best(runs: runs) {
        do {
            problems = CompiledFlagSet(try FlagSet.decode(bytes)).problems.count
        } catch {
            problems = -1
        }
    }
    guard problems == 0 else {
        print("benchmark document did not validate (\(problems))")
        exit(1)
    }
    report("decode+validate.1000flags", decodeAndValidate * 1e3, "ms")
    var set = FlagSet(name: "")
    let decodeOnly = best(runs: runs) { set = (try? FlagSet.decode(bytes)) ?? set }
    report("decode.1000flags", decodeOnly * 1e3, "ms")
    var encoded: [UInt8] = []
    let encode = best(runs: runs) { encoded = set.encoded() }
    report("encode.1000flags", encode * 1e3, "ms")
    let items = set.flags.mapValues { $0.encoded() }
    let assemble = best(runs: runs) {
        encoded = FlagSet.assemble(name: set.name, version: 2, updatedAt: set.updatedAt, cohorts: [:], flags: items)
    }
    report("assemble.1000flags", assemble * 1e3, "ms")
    guard encoded.count > bytes.count / 2 else {
        print("assembled document is unexpectedly small")
        exit(1)
    }
    let data = Data(bytes)
    let foundation = best(runs: quick ? 1 : 3) { _ = try? JSONSerialization.jsonObject(with: data) }
    report("peer.foundation-jsonserialization.1000flags", foundation * 1e3, "ms")
    report("ratio.decode+validate-vs-jsonserialization", foundation / decodeAndValidate, "x")
}
