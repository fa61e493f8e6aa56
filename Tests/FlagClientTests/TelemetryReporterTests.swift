import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// The reports a client sends, on a scripted transport and virtual time: the instance id's round trip, when reports
/// go, and what becomes of their counts when the server does not take them.
@Suite(.live) struct TelemetryReporterTests {
    static let checkout = Docs.flag("new-checkout", true)
    static let darkMode = Docs.flag("dark-mode", false)

    /// The bootstrap set every fixture starts from, so that sessions evaluate before the server answers.
    static func bootstrap(_ configuration: inout FlagClient.Configuration) {
        configuration.bootstrap = Docs.bytes(version: 6, checkout, darkMode)
    }

    // MARK: - The instance id

    @Test func theIssuedIDGoesBackWhenTheStreamReconnects() async throws {
        let fixture = try TelemetryFixture()
        defer { fixture.client.shutdown() }
        let first = try await fixture.connect(instance: "in_1", version: 7, Self.checkout)
        #expect(fixture.transport.streamRequests[0].headers["Flagstaff-Instance"] == "new")
        first.stream.finish()
        let second = try await fixture.transport.stream(1)
        #expect(fixture.transport.streamRequests[1].headers["Flagstaff-Instance"] == "in_1")
        // The server issues another id: it replaces the first.
        second.yield(
            .head(
                TransportHead(
                    status: 200, headers: ["content-type": "text/event-stream", "flagstaff-instance": "in_2"])))
        second.finish()
        let third = try await fixture.transport.stream(2)
        #expect(fixture.transport.streamRequests[2].headers["Flagstaff-Instance"] == "in_2")
        // An id that could break a request header is never taken; neither is one on an error answer.
        third.yield(
            .head(
                TransportHead(
                    status: 200,
                    headers: ["content-type": "text/event-stream", "flagstaff-instance": "in_3\r\nX-Evil: 1"])))
        third.finish()
        let fourth = try await fixture.transport.stream(3)
        fourth.yield(.head(TransportHead(status: 503, headers: ["flagstaff-instance": "in_4"])))
        _ = try await fixture.transport.stream(4)
        #expect(fixture.transport.streamRequests[3].headers["Flagstaff-Instance"] == "in_2")
        #expect(fixture.transport.streamRequests[4].headers["Flagstaff-Instance"] == "in_2")
    }

    /// Polls ask for a first id (`new`), then send back the id of the last answer that had one, 200 or 304, with
    /// telemetry off too: the server then counts the connection as one that does not report.
    @Test func pollsSendBackTheLastIssuedIDWithTelemetryOff() async throws {
        let document = Docs.bytes(version: 7, Self.checkout)
        let answers = Locked<[(TransportHead, [UInt8])]>([
            (TransportHead(status: 200, headers: ["etag": "\"7\"", "flagstaff-instance": "in_a"]), document),
            (TransportHead(status: 304, headers: ["etag": "\"7\"", "flagstaff-instance": "in_b"]), []),
            (TransportHead(status: 304, headers: ["etag": "\"7\""]), []),
        ])
        let fixture = try TelemetryFixture(
            refresh: .poll,
            document: {
                answers.withLock { $0.isEmpty ? (TransportHead(status: 304, headers: [:]), []) : $0.removeFirst() }
            },
            configure: { $0.telemetry = .off })
        defer { fixture.client.shutdown() }
        #expect(fixture.client.core.telemetry == nil)
        for poll in 1...4 {
            try await eventually("poll \(poll)") { fixture.transport.fetches.count >= poll }
            fixture.time.release()
        }
        let sent = fixture.transport.fetches.map { $0.headers["Flagstaff-Instance"] }
        #expect(Array(sent.prefix(4)) == ["new", "in_a", "in_b", "in_b"])
        #expect(fixture.transport.fetches.allSatisfy { $0.method == "GET" })
    }

    // MARK: - When reports go

    /// After a new version: within 1 s plus `random` × 2 s (1.5 s here), with the version, when it was applied, who
    /// the client is, what it can evaluate, and the evaluations since launch; then every period.
    @Test func aNewVersionIsReportedOneSecondPlusJitterAfterItIsApplied() async throws {
        let fixture = try TelemetryFixture(random: 0.25, configure: Self.bootstrap)
        defer { fixture.client.shutdown() }
        let session = fixture.client.session(unitID: "u")
        #expect(session.value(.newCheckout) == true)
        #expect(session.value(.newCheckout) == true)
        let applied = try await fixture.connect(instance: "in_1", version: 7, Self.checkout, Self.darkMode)

        let sent = try await fixture.report(1)
        #expect(sent.at == applied.appliedAt.addingTimeInterval(1.5))
        #expect(fixture.time.sleeps.contains(1.5))
        #expect(sent.request.method == "POST")
        #expect(sent.request.url.absoluteString == "http://flags.test/v1/sets/ios-prod/telemetry")
        #expect(sent.request.headers["Authorization"] == "Bearer sdk-secret")
        #expect(sent.request.headers["Content-Type"] == "application/json")
        #expect(
            sent.report
                == TelemetryReport(
                    instance: "in_1",
                    sdk: TelemetryReport.Software(name: "FlagClient", version: FlagClient.sdk.version),
                    app: TelemetryReport.Software(name: "Shop", version: "5.3.0"), version: 7,
                    appliedAt: applied.appliedAt, capabilities: .current,
                    counts: ["new-checkout": ["default": ["STATIC": 1]]]))

        // Nothing more until the period has passed; then a report with what was evaluated since.
        _ = fixture.client.session(unitID: "v").value(.darkMode)
        try await fixture.time.waitUntilHeld("the reporter waits a period")
        #expect(fixture.reports.count == 1)
        fixture.time.release()
        let next = try await fixture.report(2)
        #expect(next.at == sent.at.addingTimeInterval(60))
        #expect(next.report.counts == ["dark-mode": ["default": ["STATIC": 1]]])
        #expect(next.report.version == 7)
    }

    /// Without an id nothing can be reported: the counts wait for the first id.
    @Test func nothingIsSentBeforeTheServerIssuesAnID() async throws {
        let fixture = try TelemetryFixture(configure: Self.bootstrap)
        defer { fixture.client.shutdown() }
        _ = fixture.client.session(unitID: "u").value(.newCheckout)
        let stream = try await fixture.connect(instance: nil, version: 7, Self.checkout).stream
        try await eventually("the after-apply wait") { fixture.time.sleeps.contains(2) }
        try await fixture.time.waitUntilHeld("the after-apply report found no id")
        fixture.time.release()
        try await fixture.time.waitUntilHeld("a period later")
        #expect(fixture.reports.isEmpty)
        stream.finish()
        let next = try await fixture.transport.stream(1)
        next.yield(
            .head(
                TransportHead(
                    status: 200, headers: ["content-type": "text/event-stream", "flagstaff-instance": "in_1"])))
        next.yield(.bytes(Docs.sse("put", id: 8, Docs.document(8, Self.checkout))))
        let sent = try await fixture.report(1)
        #expect(sent.report.instance == "in_1")
        #expect(sent.report.version == 8)
        #expect(sent.report.counts == ["new-checkout": ["default": ["STATIC": 1]]])
    }

    // MARK: - When the server does not take a report

    /// 500: the counts are kept, merged with the newer ones, and sent again at the next period.
    @Test func aFailedReportIsMergedWithNewerCountsAndSentAgain() async throws {
        let fixture = try TelemetryFixture(answers: [reportAnswer(500)], configure: Self.bootstrap)
        defer { fixture.client.shutdown() }
        _ = fixture.client.session(unitID: "a").value(.newCheckout)
        try await fixture.connect(instance: "in_1", version: 7, Self.checkout, Self.darkMode)
        let failed = try await fixture.report(1)
        #expect(failed.report.counts == ["new-checkout": ["default": ["STATIC": 1]]])

        let session = fixture.client.session(unitID: "b")
        _ = session.value(.newCheckout)
        _ = session.value(.darkMode)
        fixture.time.release()
        let retried = try await fixture.report(2)
        #expect(retried.at == failed.at.addingTimeInterval(60))
        #expect(
            retried.report.counts == [
                "new-checkout": ["default": ["STATIC": 2]], "dark-mode": ["default": ["STATIC": 1]],
            ])

        // Accepted: those counts are gone.
        fixture.time.release()
        #expect(try await fixture.report(3).report.counts == [:])
    }

    /// A server away for periods on end: the counts kept stay within their bounds, what is left out is counted, and
    /// the client logs it once when the outage starts and once, with the number, when a report gets through.
    @Test func aLongOutageKeepsBoundedCountsAndLogsTheDropsOnce() async throws {
        let time = VirtualTime()
        let received = Locked<[TelemetryReport]>([])
        let transport = ScriptedTransport { request in
            let report = try TelemetryReport.decode(request.body ?? [])
            let count = received.withLock { reports in
                reports.append(report)
                return reports.count
            }
            return count <= 3 ? reportAnswer(500) : reportAnswer(204)
        }
        let logs = LogSink()
        var configuration = FlagClient.Configuration(
            server: URL(string: "http://flags.test")!, set: "ios-prod", sdkKey: "sdk-secret", cacheDirectory: nil)
        configuration.logger = logs.logger
        let dependencies = ClientDependencies(
            now: { time.clock.now }, random: { 0.5 }, sleep: time.sleep, transport: transport)
        let bounds = TelemetryBacklog.Bounds(
            maxFlags: 4, maxVariants: 64, maxReasons: 16, maxCells: 100, maxNameBytes: 256, maxCount: 1_000)
        let reporter = TelemetryReporter(
            configuration: configuration, period: 60, dependencies: dependencies, applied: (3, Docs.start),
            bounds: bounds)
        let loop = Task { await reporter.run() }
        defer { loop.cancel() }
        reporter.instanceIssued("in_1")
        for period in 0..<4 {
            for flag in 0..<3 {
                let key = "outage-\(period)-\(flag)"
                reporter.counter.count(key, slot: FlagSlots.slot(for: key), variant: nil, reason: .static)
            }
            try await time.waitUntilHeld("period \(period)")
            time.release()
            try await eventually("report \(period + 1)") {
                received.withLock { $0.count } > period
            }
        }
        let reports = received.withLock { $0 }
        // The first three periods' reports failed; the fourth carries what the bounds kept: the first period's
        // three flags and one of the second's.
        #expect(reports.map(\.counts.count) == [3, 4, 4, 4])
        #expect(Set(reports[0].counts.keys).isSubset(of: Set(reports[3].counts.keys)))
        #expect(reports[3].counts.keys.filter { $0.hasPrefix("outage-1-") }.count == 1)
        #expect(reports.allSatisfy { $0.version == 3 && $0.appliedAt == Docs.start })
        let warnings = logs.messages.filter { $0.message.contains("reached their bound") }
        #expect(warnings.count == 1)
        #expect(logs.messages.contains { $0.message.contains("8 evaluations were left out") })
    }

    /// 422 `unknown_instance`: nothing is sent under that id again; the kept counts go, with the newer ones, once the
    /// server issues an id on the next connection.
    @Test func anUnknownInstanceKeepsTheCountsForTheNextID() async throws {
        let fixture = try TelemetryFixture(
            answers: [reportAnswer(422, error: "unknown_instance")], configure: Self.bootstrap)
        defer { fixture.client.shutdown() }
        _ = fixture.client.session(unitID: "a").value(.newCheckout)
        let first = try await fixture.connect(instance: "in_1", version: 7, Self.checkout, Self.darkMode)
        #expect(try await fixture.report(1).report.counts == ["new-checkout": ["default": ["STATIC": 1]]])
        _ = fixture.client.session(unitID: "b").value(.darkMode)

        // Periods pass: no report.
        try await fixture.time.pass(2, "period")
        try await fixture.time.waitUntilHeld("period 3")
        #expect(fixture.reports.count == 1)

        first.stream.finish()
        let next = try await fixture.transport.stream(1)
        #expect(fixture.transport.streamRequests[1].headers["Flagstaff-Instance"] == "in_1")
        let reconnected = fixture.time.clock.now
        next.yield(
            .head(
                TransportHead(
                    status: 200, headers: ["content-type": "text/event-stream", "flagstaff-instance": "in_9"])))
        next.yield(.bytes(Array(": current\n\n".utf8)))
        let resent = try await fixture.report(2)
        #expect(resent.report.instance == "in_9")
        #expect(resent.at == reconnected.addingTimeInterval(2))
        #expect(
            resent.report.counts == [
                "new-checkout": ["default": ["STATIC": 1]], "dark-mode": ["default": ["STATIC": 1]],
            ])
        #expect(fixture.logs.messages.contains { $0.message.contains("does not know this instance") })
    }

    /// 429 with `Retry-After: 120`: no report for 120 s, not even for a new version; then one with the kept counts.
    @Test func retryAfterIsHonoured() async throws {
        let fixture = try TelemetryFixture(
            answers: [reportAnswer(429, error: "rate_limited", headers: ["retry-after": "120"])],
            configure: Self.bootstrap)
        defer { fixture.client.shutdown() }
        _ = fixture.client.session(unitID: "a").value(.newCheckout)
        let stream = try await fixture.connect(instance: "in_1", version: 7, Self.checkout).stream
        let throttled = try await fixture.report(1)
        // A new version meanwhile does not bring the report forward.
        let kill = Docs.patch(version: 8, base: 7, flags: [Docs.flag("new-checkout", true, killed: true)])
        stream.yield(.bytes(Docs.sse("patch", id: 8, kill)))
        try await eventually("v8") { fixture.client.state == .live(version: 8) }
        try await fixture.time.waitUntilHeld("first half of the wait")
        fixture.time.release()
        try await fixture.time.waitUntilHeld("second half")
        #expect(fixture.reports.count == 1)
        fixture.time.release()
        let sent = try await fixture.report(2)
        #expect(sent.at == throttled.at.addingTimeInterval(120))
        #expect(sent.report.version == 8)
        #expect(sent.report.counts == ["new-checkout": ["default": ["STATIC": 1]]])
    }

    /// 400: that report would never pass, so its counts are dropped (the next report carries only newer ones), and
    /// the refusal is logged once, with the server's reason.
    @Test func aRefusedReportIsDroppedAndLoggedOnce() async throws {
        let fixture = try TelemetryFixture(
            answers: [reportAnswer(400, error: "bad_request"), reportAnswer(400, error: "bad_request")],
            configure: Self.bootstrap)
        defer { fixture.client.shutdown() }
        _ = fixture.client.session(unitID: "a").value(.newCheckout)
        try await fixture.connect(instance: "in_1", version: 7, Self.checkout, Self.darkMode)
        #expect(try await fixture.report(1).report.counts == ["new-checkout": ["default": ["STATIC": 1]]])
        fixture.time.release()
        _ = try await fixture.report(2)
        _ = fixture.client.session(unitID: "b").value(.darkMode)
        fixture.time.release()
        #expect(try await fixture.report(3).report.counts == ["dark-mode": ["default": ["STATIC": 1]]])
        let refusals = fixture.logs.messages.filter { $0.message.contains("refused a report") }
        #expect(refusals.count == 1)
        #expect(refusals.first?.message.contains("scripted") == true)
        #expect(!fixture.logs.messages.contains { $0.message.contains("sdk-secret") })
    }

    /// 401: the key may not report; reporting stops, and nothing more is sent.
    @Test func aRefusedKeyStopsReporting() async throws {
        let fixture = try TelemetryFixture(answers: [reportAnswer(401, error: "unauthorized")])
        defer { fixture.client.shutdown() }
        let stream = try await fixture.connect(instance: "in_1", version: 7, Self.checkout).stream
        _ = try await fixture.report(1)
        let kill = Docs.patch(version: 8, base: 7, flags: [Docs.flag("new-checkout", true, killed: true)])
        stream.yield(.bytes(Docs.sse("patch", id: 8, kill)))
        try await eventually("v8") { fixture.client.state == .live(version: 8) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(fixture.reports.count == 1)
        #expect(fixture.logs.messages.contains { $0.message.contains("sends no more") })
    }

    @Test func telemetryOffSendsNothing() async throws {
        let fixture = try TelemetryFixture(configure: { $0.telemetry = .off })
        defer { fixture.client.shutdown() }
        try await fixture.connect(instance: "in_1", version: 7, Self.checkout)
        _ = fixture.client.session(unitID: "u").value(.newCheckout)
        let stream = try await fixture.transport.stream(0)
        let kill = Docs.patch(version: 8, base: 7, flags: [Docs.flag("new-checkout", true, killed: true)])
        stream.yield(.bytes(Docs.sse("patch", id: 8, kill)))
        try await eventually("v8") { fixture.client.state == .live(version: 8) }
        // A report would have gone 2 s of virtual time (a millisecond) after each version.
        try await Task.sleep(for: .milliseconds(200))
        #expect(fixture.transport.fetches.isEmpty)
        #expect(fixture.time.sleeps.isEmpty)
    }

    /// Shutting the client down ends the reporter's loop, as it ends the refresh loop.
    @Test func shutdownStopsReporting() async throws {
        let fixture = try TelemetryFixture()
        try await fixture.connect(instance: "in_1", version: 7, Self.checkout)
        _ = try await fixture.report(1)
        try await fixture.time.waitUntilHeld("waiting a period")
        let cancelled = fixture.time.cancelled
        fixture.client.shutdown()
        try await eventually("the period's sleep cancelled") {
            fixture.time.cancelled > cancelled
        }
        fixture.time.release()
        try await Task.sleep(for: .milliseconds(100))
        #expect(fixture.reports.count == 1)
    }
}
