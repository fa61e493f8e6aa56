import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

extension FlagKey where Value == Bool {
    static let newCheckout = FlagKey("new-checkout", default: false)
    static let darkMode = FlagKey("dark-mode", default: false)
}

extension FlagKey where Value == Int {
    static let maxItems = FlagKey("max-items", default: 10)
}

/// Flag-set documents for the tests.
enum Docs {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)

    static func flag(_ key: String, _ value: Bool, killed: Bool = false) -> Flag {
        Flag(key: key, type: .bool, defaultValue: .bool(value), killValue: .bool(false), killed: killed)
    }

    static func set(version: Int, flags: [Flag], name: String = "ios-prod") -> FlagSet {
        FlagSet(
            name: name, version: version, updatedAt: start, cohorts: [:],
            flags: Dictionary(uniqueKeysWithValues: flags.map { ($0.key, $0) }))
    }

    static func bytes(version: Int, _ flags: Flag..., name: String = "ios-prod") -> [UInt8] {
        set(version: version, flags: flags, name: name).encoded()
    }

    /// Set `version` with `flags` as JSON text, as a `put` event's data carries it.
    static func document(version: Int, flags: [Flag], name: String = "ios-prod") -> String {
        String(decoding: set(version: version, flags: flags, name: name).encoded(), as: UTF8.self)
    }

    static func document(_ version: Int, _ flags: Flag..., name: String = "ios-prod") -> String {
        document(version: version, flags: flags, name: name)
    }

    /// A patch event's data: changed flags and removed keys over `base`.
    static func patch(version: Int, base: Int, flags: [Flag] = [], removed: Set<String> = []) -> String {
        let changed = Dictionary(flags.map { ($0.key, $0.encoded()) }, uniquingKeysWith: { _, last in last })
        let patch = SetPatch(version: version, base: base, flags: changed, removedFlags: removed)
        return String(decoding: patch.encoded(), as: UTF8.self)
    }

    static func sse(_ type: String, id: Int, _ data: String) -> [UInt8] {
        Array("event: \(type)\nid: \(id)\ndata: \(data)\n\n".utf8)
    }
}

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let box: Locked<Date>
    init(_ start: Date = Docs.start) { box = Locked(start) }
    var now: Date { box.withLock { $0 } }
    func advance(_ seconds: Double) { box.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// A transport the test scripts: fetches answer from a handler, streams are handed to the test to feed.
final class ScriptedTransport: FlagTransport {
    typealias Continuation = AsyncThrowingStream<StreamPart, any Error>.Continuation
    private let state = Locked<(fetches: [TransportRequest], streams: [TransportRequest], open: [Continuation])>(
        ([], [], []))
    private let handler: @Sendable (TransportRequest) throws -> (TransportHead, [UInt8])

    init(
        fetch handler: @escaping @Sendable (TransportRequest) throws -> (TransportHead, [UInt8]) = { _ in
            throw URLErrorStandIn()
        }
    ) {
        self.handler = handler
    }

    var fetches: [TransportRequest] { state.withLock { $0.fetches } }
    var streamRequests: [TransportRequest] { state.withLock { $0.streams } }

    func fetch(_ request: TransportRequest) async throws -> (head: TransportHead, body: [UInt8]) {
        state.withLock { $0.fetches.append(request) }
        return try handler(request)
    }

    func stream(_ request: TransportRequest) -> AsyncThrowingStream<StreamPart, any Error> {
        let (stream, continuation) = AsyncThrowingStream<StreamPart, any Error>.makeStream()
        state.withLock {
            $0.streams.append(request)
            $0.open.append(continuation)
        }
        return stream
    }

    /// Waits for the client to open its `index`-th stream (0-based) and returns its feed.
    func stream(_ index: Int) async throws -> Continuation {
        try await eventually("stream \(index) opened") { self.state.withLock { $0.open.count > index } }
        return state.withLock { $0.open[index] }
    }

    /// Waits for the client's first stream and answers it with a 200 event-stream head; its feed.
    func openStream() async throws -> Continuation {
        let stream = try await stream(0)
        stream.yield(eventStreamHead)
        return stream
    }
}

struct URLErrorStandIn: Error {}

/// A 200 head for an event stream.
let eventStreamHead = StreamPart.head(TransportHead(status: 200, headers: ["content-type": "text/event-stream"]))

/// Collects log messages.
final class LogSink: Sendable {
    private let box = Locked<[FlagClientLogMessage]>([])
    var messages: [FlagClientLogMessage] { box.withLock { $0 } }
    var logger: @Sendable (FlagClientLogMessage) -> Void {
        { message in self.box.withLock { $0.append(message) } }
    }
}

/// A client with test doubles for time, randomness, sleep and transport, and telemetry off. With `virtualTime`, sleeps go through it
/// (and `clock` should be its clock); without, each records its seconds in `sleeps` and waits 2 ms.
func makeClient(
    directory: URL?, transport: any FlagTransport, clock: TestClock = TestClock(), refresh: RefreshMode = .stream,
    sleeps: Locked<[Double]>? = nil, random: Double = 0.5, virtualTime: VirtualTime? = nil,
    configure: (inout FlagClient.Configuration) -> Void = { _ in }
) throws -> FlagClient {
    var configuration = FlagClient.Configuration(
        server: URL(string: "http://flags.test")!, set: "ios-prod", sdkKey: "sdk-secret", cacheDirectory: directory)
    configuration.refresh = refresh
    configuration.environment = [:]
    // Reports share the sleep with the refresh loop; the tests that want them turn them on.
    configuration.telemetry = .off
    configure(&configuration)
    let recordingSleep: @Sendable (Double) async throws -> Void = { seconds in
        sleeps?.withLock { $0.append(seconds) }
        try await Task.sleep(nanoseconds: 2_000_000)
    }
    let dependencies = ClientDependencies(
        now: { clock.now }, random: { random }, sleep: virtualTime?.sleep ?? recordingSleep, transport: transport)
    return try FlagClient(configuration: configuration, dependencies: dependencies)
}

/// Stores `bytes` as the cached document of `ios-prod` in `directory`.
func seedCache(_ directory: URL, _ bytes: [UInt8], version: Int) throws {
    let cache = try FlagCache.open(directory: directory, now: Docs.start, log: { _, _ in })
    try cache.store(
        set: "ios-prod", document: .init(version: version, etag: "\"\(version)\"", bytes: bytes), now: Docs.start)
}
