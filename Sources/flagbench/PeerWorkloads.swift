import FlagClient
import FlagCore
import Foundation

// The Flagstaff side of `Benchmarks/run` (BENCHMARKS.md, "Suite"): the same flag the peers evaluate, and the
// client's launch. Lines are `name value unit`, one per run, so that the suite takes the median itself.
//
//   flagbench suite-eval [--units N] [--runs R] [--results FILE]
//   flagbench suite-client-start [--runs R]

/// The flag every SDK in the suite evaluates: `country == "NL"` → true, else a 25 % rollout → true, else false.
let suiteFlagKey = "peer-flag"

/// Countries in unit order; a fifth of the units are in NL. `Benchmarks/peers.py` builds the same units.
let suiteCountries = ["US", "DE", "NL", "FR", "GB"]

/// Runs `suite-eval` or `suite-client-start`.
func runSuiteCommand(_ command: String) {
    switch command {
    case "suite-eval":
        benchmarkSuiteEvaluation(
            units: suiteOption("units") ?? (quick ? 2_000 : 100_000), runs: suiteOption("runs") ?? 1,
            results: suiteText("results"))
    default:
        benchmarkSuiteClientStart(runs: suiteOption("runs") ?? (quick ? 3 : 9))
    }
}

/// The value after `--name`, when it is a positive whole number; exits 1 naming the option when it is not.
private func suiteOption(_ name: String) -> Int? {
    guard let text = suiteText(name) else { return nil }
    guard let value = Int(text), value > 0 else {
        suiteFail("--\(name) needs a positive whole number, not \"\(text)\"")
    }
    return value
}

private func suiteText(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: "--\(name)") else { return nil }
    guard index + 1 < arguments.count else { suiteFail("--\(name) needs a value") }
    return arguments[index + 1]
}

private func suiteFail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("flagbench: \(message)\n".utf8))
    exit(1)
}

/// The suite's flag set, built through the public model as a user's `flagctl` commands would build it.
func suiteFlagSet() -> FlagSet {
    var flag = Flag(key: suiteFlagKey, type: .bool, kind: .release, defaultValue: .bool(false), killValue: .bool(false))
    flag.rules = [
        Rule(
            name: "nl", target: .conditions([Condition(attribute: "country", op: .eq, values: ["NL"])]),
            serve: .value(.bool(true)))
    ]
    flag.rollout = Rollout(value: .bool(true), stage: .percent(25))
    return FlagSet(name: "suite", version: 1, flags: [suiteFlagKey: flag])
}

/// A server address that answers nothing: refresh is off in every suite client (port 9 is discard), except with
/// `--counting` (`configureRefresh`).
private func suiteServer() -> URL {
    guard let url = URL(string: "http://127.0.0.1:9") else { suiteFail("the placeholder server URL did not parse") }
    return url
}

/// Seconds of one run of `body`.
private func timed(_ body: () -> Void) -> Double {
    let elapsed = clock.measure(body)
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
}

/// Core evaluation, session first read and frozen read of the suite's flag over `units` distinct units.
///
/// Writes one byte per unit (`1` on, `0` off, in unit order) to `results`, for the per-unit check against
/// an independent MurmurHash3, and fails when a session's first read disagrees with the core for any unit.
func benchmarkSuiteEvaluation(units: Int, runs: Int, results: String?) {
    let set = suiteFlagSet()
    let compiled = CompiledFlagSet(set)
    guard compiled.problems.isEmpty else { suiteFail("the suite's flag set has problems: \(compiled.problems)") }
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    let contexts = (0..<units).map { index in
        EvaluationContext(
            unitID: "unit-\(index)", attributes: ["country": suiteCountries[index % suiteCountries.count]])
    }
    var core = [Bool](repeating: false, count: units)
    var configuration = FlagClient.Configuration(
        server: suiteServer(), set: "suite", sdkKey: "suite", cacheDirectory: nil)
    configureRefresh(&configuration)
    configuration.overridesEnabled = false
    configuration.bootstrap = set.encoded()
    let client: FlagClient
    do {
        client = try FlagClient(configuration: configuration)
    } catch {
        suiteFail("the client did not start from the bootstrap document: \(error)")
    }
    defer { client.shutdown() }
    let key = FlagKey(suiteFlagKey, default: false)
    var toggled = false
    for _ in 0..<runs {
        // The value alone, as the peers' `is_on`, `is_enabled` and `variation` return it.
        let coreSeconds = timed {
            // Indexing a buffer borrows each context; `for context in contexts` would copy (retain) it first.
            contexts.withUnsafeBufferPointer { buffer in
                for index in buffer.indices {
                    core[index] = compiled.value(suiteFlagKey, default: false, context: buffer[index], at: now)
                }
            }
        }
        report("suite.flagstaff.core", coreSeconds / Double(units) * 1e9, "ns/eval")
        var detailed = [Bool](repeating: false, count: units)
        let detailSeconds = timed {
            contexts.withUnsafeBufferPointer { buffer in
                for index in buffer.indices {
                    detailed[index] =
                        compiled.evaluate(suiteFlagKey, default: false, context: buffer[index], at: now).value
                }
            }
        }
        report("suite.flagstaff.core-detail", detailSeconds / Double(units) * 1e9, "ns/eval")
        guard detailed == core else { suiteFail("CompiledFlagSet.value and .evaluate disagree") }
        // Fresh sessions each run: only a session's first read evaluates.
        let sessions = contexts.map { client.session(unitID: $0.unitID, attributes: $0.attributes) }
        var first = [Bool](repeating: false, count: units)
        let firstSeconds = timed {
            sessions.withUnsafeBufferPointer { buffer in
                for index in buffer.indices { first[index] = buffer[index].value(key) }
            }
        }
        report("suite.flagstaff.session-first-read", firstSeconds / Double(units) * 1e9, "ns/eval")
        guard first == core else {
            let unit = first.indices.first { first[$0] != core[$0] } ?? 0
            suiteFail("a session's first read and the core disagree for unit-\(unit)")
        }
        let session = sessions[units / 2]
        let reads = quick ? 100_000 : 10_000_000
        let frozenSeconds = timed {
            for _ in 0..<reads where session.value(key) { toggled.toggle() }
        }
        report("suite.flagstaff.session-frozen-read", frozenSeconds / Double(reads) * 1e9, "ns/eval")
    }
    if toggled { print("(ignore: \(toggled))") }
    let outside = (0..<units).filter { suiteCountries[$0 % suiteCountries.count] != "NL" }
    guard (0..<units).allSatisfy({ suiteCountries[$0 % suiteCountries.count] != "NL" || core[$0] }) else {
        suiteFail("a unit in NL was not served the rule's value")
    }
    report(
        "suite.flagstaff.rollout-share", Double(outside.filter { core[$0] }.count) / Double(outside.count) * 100, "%")
    if let results {
        let bytes = Data(core.map { $0 ? UInt8(ascii: "1") : UInt8(ascii: "0") })
        guard FileManager.default.createFile(atPath: results, contents: bytes) else {
            suiteFail("could not write the per-unit results to \(results)")
        }
    }
}

/// FlagClient launch from a cached 1,000-flag set to the first value, once per run (as `flagbench client`
/// measures it, but each run printed so that the suite can take the median).
func benchmarkSuiteClientStart(runs: Int) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flagbench-\(UUID().uuidString)")
    defer {
        do {
            try FileManager.default.removeItem(at: directory)
        } catch {
            FileHandle.standardError.write(Data("flagbench: could not remove \(directory.path): \(error)\n".utf8))
        }
    }
    var configuration = FlagClient.Configuration(
        server: suiteServer(), set: "bench", sdkKey: "bench", cacheDirectory: directory)
    configuration.refresh = .off
    configuration.overridesEnabled = false
    do {
        // Seeds the cache, as a first launch with a bootstrap document would.
        var seeding = configuration
        seeding.bootstrap = benchmarkDocument(flags: 1_000)
        try FlagClient(configuration: seeding).shutdown()
    } catch {
        suiteFail("could not seed the cache: \(error)")
    }
    let key = FlagKey("flag-500", default: false)
    var values = 0
    // One launch more than reported: the first touches Foundation and the code pages for the first time in this
    // process. Between launches a pause lets the previous client's background compile of the whole cached set
    // finish, as it would between two launches of an app.
    for run in 0...runs {
        var started: FlagClient?
        let seconds = timed {
            do {
                let client = try FlagClient(configuration: configuration)
                if client.session(unitID: "user-1", attributes: ["country": "DE"]).value(key) { values += 1 }
                started = client
            } catch {
                suiteFail("the client did not start from its cache: \(error)")
            }
        }
        // Shutting down (closing the cache) is not part of a launch.
        started?.shutdown()
        started = nil
        Thread.sleep(forTimeInterval: 0.2)
        if run == 0 { continue }
        report("suite.client-start.1000flags", seconds * 1e3, "ms")
    }
    if values > runs + 1 { print("(ignore: \(values))") }
}
