import FlagCore
import Foundation
import Testing

@testable import FlagClient

/// The reporter's decisions without I/O: times in seconds from 0, randomness as an argument.
@Suite struct TelemetryScheduleTests {
    /// A schedule of a 60 s period from 0 whose report went out and got `outcome` at `now`.
    static func answered(_ outcome: TelemetrySchedule.Outcome, at now: Double) -> TelemetrySchedule {
        var schedule = TelemetrySchedule(period: 60, now: 0)
        schedule.sending()
        schedule.record(outcome, now: now)
        return schedule
    }

    @Test func reportsEveryPeriod() {
        var schedule = TelemetrySchedule(period: 60, now: 0)
        #expect(schedule.delay(now: 0) == 60)
        #expect(schedule.delay(now: 45) == 15)
        schedule.sending()
        schedule.record(.accepted(more: false), now: 60.5)
        #expect(schedule.delay(now: 60.5) == 60)
    }

    /// 1 s plus up to 2 s of jitter after a new version, so that clients that got a kill together do not report
    /// together.
    @Test(arguments: [(0.0, 1.0), (0.25, 1.5), (0.5, 2.0), (0.999, 2.998)])
    func aNewVersionIsReportedWithinOneSecondPlusJitter(random: Double, delay: Double) {
        var schedule = TelemetrySchedule(period: 60, now: 0)
        schedule.versionApplied(now: 10, random: random)
        #expect(abs((schedule.delay(now: 10) ?? 0) - delay) < 1e-9)
    }

    @Test func aVersionDoesNotPostponeADueReport() {
        var schedule = TelemetrySchedule(period: 60, now: 0)
        schedule.versionApplied(now: 59.5, random: 0.5)
        #expect(schedule.delay(now: 59.5) == 0.5)
    }

    @Test func aVersionAppliedWhileAReportIsOnItsWayIsReportedSoonAfter() {
        var schedule = TelemetrySchedule(period: 60, now: 0)
        schedule.sending()
        schedule.versionApplied(now: 60.2, random: 0)
        schedule.record(.accepted(more: false), now: 60.4)
        #expect(abs((schedule.delay(now: 60.4) ?? 0) - 0.8) < 1e-9)
    }

    @Test func failuresAndRefusedReportsRetryAtTheNextPeriod() {
        for outcome in [TelemetrySchedule.Outcome.failed, .rejected] {
            #expect(Self.answered(outcome, at: 60).delay(now: 60) == 60)
        }
    }

    @Test func aBacklogLargerThanOneReportFollowsAfterTheServersInterval() {
        #expect(Self.answered(.accepted(more: true), at: 60).delay(now: 60) == TelemetrySchedule.backlogInterval)
    }

    /// A `Retry-After` is a floor: neither the period nor a new version brings the next report before it.
    @Test func retryAfterIsAFloor() {
        var schedule = Self.answered(.throttled(retryAfter: 120), at: 60)
        #expect(schedule.delay(now: 60) == 120)
        schedule.versionApplied(now: 70, random: 0)
        #expect(schedule.delay(now: 70) == 110)
        schedule.sending()
        schedule.record(.accepted(more: false), now: 180)
        #expect(schedule.delay(now: 180) == 60)
    }

    @Test func retryAfterIsHonouredUpToTenMinutes() {
        #expect(Self.answered(.throttled(retryAfter: 86_400), at: 0).delay(now: 0) == 600)
    }

    /// After 422 `unknown_instance` nothing is sent, not even for a new version, until the server issues an id; then
    /// the kept counts go soon.
    @Test func anUnknownInstanceWaitsForTheNextID() {
        var schedule = Self.answered(.unknownInstance, at: 60)
        #expect(schedule.delay(now: 60) == .infinity)
        schedule.versionApplied(now: 100, random: 0)
        #expect(schedule.delay(now: 1_000) == .infinity)
        schedule.instanceIssued(now: 1_000, random: 0.5)
        #expect(schedule.delay(now: 1_000) == 2)
    }

    @Test func anIDIssuedWhileReportingChangesNothing() {
        var schedule = TelemetrySchedule(period: 60, now: 0)
        schedule.instanceIssued(now: 30, random: 0)
        #expect(schedule.delay(now: 30) == 30)
    }

    @Test func aRefusalStopsReporting() {
        var schedule = Self.answered(.refused, at: 60)
        #expect(schedule.delay(now: 60) == nil)
        schedule.versionApplied(now: 61, random: 0)
        #expect(schedule.delay(now: 61) == nil)
    }

    /// What each answer to a report means.
    @Test(arguments: [
        (204, nil, [:], TelemetrySchedule.Outcome.accepted(more: false)),
        (400, "bad_request", [:], .rejected),
        (413, nil, [:], .rejected),
        (422, "unknown_instance", [:], .unknownInstance),
        (422, "unprocessable", [:], .rejected),
        (429, "rate_limited", ["retry-after": "7"], .throttled(retryAfter: 7)),
        (429, "rate_limited", [:], .failed),
        (503, nil, ["retry-after": "30"], .throttled(retryAfter: 30)),
        (500, nil, [:], .failed),
        (502, nil, [:], .failed),
        (401, "unauthorized", [:], .refused),
        (403, nil, [:], .refused),
        (404, nil, [:], .refused),
    ])
    func answers(status: Int, error: String?, headers: [String: String], outcome: TelemetrySchedule.Outcome) {
        let (head, body) = reportAnswer(status, error: error, headers: headers)
        #expect(TelemetryReporter.outcome(head, body, more: false, localNow: Docs.start) == outcome)
    }

    @Test func anAnswerThatIsNotJSONIsReadByItsStatus() {
        let head = TransportHead(status: 422, headers: [:])
        #expect(TelemetryReporter.outcome(head, Array("<html>".utf8), more: false, localNow: Docs.start) == .rejected)
    }
}
