import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// Scheduled changes (docs/reviews.md): a change request with a time, applied by the server's scheduler once it is
/// due, once, even when the server was down at that time.
@Suite("Scheduled changes")
struct ScheduledChangeTests {
    static let set = ChangeRequestTests.set
    static let target = "\(set)/flags/search-timeout-ms/default"

    /// `?propose=…&at=` the harness clock plus `seconds`.
    static func at(_ harness: AppHarness, plus seconds: Double) -> String {
        ISO8601.format(harness.clock.now.addingTimeInterval(seconds))
    }

    static func change(_ harness: AppHarness, _ id: Int) throws -> TestResponse {
        try harness.send("GET", "\(set)/changes/\(id)")
    }

    @Test func aScheduledChangeAppliesOnceWhenItIsDueAndNotBefore() async throws {
        try await withHarness { harness in
            let id = try ChangeRequestTests.propose(
                harness, "POST", "\(Self.target)?at=\(Self.at(harness, plus: 60))", body: #"{"valueText":"900"}"#,
                token: harness.admin, title: "Longer")
            #expect(try Self.change(harness, id).json("change.state") == .string("scheduled"))
            harness.app.scheduler.pass()
            #expect(try Self.change(harness, id).json("change.state") == .string("scheduled"))
            #expect(harness.app.service.state("ios-prod")?.version == 1)

            harness.clock.advance(seconds: 60)
            harness.app.scheduler.pass()
            harness.settle()
            let applied = try Self.change(harness, id)
            #expect(try applied.json("change.state") == .string("applied"))
            #expect(try applied.json("change.appliedVersion") == .int(2))
            #expect(try applied.json("change.decidedBy") == .string("flagserver"))
            let flag = try harness.send("GET", "\(Self.set)/flags/search-timeout-ms")
            #expect(try flag.json("flag.default") == .int(900))
            let record = try harness.send("GET", "\(Self.set)/audit?limit=1")
            #expect(try record.json("records[0].action") == .string("change.apply"))
            #expect(try record.json("records[0].actor") == .string("flagserver"))
            #expect(try record.json("records[0].reason")?.text?.contains("scheduled for") == true)
            #expect(try record.json("records[0].reason")?.text?.contains("late") == false)

            harness.app.scheduler.pass()
            #expect(harness.app.service.state("ios-prod")?.version == 2)
            let metrics = try harness.send("GET", "/metrics").text
            #expect(metrics.contains("flagserver_scheduled_change_lateness_seconds_count 1"))
        }
    }

    @Test func withReviewsRequiredAScheduledChangeWaitsForItsApproval() async throws {
        try await withHarness { harness in
            #expect(try harness.send("PUT", "\(Self.set)/settings", body: #"{"reviews":"required"}"#).status == 200)
            let alice = try ChangeRequestTests.token(harness, "alice", role: "editor")
            let id = try ChangeRequestTests.propose(
                harness, "POST", "\(Self.target)?at=\(Self.at(harness, plus: 60))", body: #"{"valueText":"900"}"#,
                token: alice)
            harness.clock.advance(seconds: 120)
            harness.app.scheduler.pass()
            #expect(try Self.change(harness, id).json("change.state") == .string("open"))
            let approved = try harness.send("POST", "\(Self.set)/changes/\(id)/approve", body: "{}")
            #expect(try approved.json("state") == .string("scheduled"))
            harness.app.scheduler.pass()
            #expect(try Self.change(harness, id).json("change.state") == .string("applied"))
        }
    }

    @Test func aScheduledChangeCanBeRetimedOrWithdrawnUntilItApplies() async throws {
        try await withHarness { harness in
            let body = #"{"valueText":"900"}"#
            let id = try ChangeRequestTests.propose(
                harness, "POST", "\(Self.target)?at=\(Self.at(harness, plus: 60))", body: body, token: harness.admin)
            let later = Self.at(harness, plus: 600)
            let retimed = try harness.send(
                "POST", "\(Self.set)/changes/\(id)/schedule", body: #"{"at":"\#(later)","reason":"after lunch"}"#)
            #expect(try retimed.json("applyAt") == .string(later))
            let past = Self.at(harness, plus: -1)
            let refused = try harness.send("POST", "\(Self.set)/changes/\(id)/schedule", body: #"{"at":"\#(past)"}"#)
            #expect(try refused.json("error.path") == .string("at"))
            harness.clock.advance(seconds: 120)
            harness.app.scheduler.pass()
            #expect(try Self.change(harness, id).json("change.state") == .string("scheduled"))

            let withdrawn = try ChangeRequestTests.propose(
                harness, "POST", "\(Self.target)?at=\(Self.at(harness, plus: 10))", body: body, token: harness.admin)
            #expect(try harness.send("DELETE", "\(Self.set)/changes/\(withdrawn)", body: "{}").status == 200)
            harness.clock.advance(seconds: 600)
            harness.app.scheduler.pass()
            #expect(try Self.change(harness, withdrawn).json("change.state") == .string("withdrawn"))
            #expect(try Self.change(harness, id).json("change.state") == .string("applied"))
        }
    }

    @Test func aConflictAtItsTimeLeavesTheChangeFailed() async throws {
        try await withHarness { harness in
            let id = try ChangeRequestTests.propose(
                harness, "POST", "\(Self.target)?at=\(Self.at(harness, plus: 60))", body: #"{"valueText":"900"}"#,
                token: harness.admin)
            #expect(try harness.send("POST", Self.target, body: #"{"valueText":"1000"}"#).status == 200)
            harness.clock.advance(seconds: 60)
            harness.app.scheduler.pass()
            let failed = try Self.change(harness, id)
            #expect(try failed.json("change.state") == .string("failed"))
            #expect(try failed.json("change.failure")?.text?.contains("search-timeout-ms") == true)
            #expect(harness.app.service.state("ios-prod")?.version == 2)
        }
    }

    @Test func aServerDownAtTheTimeAppliesTheChangeWhenItComesBackAndSaysHowLate() async throws {
        try await withHarness { harness in
            let id = try ChangeRequestTests.propose(
                harness, "POST", "\(Self.target)?at=\(Self.at(harness, plus: 60))", body: #"{"valueText":"900"}"#,
                token: harness.admin)
            harness.clock.advance(seconds: 7_260)
            let restarted = try harness.reopened()
            restarted.scheduler.pass()
            let client = InProcessClient(handler: restarted.handler)
            let shown = try client.send("GET", "\(Self.set)/changes/\(id)", token: harness.admin)
            #expect(try shown.json("change.state") == .string("applied"))
            let record = try client.send("GET", "\(Self.set)/audit?limit=1", token: harness.admin)
            #expect(try record.json("records[0].reason")?.text?.contains("7200 s late") == true, "\(record.text)")
        }
    }

    @Test func aTimeMustBeInTheFutureAndGoWithAProposal() async throws {
        try await withHarness { harness in
            let body = #"{"valueText":"900"}"#
            let past = try harness.send("POST", "\(Self.target)?propose=x&at=\(Self.at(harness, plus: -5))", body: body)
            #expect(past.status == 400)
            #expect(try past.json("error.path") == .string("at"))
            let alone = try harness.send("POST", "\(Self.target)?at=\(Self.at(harness, plus: 60))", body: body)
            #expect(try alone.json("error.path") == .string("at"))
            let garbled = try harness.send("POST", "\(Self.target)?propose=x&at=tomorrow", body: body)
            #expect(try garbled.json("error.message")?.text?.contains("RFC 3339") == true)
            #expect(harness.app.service.state("ios-prod")?.version == 1)
        }
    }
}
