import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// `refresh()`, `suspend()` and `resume()` against the scripted transport: what is fetched, and when.
@Suite(.live) struct LifecycleTests {
    /// A server that answers `document` with its version as the ETag, and 304 to a request that names it.
    static func conditionalServer(_ version: Box<Int>) -> ScriptedTransport {
        ScriptedTransport { request in
            let current = version.value
            if request.headers["If-None-Match"] == "\"\(current)\"" {
                return (TransportHead(status: 304, headers: [:]), [])
            }
            return (
                TransportHead(status: 200, headers: ["etag": "\"\(current)\""]),
                Docs.bytes(version: current, Docs.flag("new-checkout", current > 1))
            )
        }
    }

    @Test func refreshFetchesInModeOffAndAnswersLiveOn200And304() async throws {
        try await withTemporaryDirectory { directory in
            let version = Box(1)
            let transport = Self.conditionalServer(version)
            let client = try makeClient(directory: directory, transport: transport, refresh: .off)
            defer { client.shutdown() }
            #expect(client.state == .defaultsOnly)
            #expect(await client.refresh())
            #expect(client.state == .live(version: 1))
            #expect(await client.refresh())
            #expect(client.state == .live(version: 1))
            version.value = 2
            #expect(await client.refresh())
            #expect(client.state == .live(version: 2))
            #expect(client.session(unitID: "u").value(.newCheckout) == true)
            #expect(transport.fetches.map { $0.headers["If-None-Match"] } == [nil, "\"1\"", "\"1\""])
        }
    }

    @Test func refreshAnswersFalseWhenTheServerCannotBeReached() async throws {
        try await withTemporaryDirectory { directory in
            let transport = ScriptedTransport()
            let client = try makeClient(directory: directory, transport: transport, refresh: .off)
            defer { client.shutdown() }
            #expect(await client.refresh() == false)
            #expect(client.state == .defaultsOnly)
            #expect(transport.fetches.count == 1)
        }
    }

    @Test func refreshAnswersFalseWhenTheKeyIsRefused() async throws {
        let transport = ScriptedTransport { _ in (TransportHead(status: 401, headers: [:]), []) }
        let client = try makeClient(directory: nil, transport: transport, refresh: .off)
        defer { client.shutdown() }
        #expect(await client.refresh() == false)
    }

    /// A refresh called before the loop compiled the cached set is not undone by it: the loop's first step would
    /// otherwise put the older cached set back in use.
    @Test func aRefreshBeforeTheLoopStartsKeepsTheNewerSet() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Docs.bytes(version: 1, Docs.flag("new-checkout", false)), version: 1)
            let version = Box(2)
            let client = try makeClient(directory: directory, transport: Self.conditionalServer(version), refresh: .off)
            defer { client.shutdown() }
            #expect(await client.refresh())
            try await Task.sleep(for: .milliseconds(50))
            #expect(client.state == .live(version: 2))
            #expect(client.session(unitID: "u").value(.newCheckout) == true)
        }
    }
}

/// A value a test changes while a transport's handler reads it.
final class Box<Value: Sendable>: Sendable {
    private let box: Locked<Value>
    init(_ value: Value) { box = Locked(value) }
    var value: Value {
        get { box.withLock { $0 } }
        set { box.withLock { $0 = newValue } }
    }
}

/// `suspend()` and `resume()` against the scripted transport.
@Suite(.live) struct SuspendTests {
    @Test func suspendClosesTheStreamAndResumeFetchesThenReconnects() async throws {
        try await withTemporaryDirectory { directory in
            let version = Box(1)
            let transport = LifecycleTests.conditionalServer(version)
            let client = try makeClient(directory: directory, transport: transport)
            defer { client.shutdown() }
            let stream = try await transport.openStream()
            stream.yield(.bytes(Docs.sse("put", id: 1, Docs.document(1))))
            try await eventually("live") { client.state == .live(version: 1) }
            let closed = Box(false)
            stream.onTermination = { _ in closed.value = true }

            client.suspend()
            client.suspend()
            try await eventually("the stream closed") { closed.value }
            guard case .stale = client.state else {
                Issue.record("suspended, the state is \(client.state)")
                return
            }
            try await Task.sleep(for: .milliseconds(100))  // the loop sleeps 2 ms per backoff here
            #expect(transport.streamRequests.count == 1)
            #expect(transport.fetches.isEmpty)

            client.resume()
            client.resume()
            #expect(await client.ready(timeout: .patience))
            #expect(transport.fetches.map { $0.headers["If-None-Match"] } == ["\"1\""])  // answered 304
            let reopened = try await transport.stream(1)
            #expect(transport.streamRequests[1].headers["Last-Event-ID"] == "1")
            reopened.yield(eventStreamHead)
            try await Task.sleep(for: .milliseconds(50))
            #expect(transport.streamRequests.count == 2)
            #expect(transport.fetches.count == 1)
        }
    }

    /// `suspend()` and `resume()` called from many threads at once leave one refresh loop: never two streams open at
    /// the same time, and one open at the end.
    @Test func suspendAndResumeFromManyThreadsLeaveOneLoop() async throws {
        let transport = CountingStreams()
        let client = try makeClient(directory: nil, transport: transport)
        defer { client.shutdown() }
        try await eventually("live") { client.state == .live(version: 1) }
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            if index % 2 == 0 { client.suspend() } else { client.resume() }
        }
        client.suspend()
        client.resume()
        #expect(await client.ready(timeout: .patience))
        try await eventually("one stream open") { transport.counts.open == 1 }
        try await Task.sleep(for: .milliseconds(100))
        #expect(transport.counts.open == 1)
        #expect(transport.counts.most == 1)
    }

    /// While suspended, `refresh()` still fetches, and reopens nothing.
    @Test func refreshWhileSuspendedFetchesOnly() async throws {
        try await withTemporaryDirectory { directory in
            let version = Box(1)
            let transport = LifecycleTests.conditionalServer(version)
            let client = try makeClient(directory: directory, transport: transport, refresh: .poll)
            defer { client.shutdown() }
            try await eventually("live") { client.state == .live(version: 1) }
            client.suspend()
            // The cancelled loop may be finishing a poll it had started; what it fetched is not the refresh's.
            await client.background.withLock { $0.refresh }?.value
            let fetched = transport.fetches.count
            version.value = 2
            #expect(await client.refresh())
            #expect(client.state == .live(version: 2))
            try await Task.sleep(for: .milliseconds(100))
            #expect(transport.fetches.count == fetched + 1)
        }
    }

    /// Reports pause while suspended and go out after `resume()`; nothing is lost.
    @Test func telemetryPausesWhileSuspended() async throws {
        let fixture = try TelemetryFixture(configure: TelemetryReporterTests.bootstrap)
        defer { fixture.client.shutdown() }
        try await fixture.connect(instance: "in_1", version: 7, TelemetryReporterTests.checkout)
        _ = try await fixture.report(1)
        _ = fixture.client.session(unitID: "v").value(.darkMode)
        try await fixture.time.waitUntilHeld("the reporter waits a period")
        fixture.client.suspend()
        // Three periods pass while suspended.
        try await fixture.time.pass(3, "the paused reporter waits, period")
        try await fixture.time.waitUntilHeld("the paused reporter waits again")
        #expect(fixture.reports.count == 1)
        fixture.client.resume()
        let next = try await fixture.report(2)
        #expect(next.report.counts == ["dark-mode": ["": ["DEFAULT": 1]]])  // not in v7: its default
    }
}

/// A server whose streams open at once with v1, counting the streams open now and the most open at once.
final class CountingStreams: FlagTransport {
    private let state = Locked<(open: Int, most: Int)>((0, 0))

    var counts: (open: Int, most: Int) { state.withLock { $0 } }

    func fetch(_ request: TransportRequest) async throws -> (head: TransportHead, body: [UInt8]) {
        request.headers["If-None-Match"] == "\"1\""
            ? (TransportHead(status: 304, headers: [:]), [])
            : (TransportHead(status: 200, headers: ["etag": "\"1\""]), Docs.bytes(version: 1))
    }

    func stream(_ request: TransportRequest) -> AsyncThrowingStream<StreamPart, any Error> {
        let (stream, continuation) = AsyncThrowingStream<StreamPart, any Error>.makeStream()
        state.withLock { state in
            state.open += 1
            state.most = max(state.most, state.open)
        }
        continuation.onTermination = { _ in self.state.withLock { $0.open -= 1 } }
        continuation.yield(eventStreamHead)
        continuation.yield(.bytes(Docs.sse("put", id: 1, Docs.document(1))))
        return stream
    }
}
