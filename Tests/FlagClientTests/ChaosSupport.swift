import FlagCore
import FlagHTTP
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Helpers of the chaos suites: bounded calls, a client on the real transport with compressed time, and ways to
/// break the file system under the cache.
enum Chaos {
    /// How long any public call of the client may take, whatever the server, the network or the disk do. Generous,
    /// as the machine running the tests is shared and busy; a blocked call takes seconds (the 5 s SQLite busy
    /// timeout, a 45 s stream timeout), not this.
    static let bound = 2.0

    /// Runs `body` on a thread of its own and fails the test unless it returns within `seconds`, measured on that
    /// thread (so a busy machine that is slow to resume the waiting test cannot hide a slow call). The waiting is
    /// asynchronous: a blocked client call must not also block one of the few threads of the test's executor.
    static func bounded<T: Sendable>(
        _ what: String, seconds: Double = bound, _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        let box = Locked<(result: Result<T, any Error>, took: Duration)?>(nil)
        let thread = Thread {
            let started = ContinuousClock.now
            let result = Result(catching: body)
            let took = ContinuousClock.now - started
            box.withLock { $0 = (result, took) }
        }
        thread.stackSize = 1 << 20
        thread.start()
        _ = await eventually(timeout: .seconds(seconds), every: .milliseconds(2)) { box.withLock { $0 } != nil }
        guard let (result, took) = box.withLock({ $0 }) else {
            Issue.record("\(what) did not return within \(seconds) s")
            throw TimedOut("\(what) did not return within \(seconds) s")
        }
        if took > .seconds(seconds) { Issue.record("\(what) took \(took), more than \(seconds) s") }
        return try result.get()
    }

    /// Time compression for the backoff: one requested second sleeps one millisecond, so that a test sees dozens of
    /// retries in well under a second, while the requested delays are recorded exactly.
    static let timeScale = 0.001

    /// A client on the real URLSession transport and system clock, whose sleeps are recorded in `sleeps` and
    /// compressed by `timeScale`; the jitter factor is fixed at 1 (random 0.5), so the delays are exact.
    static func client(
        server: URL, set: String = "ios-prod", sdkKey: String = "sdk-secret", cache: URL?,
        refresh: RefreshMode = .stream, sleeps: Locked<[Double]> = Locked([]), logs: LogSink? = nil,
        configure: (inout FlagClient.Configuration) -> Void = { _ in }
    ) throws -> FlagClient {
        var configuration = FlagClient.Configuration(server: server, set: set, sdkKey: sdkKey, cacheDirectory: cache)
        configuration.refresh = refresh
        configuration.environment = [:]
        configuration.logger = logs?.logger
        // `sleeps` records the refresh loop's delays; the telemetry reporter would add its own.
        configuration.telemetry = .off
        configure(&configuration)
        let dependencies = ClientDependencies(
            now: { Date() }, random: { 0.5 },
            sleep: { seconds in
                sleeps.withLock { $0.append(seconds) }
                try await Task.sleep(nanoseconds: UInt64(max(0.001, seconds * timeScale) * 1e9))
            }, transport: URLSessionTransport())
        return try FlagClient(configuration: configuration, dependencies: dependencies)
    }

    /// A client on `directory` with a scripted transport and its log recorded; `init` must return within `seconds`.
    static func start(
        _ directory: URL, seconds: Double = bound
    ) async throws -> (client: FlagClient, transport: ScriptedTransport, logs: LogSink) {
        let transport = ScriptedTransport()
        let logs = LogSink()
        let client = try await bounded("init", seconds: seconds) {
            try makeClient(directory: directory, transport: transport) { $0.logger = logs.logger }
        }
        return (client, transport, logs)
    }

    /// Sends `put(version)` on `stream` and checks that the client goes live on it and serves it.
    static func send(
        _ version: Int, newCheckout: Bool, maxItems: Int, padding: Int = 0, on stream: ScriptedTransport.Continuation,
        to client: FlagClient, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        stream.yield(.bytes(put(version, newCheckout: newCheckout, maxItems: maxItems, padding: padding)))
        try await eventually("live v\(version)", timeout: .patience) { client.state == .live(version: version) }
        try await expectServing(
            client, version: version, newCheckout: newCheckout, maxItems: maxItems, sourceLocation: sourceLocation)
    }

    /// Tells the client on `stream` that its cached set is current, and waits until it is live on `version`.
    static func sendCurrent(_ version: Int, on stream: ScriptedTransport.Continuation, to client: FlagClient)
        async throws
    {
        stream.yield(.bytes(Array(": current\n\n".utf8)))
        try await eventually("live v\(version)", timeout: .patience) { client.state == .live(version: version) }
    }

    /// Checks the promises that hold in every chaos case: each public call returns within the bound, and the values
    /// served are those of `version` (or the compiled-in defaults when `nil`), never of a set that was refused.
    static func expectServing(
        _ client: FlagClient, version: Int?, newCheckout: Bool, maxItems: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let detail = try await bounded("session and detail") {
            let session = client.session(unitID: "u-1")
            return (session.detail(.newCheckout), session.value(.maxItems))
        }
        #expect(detail.0.version == version, sourceLocation: sourceLocation)
        #expect(detail.0.value == newCheckout, sourceLocation: sourceLocation)
        #expect(detail.1 == maxItems, sourceLocation: sourceLocation)
        let state = try await bounded("state") { client.state }
        if let version {
            switch state {
            case .stale: break
            case .cached(let current), .live(let current):
                #expect(current == version, "state \(state)", sourceLocation: sourceLocation)
            case .refused(let current, _):
                #expect(current == version, "state \(state)", sourceLocation: sourceLocation)
            case .defaultsOnly: Issue.record("defaults only, expected v\(version)", sourceLocation: sourceLocation)
            }
        }
    }

    /// A set of the two flags the chaos tests read, at `version`.
    static func document(_ version: Int, newCheckout: Bool, maxItems: Int = 10, padding: Int = 0) -> [UInt8] {
        var flags = [
            Docs.flag("new-checkout", newCheckout),
            Flag(key: "max-items", type: .int, defaultValue: .int(Int64(maxItems)), killValue: .int(0)),
        ]
        // Padding flags make a document as large as a test needs (about 120 bytes each).
        for index in 0..<padding { flags.append(Docs.flag("padding-\(index)", index % 2 == 0)) }
        return Docs.set(version: version, flags: flags).encoded()
    }

    /// `document` as an SSE `put` event.
    static func put(_ version: Int, newCheckout: Bool, maxItems: Int = 10, padding: Int = 0) -> [UInt8] {
        Docs.sse(
            "put", id: version,
            String(
                decoding: document(version, newCheckout: newCheckout, maxItems: maxItems, padding: padding),
                as: UTF8.self))
    }

    /// The version of the document cached in `directory`, read by a separate connection as the next process would.
    static func cachedVersion(_ directory: URL) throws -> Int? {
        try FlagCache.open(directory: directory, now: Date(), log: { _, _ in }).document(set: "ios-prod")?.version
    }

    /// The names of the files moved aside in `directory`.
    static func movedAside(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.contains(".corrupt-") }.sorted()
    }
}

/// Records a client's state updates as they come, for tests that check what the client reported.
final class UpdateRecorder: Sendable {
    private let box = Locked<[ClientState]>([])
    private let task: Task<Void, Never>

    init(_ client: FlagClient) {
        let updates = client.updates
        let box = box
        task = Task { for await update in updates { box.withLock { $0.append(update.state) } } }
    }

    deinit { task.cancel() }

    var states: [ClientState] { box.withLock { $0 } }

    /// Whether a `stale` state was reported.
    var sawStale: Bool { states.contains { if case .stale = $0 { true } else { false } } }
}

/// An SSE stream answer of the scripted server.
func streamAnswer(_ chunks: [UInt8]...) -> ScriptedHTTPServer.Response {
    .init(status: 200, headers: ["Content-Type": "text/event-stream"], chunks: chunks, pause: 0.005, keepOpen: true)
}
