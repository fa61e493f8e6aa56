import FlagClient
import FlagCore
import FlagSQLite
import FlagSigning
import Foundation

/// Signing's figures: verifying the benchmark's 1,000-flag document and a one-flag patch, and a client's launch
/// from its cache with and without trusted keys, in the same run (the ratio is the figure to compare).
func benchmarkSignedClient() {
    guard let key = try? PrivateSigningKey(seed: Array(repeating: 7, count: 32)),
        var set = try? FlagSet.decode(benchmarkDocument(flags: 1_000))
    else { exit(1) }
    set.name = "bench"
    set.flags["static"] = Flag(key: "static", type: .bool, defaultValue: .bool(true))
    let bytes = set.encoded()
    guard var flag = set.flags["flag-500"] else { exit(1) }
    flag.killed = true
    let patch = SetPatch(version: set.version + 1, base: set.version, flags: [flag.key: flag.encoded()]).encoded()
    let message = SignedMessage(set: "bench", version: set.version, baseVersion: nil, body: bytes)
    let patchMessage = SignedMessage(set: "bench", version: set.version + 1, baseVersion: set.version, body: patch)
    guard let signature = try? key.sign(message), let patchSignature = try? key.sign(patchMessage) else { exit(1) }
    let trusted = [key.signingKey]
    report("signing.document-bytes", Double(bytes.count) / 1e6, "MB")

    var failures = 0
    let document = best(runs: quick ? 5 : 20) {
        let message = SignedMessage(set: "bench", version: set.version, baseVersion: nil, body: bytes)
        if (try? trusted.verify(signature, for: message)) == nil { failures += 1 }
    }
    report("signing.verify-document.1000flags", document * 1e3, "ms")
    let onePatch = best(runs: quick ? 20 : 200) {
        let message = SignedMessage(set: "bench", version: set.version + 1, baseVersion: set.version, body: patch)
        if (try? trusted.verify(patchSignature, for: message)) == nil { failures += 1 }
    }
    report("signing.verify-patch.one-flag", onePatch * 1e6, "µs")
    // What a verifying launch does in place of reading the stored index, which nothing signs.
    let scan = best(runs: quick ? 5 : 20) {
        if (try? FlagSet.Layout.scan(bytes))?.flagRanges.count != set.flags.count { failures += 1 }
    }
    report("client.scan-document.1000flags", scan * 1e3, "ms")
    if failures > 0 {
        print("verification failed \(failures) times")
        exit(1)
    }

    let plain = launchFigure(bytes: bytes, signature: nil, patch: nil, trusting: [])
    report("client.init-from-cache-to-first-value.1000flags", plain * 1e3, "ms")
    let verified = launchFigure(
        bytes: bytes, signature: signature.headerValue,
        patch: (set.version + 1, set.version, patch, patchSignature.headerValue), trusting: trusted)
    report("client.init-from-cache-to-first-value.1000flags.verified-document-and-patch", verified * 1e3, "ms")
    report("client.init-from-cache.verified-ratio", verified / plain, "×")
}

/// The best launch, cache to first value, from a cache seeded with `bytes` (signed by `signature`, when given) and
/// `patch` after it, by a client trusting `keys`.
private func launchFigure(
    bytes: [UInt8], signature: String?, patch: (version: Int, base: Int, bytes: [UInt8], signature: String)?,
    trusting keys: [SigningKey]
) -> Double {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flagbench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    var configuration = benchConfiguration(cacheDirectory: directory)
    configuration.refresh = .off
    configuration.trustedKeys = keys
    seedCache(configuration, with: bytes, signature: signature) {
        // The patch, as a verifying client that received it on the stream would store it (the cache's own table: a
        // benchmark may know it).
        if let patch {
            let database = try SQLiteDatabase(
                path: directory.appendingPathComponent("flagclient.sqlite").path, configuration: .client)
            try database.write { db in
                try db.execute(
                    "INSERT INTO flag_set_patch (set_name, version, base, patch, signature) VALUES (?, ?, ?, ?, ?)",
                    [
                        .text("bench"), .init(patch.version), .init(patch.base), .blob(patch.bytes),
                        .text(patch.signature),
                    ])
            }
            try database.close()
        }
    }
    if arguments.contains("--verbose") {
        configuration.logger = { message in print(message) }
    }
    let key = FlagKey("flag-500", default: false)
    let expected: ClientState = .cached(version: patch?.version ?? 1)
    var launched: [FlagClient] = []
    var wrong = 0
    let seconds = best(runs: quick ? 3 : 9) {
        _ = launchToFirstValue(configuration, key, into: &launched)
        if launched.last?.state != expected { wrong += 1 }
    }
    for client in launched { client.shutdown() }
    if wrong > 0 {
        print("\(wrong) launches did not start from the cache (expected \(expected))")
        exit(1)
    }
    return seconds
}
