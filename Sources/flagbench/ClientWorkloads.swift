import FlagClient
import FlagCore
import Foundation

/// Sets how `configuration`'s client stays fresh. By default refresh is off, so nothing is counted. With `--counting`
/// the client polls an address that nothing answers, and so counts its evaluations for telemetry reports as an app's
/// client does (the reports have no instance id to go under and are never sent): the cost of counting on the reads.
func configureRefresh(_ configuration: inout FlagClient.Configuration) {
    guard arguments.contains("--counting") else {
        configuration.refresh = .off
        return
    }
    configuration.refresh = .poll
    configuration.pollInterval = 3_600
    configuration.telemetry = .every(seconds: 3_600)
}

/// A benchmark client's configuration: set `bench` at an address that nothing answers, without overrides (they are
/// not what is measured), its cache in `cacheDirectory` (`nil`: none).
func benchConfiguration(cacheDirectory: URL?) -> FlagClient.Configuration {
    var configuration = FlagClient.Configuration(
        server: URL(string: "http://127.0.0.1:1")!, set: "bench", sdkKey: "bench", cacheDirectory: cacheDirectory)
    configuration.overridesEnabled = false
    return configuration
}

/// A client without a cache that serves `set` from its bootstrap document; the process exits when none can be made.
func bootstrappedClient(_ set: FlagSet) -> FlagClient {
    var configuration = benchConfiguration(cacheDirectory: nil)
    configureRefresh(&configuration)
    configuration.bootstrap = set.encoded()
    guard let client = try? FlagClient(configuration: configuration) else { exit(1) }
    return client
}

/// Seeds the cache of `configuration` as a first launch with the bootstrap document `bytes` (signed by `signature`,
/// when given) would; `then` adds to it after. The process exits when the cache cannot be seeded.
func seedCache(
    _ configuration: FlagClient.Configuration, with bytes: [UInt8], signature: String? = nil,
    then: () throws -> Void = {}
) {
    do {
        var seeding = configuration
        seeding.bootstrap = bytes
        seeding.bootstrapSignature = signature
        try FlagClient(configuration: seeding).shutdown()
        try then()
    } catch {
        print("could not seed the cache: \(error)")
        exit(1)
    }
}

/// FlagClient figures: launch from a cached 1,000-flag set to the first value, session creation, first and frozen
/// reads, and the work of applying a one-flag patch.
func benchmarkClient() {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flagbench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    // The benchmark document plus one flag without targeting, to tell the client's cost from the evaluation's.
    guard var set = try? FlagSet.decode(benchmarkDocument(flags: 1_000)) else { exit(1) }
    set.flags["static"] = Flag(key: "static", type: .bool, defaultValue: .bool(true))
    let bytes = set.encoded()
    var configuration = benchConfiguration(cacheDirectory: directory)
    configureRefresh(&configuration)
    seedCache(configuration, with: bytes)
    if arguments.contains("--verbose") {
        configuration.logger = { message in print(message) }
    }
    let key = FlagKey("flag-500", default: false)
    var value = false
    var launched: [FlagClient] = []
    let launch = best(runs: quick ? 3 : 9) { value = launchToFirstValue(configuration, key, into: &launched) }
    // Shutting down (closing the cache) is not part of a launch.
    for client in launched { client.shutdown() }
    report("client.init-from-cache-to-first-value.1000flags", launch * 1e3, "ms")

    guard let client = try? FlagClient(configuration: configuration) else { exit(1) }
    // Let the background decode replace the lazy per-flag source with the whole compiled set. Under valgrind the
    // decode takes seconds: `--settle=SECONDS` waits longer.
    let settle = arguments.first { $0.hasPrefix("--settle=") }.flatMap { Double($0.dropFirst("--settle=".count)) }
    Thread.sleep(forTimeInterval: settle ?? 0.5)
    let count = quick ? 10_000 : 100_000
    let attributes = ["country": "DE", "appVersion": "5.3.0", "email": "a@mail.test", "plan": "pro"]
    var sessions: [FlagSession] = []
    sessions.reserveCapacity(count)
    let creation = best(runs: 1) {
        for index in 0..<count { sessions.append(client.session(unitID: "user-\(index)", attributes: attributes)) }
    }
    report("client.session-creation", creation / Double(count) * 1e9, "ns")
    let simple = FlagKey("static", default: false)
    let firstRead = best(runs: 1) {
        for session in sessions where session.value(simple) { value.toggle() }
    }
    report("client.first-read.static-flag", firstRead / Double(count) * 1e9, "ns")
    let compiledSet = CompiledFlagSet(set)
    let evaluation = best(runs: 3) {
        for session in sessions
        where compiledSet.evaluate(
            "static", default: false, context: session.context, at: Date(timeIntervalSince1970: 1_795_000_000)
        ).value { value.toggle() }
    }
    report("core.evaluate.static-flag", evaluation / Double(count) * 1e9, "ns")
    let missing = FlagKey("missing", default: false)
    let missingRead = best(runs: 1) {
        for session in sessions where session.value(missing) { value.toggle() }
    }
    report("client.first-read.missing-flag", missingRead / Double(count) * 1e9, "ns")
    let targeted = best(runs: 1) {
        for session in sessions where session.value(key) { value.toggle() }
    }
    report("client.first-read.5rules+rollout", targeted / Double(count) * 1e9, "ns")
    let session = sessions[0]
    let reads = quick ? 1_000_000 : 10_000_000
    let frozen = best(runs: 3) {
        for _ in 0..<reads where session.value(key) { value.toggle() }
    }
    report("client.frozen-read", frozen / Double(reads) * 1e9, "ns")
    if value { print("(ignore: \(value))") }
    client.shutdown()
    benchmarkPatchWork(bytes)
}

/// The work the client does to serve a one-flag patch on a 1,000-flag set (before the background recompile):
/// read the patch, apply it to the model, compile the changed flag with the cohorts. `flagbench client-patch`
/// runs it alone, for callgrind (`--toggle-collect='*applyOneFlagPatch*'`).
func benchmarkPatchWork(_ bytes: [UInt8]) {
    guard let model = try? FlagSet.decode(bytes), var flag = model.flags["flag-500"] else { exit(1) }
    flag.killed = true
    let patch = SetPatch(version: 2, base: 1, flags: [flag.key: flag.encoded()]).encoded()
    var problems = 0
    let seconds = best(runs: quick ? 20 : 100) { problems += applyOneFlagPatch(patch, to: model) }
    report("client.patch-one-flag-overlay.1000flags", seconds * 1e6, "µs")
    let full = best(runs: quick ? 3 : 9) { problems += CompiledFlagSet(model).problems.count }
    report("client.patch-background-recompile.1000flags", full * 1e3, "ms")
    if problems != 0 { print("patch benchmark found problems") }
}

/// Reads `bytes` as the client reads a patch and compiles its flags over the patched model's cohorts; returns
/// the problems found (a patch that cannot be read counts as one).
@inline(never)
func applyOneFlagPatch(_ bytes: [UInt8], to model: FlagSet) -> Int {
    guard let patch = try? SetPatch.decode(bytes) else { return 1 }
    let changes = patch.changes()
    var next = model
    next.version = patch.version
    for (key, changed) in changes.flags { next.flags[key] = changed }
    var overlay = FlagSet(name: next.name, version: next.version, schema: next.schema)
    overlay.cohorts = next.cohorts
    for key in changes.flags.keys { overlay.flags[key] = next.flags[key] }
    return CompiledFlagSet(overlay).problems.count + changes.unreadableFlags.count
}

/// Sessions and their first reads on a compiled set, without the cache: short enough to run under callgrind
/// (`valgrind --tool=callgrind --dump-before=… flagbench client-first-read --quick`).
func benchmarkFirstReads() {
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    var set = FlagSet(name: "bench", version: 1, cohorts: benchmarkCohorts())
    set.flags["static"] = Flag(key: "static", type: .bool, defaultValue: .bool(true))
    set.flags["f"] = benchmarkFlag(key: "f", start: start)
    set.flags["simple"] = ruleAndRolloutFlag(key: "simple")
    // One rule against one prerequisite: what a prerequisite costs over the condition it replaces.
    set.flags["one-rule"] = Flag(
        key: "one-rule", type: .bool, defaultValue: .bool(false),
        rules: [
            Rule(
                name: "dach", target: .conditions([Condition(attribute: "country", op: .in, values: ["DE", "AT"])]),
                serve: .value(.bool(true)))
        ])
    // Keys of up to 15 bytes, as both of these are, are compared inline; a longer one would cost its lookup more
    // than the prerequisite costs.
    set.flags["one-prereq"] = Flag(
        key: "one-prereq", type: .bool, defaultValue: .bool(false),
        prerequisites: [Prerequisite(flag: "static", values: [.bool(true)])])
    let client = bootstrappedClient(set)
    let key = FlagKey("static", default: false)
    var count = 0
    let rounds = quick ? 20 : 200
    let seconds = best(runs: 1) {
        for round in 0..<rounds {
            for index in 0..<1_000 where client.session(unitID: "u-\(round)-\(index)").value(key) { count += 1 }
        }
    }
    report("client.session+first-read.static-flag", seconds / Double(rounds * 1_000) * 1e9, "ns")

    let units = quick ? 10_000 : 100_000
    let countries = ["US", "DE", "FR", "GB", "AT"]
    func sessions() -> [FlagSession] {
        (0..<units).map { index in
            client.session(
                unitID: "user-\(index)",
                attributes: [
                    "country": countries[index % countries.count], "appVersion": "5.\(index % 7).0",
                    "email": "user\(index)@mail.test", "plan": index % 3 == 0 ? "pro" : "free",
                ])
        }
    }
    // `--only NAME` reads that flag alone, so that callgrind's count of the first reads is that flag's.
    let only = arguments.firstIndex(of: "--only").flatMap {
        arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
    }
    let workloads = [
        ("5rules+rollout", "f"), ("rule+rollout25", "simple"), ("one-rule", "one-rule"),
        ("one-prerequisite", "one-prereq"),
    ].filter { only == nil || $0.0 == only }
    for (name, flag) in workloads {
        let open = sessions()
        let targeted = FlagKey(flag, default: false)
        let firstRead = best(runs: 1) {
            for session in open where session.value(targeted) { count += 1 }
        }
        report("client.first-read.\(name)", firstRead / Double(units) * 1e9, "ns")
    }
    if count < 0 { print("(ignore: \(count))") }
    client.shutdown()
}

/// The enum `benchmarkEnumReads` reads the string flag as.
enum BenchTheme: String, CaseIterable, Sendable {
    case blue, green, orange
}

/// An enum key against a `String` key of the same flag (a string flag with one rule): the first read of each in fresh
/// sessions, and the frozen read, each the best of several runs taken in turns, so that the machine's moods fall
/// on both alike. The enum key pays for the check that the served value is a case (and, with `--counting`, for
/// recording its cases); docs/client.md promises it within 1.1× of the `String` key.
func benchmarkEnumReads() {
    var set = FlagSet(name: "bench", version: 1, cohorts: benchmarkCohorts())
    set.flags["theme"] = Flag(
        key: "theme", type: .string, defaultValue: .string("blue"),
        rules: [
            Rule(
                name: "dach", target: .conditions([Condition(attribute: "country", op: .in, values: ["DE", "AT"])]),
                serve: .value(.string("green")))
        ])
    let client = bootstrappedClient(set)
    let text = FlagKey("theme", default: "blue")
    let theme = FlagKey("theme", default: BenchTheme.blue)
    let units = quick ? 10_000 : 100_000
    let countries = ["US", "DE", "FR", "GB", "AT"]
    func sessions() -> [FlagSession] {
        (0..<units).map { client.session(unitID: "user-\($0)", attributes: ["country": countries[$0 % 5]]) }
    }
    var greens = 0
    var firstText = Double.infinity
    var firstEnum = Double.infinity
    // Each key reads its own fresh sessions, made just before and dropped just after, and the keys take turns at
    // going first: the second of two batches alive at once ran on a larger heap, and seemed slower for it.
    func firstReadOfText() {
        let open = sessions()
        firstText = min(
            firstText, best(runs: 1) { for session in open where session.value(text) == "green" { greens += 1 } })
    }
    func firstReadOfEnum() {
        let open = sessions()
        firstEnum = min(
            firstEnum, best(runs: 1) { for session in open where session.value(theme) == .green { greens += 1 } })
    }
    for round in 0..<(quick ? 4 : 8) {
        if round % 2 == 0 {
            firstReadOfText()
            firstReadOfEnum()
        } else {
            firstReadOfEnum()
            firstReadOfText()
        }
    }
    report("client.first-read.string-key", firstText / Double(units) * 1e9, "ns")
    report("client.first-read.enum-key", firstEnum / Double(units) * 1e9, "ns")
    report("client.first-read.enum/string", firstEnum / firstText, "x")

    // A session each: one that froze the flag through the `String` key serves the enum key correctly, but not by
    // the enum's fast path, which needs the case its own first read found.
    let textSession = client.session(unitID: "user-1", attributes: ["country": "DE"])
    let enumSession = client.session(unitID: "user-1", attributes: ["country": "DE"])
    let reads = quick ? 1_000_000 : 10_000_000
    var frozenText = Double.infinity
    var frozenEnum = Double.infinity
    for _ in 0..<(quick ? 3 : 7) {
        frozenText = min(
            frozenText, best(runs: 1) { for _ in 0..<reads where textSession.value(text) == "green" { greens += 1 } })
        frozenEnum = min(
            frozenEnum, best(runs: 1) { for _ in 0..<reads where enumSession.value(theme) == .green { greens += 1 } })
    }
    report("client.frozen-read.string-key", frozenText / Double(reads) * 1e9, "ns")
    report("client.frozen-read.enum-key", frozenEnum / Double(reads) * 1e9, "ns")
    report("client.frozen-read.enum/string", frozenEnum / frozenText, "x")
    if greens < 0 { print("(ignore: \(greens))") }
    client.shutdown()
}

/// A read-only client (an app extension) against the app's: launch from the same cached 1,000-flag set to the first
/// value, measured by turns in one run, and the cost of creating a session for each, where the read-only client's
/// includes the check for a set the app stored since (nothing stored: `data_version` unchanged). `flagbench
/// client-shared`.
func benchmarkSharedCache() {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flagbench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    var configuration = benchConfiguration(cacheDirectory: directory)
    configuration.refresh = .off
    // The app: seeds the cache and keeps it open, as a running app does.
    var seeding = configuration
    seeding.bootstrap = benchmarkDocument(flags: 1_000)
    guard let app = try? FlagClient(configuration: seeding) else { exit(1) }
    var readOnly = configuration
    readOnly.cacheAccess = .readOnly
    let key = FlagKey("flag-500", default: false)
    var value = false
    var launched: [FlagClient] = []
    func launch(_ configuration: FlagClient.Configuration) -> Double {
        best(runs: 1) { value = launchToFirstValue(configuration, key, into: &launched) }
    }
    var (readWriteLaunch, readOnlyLaunch) = (Double.infinity, Double.infinity)
    for _ in 0..<(quick ? 3 : 9) {
        readWriteLaunch = min(readWriteLaunch, launch(configuration))
        readOnlyLaunch = min(readOnlyLaunch, launch(readOnly))
    }
    for client in launched { client.shutdown() }
    report("client.init-from-cache-to-first-value.1000flags.read-write", readWriteLaunch * 1e3, "ms")
    report("client.init-from-cache-to-first-value.1000flags.read-only", readOnlyLaunch * 1e3, "ms")
    report("client.init.read-only/read-write", readOnlyLaunch / readWriteLaunch, "x")

    let count = quick ? 10_000 : 100_000
    let attributes = ["country": "DE", "appVersion": "5.3.0"]
    // `--only read-write|read-only` creates one client's sessions, for callgrind.
    let only = arguments.firstIndex(of: "--only").flatMap {
        arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
    }
    for (name, configuration) in [("read-write", configuration), ("read-only", readOnly)] where only ?? name == name {
        guard let client = try? FlagClient(configuration: configuration) else { exit(1) }
        var sessions: [FlagSession] = []
        sessions.reserveCapacity(count)
        let creation = best(runs: 1) {
            for index in 0..<count { sessions.append(client.session(unitID: "user-\(index)", attributes: attributes)) }
        }
        report("client.session-creation.\(name)", creation / Double(count) * 1e9, "ns")
        client.shutdown()
    }
    if value { print("(ignore: \(value))") }
    app.shutdown()
}

/// One launch, cache to first value: a client made from `configuration`, and a new session's first read of `key`.
/// The client goes into `launched`, to be shut down outside the timing; the process exits when none can be made.
func launchToFirstValue(
    _ configuration: FlagClient.Configuration, _ key: FlagKey<Bool>, into launched: inout [FlagClient]
) -> Bool {
    do {
        let client = try FlagClient(configuration: configuration)
        let value = client.session(unitID: "user-1", attributes: ["country": "DE"]).value(key)
        launched.append(client)
        return value
    } catch {
        print("client init failed: \(error)")
        exit(1)
    }
}
