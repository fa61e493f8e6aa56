import FlagClient
import Foundation

// flagshareprobe: the two processes of the shared-cache tests (SharedCacheLiveTests). `app` is a read-write client
// live against a server that prints each version it puts in use (a patch is put in use, then cached); `extension` is
// a read-only client on the same cache directory that opens a new session every PERIOD ms and prints what it sees,
// and what a session it keeps open sees. SIGTERM ends the app cleanly, SIGKILL as a crash does.
//
//   flagshareprobe app CACHE SERVER KEY
//   flagshareprobe extension CACHE SERVER KEY PERIOD_MS
//
// Set `share`'s flags: `counter` (int) and `gate` (bool). Runs until killed.

@Sendable func say(_ line: String) {
    FileHandle.standardOutput.write(Data("\(line)\n".utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 4, let server = URL(string: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: flagshareprobe app|extension CACHE SERVER KEY [PERIOD_MS]\n".utf8))
    exit(2)
}
extension FlagKey where Value == Int {
    static let counter = FlagKey("counter", default: -1)
}
extension FlagKey where Value == Bool {
    static let gate = FlagKey("gate", default: true)
}

var configuration = FlagClient.Configuration(
    server: server, set: "share", sdkKey: arguments[3], cacheDirectory: URL(fileURLWithPath: arguments[1]))
configuration.environment = [:]
configuration.telemetry = .off
configuration.logger = { message in
    if message.level >= .warning { FileHandle.standardError.write(Data("\(message)\n".utf8)) }
}
let isApp = arguments[0] == "app"
if !isApp { configuration.cacheAccess = .readOnly }
let client: FlagClient
do {
    client = try FlagClient(configuration: configuration)
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}

if isApp {
    // SIGTERM closes the client as an app going away does: the cache is left with its `-wal` emptied.
    signal(SIGTERM, SIG_IGN)
    let terminate = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
    terminate.setEventHandler {
        client.shutdown()
        exit(0)
    }
    terminate.resume()
    say("app started")
    for await update in client.updates {
        if case .live(let version) = update.state { say("in use v\(version)") }
    }
    // The updates end when SIGTERM's shutdown begins: leaving main now would end the process before the cache is
    // closed. The handler's exit ends it.
    while true { try await Task.sleep(for: .seconds(3600)) }
} else {
    let period = Double(arguments.count > 4 ? arguments[4] : "50") ?? 50
    let held = client.session(unitID: "held")
    _ = held.value(.gate)
    say("extension started")
    while true {
        let session = client.session(unitID: "u-\(Int.random(in: 0..<1000))")
        let detail = session.detail(.counter)
        say("seen v\(detail.version ?? 0) counter \(detail.value) held-gate \(held.value(.gate))")
        try await Task.sleep(for: .milliseconds(period))
    }
}
