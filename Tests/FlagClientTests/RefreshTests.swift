import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

@Suite(.live) struct RefreshTests {
    @Test func patchWithMatchingBaseIsApplied() async throws {
        try await withTemporaryDirectory { directory in
            let transport = ScriptedTransport()
            let client = try makeClient(directory: directory, transport: transport)
            let stream = try await transport.openStream()
            stream.yield(
                .bytes(
                    Docs.sse(
                        "put", id: 7, Docs.document(7, Docs.flag("new-checkout", false), Docs.flag("dark-mode", true))))
            )
            try await eventually("v7") { client.state == .live(version: 7) }
            stream.yield(
                .bytes(
                    Docs.sse(
                        "patch", id: 8,
                        Docs.patch(
                            version: 8, base: 7, flags: [Docs.flag("new-checkout", true)], removed: ["dark-mode"]))))
            try await eventually("v8") { client.state == .live(version: 8) }
            let session = client.session(unitID: "u")
            #expect(session.detail(.newCheckout).value == true)
            #expect(session.detail(.newCheckout).version == 8)
            #expect(session.detail(.darkMode).errorCode == .flagNotFound)
            #expect(transport.fetches.isEmpty)
            // The patched set is cached, as a whole document of version 8.
            try await eventually("cached v8") { (try? client.core.cache?.document(set: "ios-prod")?.version) == 8 }
            let document = try client.core.cache?.document(set: "ios-prod")
            let cached = try FlagSet.decode(try #require(document).bytes)
            #expect(cached.flags.keys.sorted() == ["new-checkout"])
            client.shutdown()
        }
    }

    /// `ready` answering means the set is on disk too, so a process exiting right after it starts from that set.
    @Test func aDocumentIsCachedBeforeItIsInUse() async throws {
        try await withTemporaryDirectory { directory in
            let transport = ScriptedTransport()
            let client = try makeClient(directory: directory, transport: transport)
            let stream = try await transport.openStream()
            stream.yield(.bytes(Docs.sse("put", id: 7, Docs.document(7, Docs.flag("new-checkout", true)))))
            #expect(await client.ready(timeout: .patience))
            #expect(try client.core.cache?.document(set: "ios-prod")?.version == 7)
            client.shutdown()
        }
    }

    /// A stale cache is never reported live: `ready` answers with the newer set the stream opens with.
    @Test func aStaleCacheBecomesLiveOnlyWithTheNewerSet() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Docs.bytes(version: 4, Docs.flag("new-checkout", false)), version: 4)
            let transport = ScriptedTransport()
            let client = try makeClient(directory: directory, transport: transport)
            let updates = client.updates
            let stream = try await transport.openStream()
            stream.yield(.bytes(Docs.sse("put", id: 5, Docs.document(5, Docs.flag("new-checkout", true)))))
            #expect(await client.ready(timeout: .patience))
            #expect(client.state == .live(version: 5))
            #expect(client.session(unitID: "u").value(.newCheckout) == true)
            client.shutdown()
            var states: [ClientState] = []
            for await update in updates { states.append(update.state) }
            #expect(!states.contains(.live(version: 4)))
        }
    }

    @Test func patchWithAnotherBaseFetchesTheDocument() async throws {
        let body = Docs.bytes(version: 12, Docs.flag("new-checkout", true))
        let transport = ScriptedTransport { request in
            (TransportHead(status: 200, headers: ["etag": "\"12\""]), body)
        }
        let client = try makeClient(directory: nil, transport: transport)
        let stream = try await transport.openStream()
        stream.yield(.bytes(Docs.sse("put", id: 7, Docs.document(7, Docs.flag("new-checkout", false)))))
        try await eventually("v7") { client.state == .live(version: 7) }
        stream.yield(
            .bytes(
                Docs.sse("patch", id: 12, Docs.patch(version: 12, base: 11, flags: [Docs.flag("new-checkout", true)]))))
        try await eventually("v12") { client.state == .live(version: 12) }
        #expect(transport.fetches.count == 1)
        #expect(transport.fetches.first?.url.absoluteString == "http://flags.test/v1/sets/ios-prod")
        #expect(client.session(unitID: "u").value(.newCheckout) == true)
        #expect(transport.streamRequests.count == 1)  // the stream stayed open
        client.shutdown()
    }

    @Test func streamRequestCarriesTheKeyAndLastEventID() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Docs.bytes(version: 4, Docs.flag("new-checkout", true)), version: 4)
            let transport = ScriptedTransport()
            let client = try makeClient(directory: directory, transport: transport)
            let stream = try await transport.stream(0)
            let request = try #require(transport.streamRequests.first)
            #expect(request.url.absoluteString == "http://flags.test/v1/sets/ios-prod/stream")
            #expect(request.headers["Authorization"] == "Bearer sdk-secret")
            #expect(request.headers["Accept"] == "text/event-stream")
            #expect(request.headers["Last-Event-ID"] == "4")
            // The stream opened, but a newer set may be on its way: still cached.
            stream.yield(eventStreamHead)
            #expect(await client.ready(timeout: .milliseconds(100)) == false)
            #expect(client.state == .cached(version: 4))
            // The server says nothing newer (its comment on connect, or a heartbeat): the cached set is live.
            stream.yield(.bytes(Array(": current\n\n".utf8)))
            try await eventually("live v4") { client.state == .live(version: 4) }
            #expect(await client.ready(timeout: .seconds(1)))
            // The connection drops: stale, then a reconnect with the same Last-Event-ID.
            stream.finish()
            try await eventually("stale") { if case .stale = client.state { true } else { false } }
            _ = try await transport.stream(1)
            #expect(transport.streamRequests[1].headers["Last-Event-ID"] == "4")
            client.shutdown()
        }
    }

    @Test func invalidDocumentNeverReplacesTheGoodOne() async throws {
        try await withTemporaryDirectory { directory in
            let good = Docs.bytes(version: 4, Docs.flag("new-checkout", true))
            try seedCache(directory, good, version: 4)
            let logs = LogSink()
            let transport = ScriptedTransport()
            let client = try makeClient(directory: directory, transport: transport) { $0.logger = logs.logger }
            let stream = try await transport.openStream()
            // A rule naming a cohort that does not exist: invalid.
            let invalid =
                #"{"schema":1,"set":"ios-prod","version":5,"flags":{"new-checkout":{"type":"bool","default":false,"rules":[{"name":"r","cohort":"nope","value":true}]}}}"#
            stream.yield(.bytes(Docs.sse("put", id: 5, invalid)))
            _ = try await transport.stream(1)  // bad data: reconnect
            let second = try await transport.stream(1)
            second.yield(eventStreamHead)
            second.yield(.bytes(Docs.sse("put", id: 6, "{broken json")))
            _ = try await transport.stream(2)
            #expect(client.state.version == nil || client.state.version == 4)
            #expect(client.session(unitID: "u").detail(.newCheckout).version == 4)
            #expect(try client.core.cache?.document(set: "ios-prod")?.bytes == good)
            #expect(logs.messages.filter { $0.message.contains("ignored a document") }.count == 2)
            client.shutdown()
        }
    }

    @Test func pollingSendsTheETagAndHandles304() async throws {
        let body = Docs.bytes(version: 3, Docs.flag("new-checkout", true))
        let transport = ScriptedTransport { request in
            if request.headers["If-None-Match"] == "\"3\"" { return (TransportHead(status: 304, headers: [:]), []) }
            return (TransportHead(status: 200, headers: ["etag": "\"3\""]), body)
        }
        let client = try makeClient(directory: nil, transport: transport, refresh: .poll)
        try await eventually("three polls") { transport.fetches.count >= 3 }
        #expect(transport.fetches[0].headers["If-None-Match"] == nil)
        #expect(transport.fetches[1].headers["If-None-Match"] == "\"3\"")
        #expect(transport.fetches.allSatisfy { $0.headers["Authorization"] == "Bearer sdk-secret" })
        #expect(client.state == .live(version: 3))
        client.shutdown()
    }

    @Test func longPollAsksTheServerToWait() async throws {
        let body = Docs.bytes(version: 3, Docs.flag("new-checkout", true))
        let transport = ScriptedTransport { request in
            request.headers["If-None-Match"] == nil
                ? (TransportHead(status: 200, headers: [:]), body) : (TransportHead(status: 304, headers: [:]), [])
        }
        let client = try makeClient(directory: nil, transport: transport, refresh: .longPoll) { $0.longPollWait = 20 }
        try await eventually("two polls") { transport.fetches.count >= 2 }
        #expect(transport.fetches[0].url.absoluteString == "http://flags.test/v1/sets/ios-prod")
        #expect(transport.fetches[1].url.absoluteString == "http://flags.test/v1/sets/ios-prod?wait=20")
        #expect(transport.fetches[1].timeout == 35)
        client.shutdown()
    }

    @Test(arguments: [401, 403])
    func unauthorizedStopsAndIsReported(_ status: Int) async throws {
        let logs = LogSink()
        let transport = ScriptedTransport { _ in (TransportHead(status: status, headers: [:]), []) }
        let client = try makeClient(directory: nil, transport: transport, refresh: .poll) { $0.logger = logs.logger }
        try await eventually("reported") { logs.messages.contains { $0.level == .error } }
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(transport.fetches.count == 1)
        #expect(logs.messages.contains { $0.message.contains("HTTP \(status)") })
        #expect(!logs.messages.contains { $0.message.contains("sdk-secret") })
        client.shutdown()
    }

    @Test func streamNotFoundFallsBackToPolling() async throws {
        let body = Docs.bytes(version: 2, Docs.flag("new-checkout", true))
        let transport = ScriptedTransport { _ in (TransportHead(status: 200, headers: [:]), body) }
        let client = try makeClient(directory: nil, transport: transport)
        let stream = try await transport.stream(0)
        stream.yield(.head(TransportHead(status: 404, headers: [:])))
        try await eventually("live by polling") { client.state == .live(version: 2) }
        client.shutdown()
    }

    @Test func serverDateCorrectsTheClock() async throws {
        // The flag expires one hour after the local clock's now: with the server an hour and a minute ahead, it
        // has expired and serves its expired value.
        var flag = Docs.flag("new-checkout", false)
        flag.expiresAt = Docs.start.addingTimeInterval(3600)
        flag.expiredValue = .bool(true)
        let body = Docs.set(version: 1, flags: [flag]).encoded()
        let serverNow = ISO8601.format(Docs.start.addingTimeInterval(3660))
        let transport = ScriptedTransport { _ in
            (TransportHead(status: 200, headers: ["date": Self.httpDate(serverNow)]), body)
        }
        let client = try makeClient(directory: nil, transport: transport, refresh: .poll)
        try await eventually("live") { client.state == .live(version: 1) }
        let detail = client.session(unitID: "u").detail(.newCheckout)
        #expect(detail.value == true)
        #expect(detail.variant == "expired")
        client.shutdown()
    }

    @Test func updatesStreamReportsStateChanges() async throws {
        let transport = ScriptedTransport()
        let client = try makeClient(directory: nil, transport: transport)
        let updates = client.updates
        let stream = try await transport.openStream()
        stream.yield(.bytes(Docs.sse("put", id: 1, Docs.document(1, Docs.flag("new-checkout", true)))))
        var iterator = updates.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first == FlagClientUpdate(state: .live(version: 1), version: 1))
        client.shutdown()
    }

    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", "1994-11-06T08:49:37Z"),
        ("Tue, 01 Dec 2026 23:00:00 GMT", "2026-12-01T23:00:00Z"),
    ])
    func httpDates(_ text: String, _ iso: String) {
        #expect(parseHTTPDate(text) == ISO8601.parse(iso))
    }

    @Test func badHTTPDatesAreIgnored() {
        #expect(parseHTTPDate("yesterday") == nil)
        #expect(parseHTTPDate("Sun, 06 Foo 1994 08:49:37 GMT") == nil)
    }

    static func httpDate(_ iso: String) -> String {
        // 2026-11-29T13:01:00Z → Sun, 29 Nov 2026 13:01:00 GMT (the weekday is not checked by the reader).
        let parts = iso.dropLast().split(separator: "T")
        let date = parts[0].split(separator: "-")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "Sun, \(date[2]) \(months[Int(date[1])! - 1]) \(date[0]) \(parts[1]) GMT"
    }
}

@Suite(.live) struct ClientBackoffTests {
    @Test(arguments: [0.0, 0.5, 0.99])
    func failuresBackOffWithTheInjectedJitter(_ random: Double) async throws {
        let sleeps = Locked<[Double]>([])
        let transport = ScriptedTransport { _ in (TransportHead(status: 503, headers: [:]), []) }
        let client = try makeClient(
            directory: nil, transport: transport, refresh: .poll, sleeps: sleeps, random: random)
        try await eventually("seven failures") { sleeps.withLock { $0.count >= 7 } }
        client.shutdown()
        let observed = Array(sleeps.withLock { $0 }.prefix(7))
        let expected = [1.0, 2, 4, 8, 16, 30, 30].map { min(30, $0 * (0.5 + random)) }
        for (delay, wanted) in zip(observed, expected) { #expect(abs(delay - wanted) < 1e-9) }
    }
}

@Suite(.live) struct ConcurrencyTests {
    @Test func readsFromManyTasksWhileSetsAndKillsArrive() async throws {
        let transport = ScriptedTransport()
        let client = try makeClient(directory: nil, transport: transport)
        let stream = try await transport.openStream()
        func put(_ version: Int, killed: Bool) {
            let document = Docs.document(version, Docs.flag("new-checkout", true, killed: killed))
            stream.yield(.bytes(Docs.sse("put", id: version, document)))
        }
        put(1, killed: false)
        try await eventually("v1") { client.state == .live(version: 1) }
        let session = client.session(unitID: "u")
        let results = await withTaskGroup(of: [Bool].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var values: [Bool] = []
                    for _ in 0..<2_000 {
                        values.append(session.value(.newCheckout))
                        _ = client.session(unitID: "other").value(.newCheckout)
                    }
                    return values
                }
            }
            for version in 2...20 { put(version, killed: version == 10) }
            var all: [[Bool]] = []
            for await values in group { all.append(values) }
            return all
        }
        try await eventually("v20") { client.state == .live(version: 20) }
        // Each reader sees the frozen value, then (once killed) the kill value, never anything else afterwards.
        for values in results {
            if let firstOff = values.firstIndex(of: false) { #expect(values[firstOff...].allSatisfy { !$0 }) }
        }
        #expect(session.detail(.newCheckout).reason == .disabled)
        #expect(client.session(unitID: "u").detail(.newCheckout).version == 20)
        client.shutdown()
    }
}
