import FlagClient
import FlagCore
import Foundation

/// FlagClient figures: launch from a cached 1,000-flag set to the first value, session creation, first and frozen
/// reads, and the work of applying a one-flag patch.
func benchmarkClient() {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flagbench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let bytes = benchmarkDocument(flags: 1_000)
    var configuration = FlagClient.Configuration(
        server: URL(string: "http://127.0.0.1:1")!, set: "bench", sdkKey: "bench", cacheDirectory: directory)
    configuration.refresh = .off
    configuration.overridesEnabled = false
    do {
        // Seeds the cache, as a first launch with a bootstrap document would.
        var seeding = configuration
        seeding.bootstrap = bytes
        try FlagClient(configuration: seeding).shutdown()
    } catch {
        print("could not seed the cache: \(error)")
        exit(1)
    }
    if arguments.contains("--verbose") {
        configuration.logger = { message in print(message) }
    }
    let key = FlagKey("flag-500", default: false)
    var value = false
    let launch = best(runs: quick ? 3 : 9) {
        do {
            let client = try FlagClient(configuration: configuration)
            value = client.session(unitID: "user-1", attributes: ["country": "DE"]).value(key)
            client.shutdown()
        } catch {
            print("client init failed: \(error)")
            exit(1)
        }
    }
    report("client.init-from-cache-to-first-value.1000flags", launch * 1e3, "ms")

    guard let client = try? FlagClient(configuration: configuration) else { exit(1) }
    // Let the background decode replace the lazy per-flag source with the whole compiled set.
    Thread.sleep(forTimeInterval: 0.5)
    let count = quick ? 10_000 : 100_000
    let attributes = ["country": "DE", "appVersion": "5.3.0", "email": "a@mail.test", "plan": "pro"]
    var sessions: [FlagSession] = []
    sessions.reserveCapacity(count)
    let creation = best(runs: 1) {
        for index in 0..<count { sessions.append(client.session(unitID: "user-\(index)", attributes: attributes)) }
    }
    report("client.session-creation", creation / Double(count) * 1e9, "ns")
    let simple = FlagKey("simple", default: false)
    let firstRead = best(runs: 1) {
        for session in sessions where session.value(simple) { value.toggle() }
    }
    report("client.first-read.missing-flag", firstRead / Double(count) * 1e9, "ns")
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
}
