import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// Time for the telemetry tests: a sleep moves `clock` forward by the seconds it asked for, so a report's timing is
/// exact. A sleep of `heldFrom` seconds or more (a telemetry period, a poll interval) lasts until the test calls
/// `release()` or the sleeping task is cancelled, so that nothing happens that the test did not let happen.
final class VirtualTime: Sendable {
    let clock: TestClock
    let heldFrom: Double
    private let state = Locked<(sleeps: [Double], releases: Int, cancelled: Int, holding: Int)>(([], 0, 0, 0))

    init(clock: TestClock = TestClock(), heldFrom: Double = 10) {
        self.clock = clock
        self.heldFrom = heldFrom
    }

    /// The seconds of every sleep asked for, in order.
    var sleeps: [Double] { state.withLock { $0.sleeps } }
    /// How many sleeps ended by cancellation.
    var cancelled: Int { state.withLock { $0.cancelled } }

    /// Lets one held sleep end (its seconds then pass on the clock).
    func release() {
        state.withLock { $0.releases += 1 }
    }

    /// Waits until a sleep is held and no release is pending: whatever the loops had to do before it is done.
    func waitUntilHeld(_ what: String = "a held sleep") async throws {
        try await eventually(what) {
            self.state.withLock { $0.holding > 0 && $0.releases == 0 }
        }
    }

    /// Lets `count` held sleeps end one after the other, each once it is held; the waits are named `what` and their
    /// number.
    func pass(_ count: Int, _ what: String) async throws {
        for number in 1...count {
            try await waitUntilHeld("\(what) \(number)")
            release()
        }
    }

    /// The `sleep` dependency.
    var sleep: @Sendable (Double) async throws -> Void {
        { seconds in try await self.pause(seconds) }
    }

    private func pause(_ seconds: Double) async throws {
        state.withLock { $0.sleeps.append(seconds) }
        do {
            if seconds >= heldFrom {
                state.withLock { $0.holding += 1 }
                do {
                    while true {
                        try await Task.sleep(nanoseconds: 1_000_000)
                        // Taken in the step that ends the hold, so that `waitUntilHeld` never sees both done.
                        let released = state.withLock { state -> Bool in
                            guard state.releases > 0 else { return false }
                            state.releases -= 1
                            state.holding -= 1
                            return true
                        }
                        if released { break }
                    }
                } catch {
                    state.withLock { $0.holding -= 1 }
                    throw error
                }
            }
            try Task.checkCancellation()
        } catch {
            state.withLock { $0.cancelled += 1 }
            throw error
        }
        clock.advance(seconds)
        try await Task.sleep(nanoseconds: 1_000_000)
    }
}

/// A report the client posted, read back, with the request and the virtual time it was sent at.
struct SentReport: Sendable {
    var request: TransportRequest
    var at: Date
    var report: TelemetryReport
}

/// A client on a scripted transport and virtual time, whose telemetry reports are answered from a script (204 once
/// the script is used up) and kept.
final class TelemetryFixture: Sendable {
    let time: VirtualTime
    let transport: ScriptedTransport
    let client: FlagClient
    let logs: LogSink
    private let state: Locked<(answers: [(TransportHead, [UInt8])], reports: [SentReport])>

    /// `answers` are the answers to the first reports, in order; `document` answers the client's polls.
    init(
        answers: [(TransportHead, [UInt8])] = [], random: Double = 0.5, refresh: RefreshMode = .stream,
        document: (@Sendable () -> (TransportHead, [UInt8]))? = nil,
        configure: (inout FlagClient.Configuration) -> Void = { _ in }
    ) throws {
        let time = VirtualTime()
        let state = Locked<(answers: [(TransportHead, [UInt8])], reports: [SentReport])>((answers, []))
        let transport = ScriptedTransport { request in
            guard request.method == "POST" else {
                guard let document else { throw URLErrorStandIn() }
                return document()
            }
            let report = try TelemetryReport.decode(request.body ?? [])
            return state.withLock { state in
                state.reports.append(SentReport(request: request, at: time.clock.now, report: report))
                return state.answers.isEmpty
                    ? (TransportHead(status: 204, headers: [:]), []) : state.answers.removeFirst()
            }
        }
        self.time = time
        self.state = state
        self.transport = transport
        let logs = LogSink()
        self.logs = logs
        client = try makeClient(
            directory: nil, transport: transport, clock: time.clock, refresh: refresh, random: random,
            virtualTime: time
        ) { configuration in
            configuration.telemetry = .every(seconds: 60)
            configuration.app = TelemetryReport.Software(name: "Shop", version: "5.3.0")
            configuration.logger = logs.logger
            configure(&configuration)
        }
    }

    /// The reports sent so far.
    var reports: [SentReport] { state.withLock { $0.reports } }

    /// Waits for the `count`-th report (1-based) and returns it.
    func report(_ count: Int) async throws -> SentReport {
        try await eventually("report \(count) sent") { self.reports.count >= count }
        return reports[count - 1]
    }

    /// Opens the client's `index`-th stream with `instance` in its head, and applies `version` of `flags` through a
    /// `put`; returns the stream and the virtual time the version was applied at.
    @discardableResult
    func connect(
        _ index: Int = 0, instance: String?, version: Int, _ flags: Flag...
    ) async throws -> (stream: ScriptedTransport.Continuation, appliedAt: Date) {
        let stream = try await transport.stream(index)
        var headers = ["content-type": "text/event-stream"]
        headers["flagstaff-instance"] = instance
        stream.yield(.head(TransportHead(status: 200, headers: headers)))
        let appliedAt = time.clock.now
        let document = Docs.document(version: version, flags: flags)
        stream.yield(.bytes(Docs.sse("put", id: version, document)))
        try await eventually("v\(version) live") {
            self.client.state == .live(version: version)
        }
        return (stream, appliedAt)
    }
}

/// An answer to a report: `status`, with `headers` and a JSON error body naming `error` when given.
func reportAnswer(_ status: Int, error: String? = nil, headers: [String: String] = [:]) -> (TransportHead, [UInt8]) {
    let body = error.map { Array(#"{"error":"\#($0)","message":"scripted"}"#.utf8) } ?? []
    return (TransportHead(status: status, headers: headers), body)
}

/// A client that counts evaluations for telemetry (in virtual time, which never reports unless the test lets it),
/// live on version 7 of `flags` from its first stream; the stream, to send more on.
func makeCountingClient(_ flags: Flag...) async throws -> (FlagClient, ScriptedTransport.Continuation) {
    let transport = ScriptedTransport()
    let client = try makeClient(directory: nil, transport: transport, virtualTime: VirtualTime()) {
        $0.telemetry = .every(seconds: 60)
    }
    let stream = try await transport.openStream()
    stream.yield(.bytes(Docs.sse("put", id: 7, Docs.document(version: 7, flags: flags))))
    try await eventually("v7") { client.state == .live(version: 7) }
    return (client, stream)
}
