import FlagCore
import Foundation
import Testing

@testable import FlagCLI

/// The times `--at` reads (docs/reviews.md): RFC 3339, `+DURATION` from when the command line was read, and
/// `today`/`tomorrow HH:MM` in the zone of `TZ`; each shown in that zone and in UTC.
@Suite("flagctl: the time of a scheduled change")
struct ScheduleTimeTests {
    /// 2026-12-05T22:30:00Z: a Saturday evening in UTC, already Sunday in Tokyo.
    static let readAt = Date(timeIntervalSince1970: 1_796_509_800)

    static func when(_ text: String, zone: String) throws -> Date {
        guard
            case .run(_, var arguments, _) = try ArgumentParser(commands: FlagCTL.commands).parse(
                ["changes", "schedule", "1", "--at", text], environment: [:])
        else { throw CLIError.failure("not a command") }
        arguments.readAt = readAt
        arguments.timeZone = try #require(TimeZone(identifier: zone))
        return try Typed.when(text, option: "at", arguments)
    }

    @Test func relativeAndLocalTimesCountFromTheCommandLine() throws {
        #expect(try Self.when("+2h", zone: "UTC") == Self.readAt.addingTimeInterval(7_200))
        #expect(try ISO8601.format(Self.when("tomorrow 09:00", zone: "Europe/Berlin")) == "2026-12-06T08:00:00Z")
        #expect(try ISO8601.format(Self.when("today 23:45", zone: "UTC")) == "2026-12-05T23:45:00Z")
        // Tokyo's today is already the 6th.
        #expect(try ISO8601.format(Self.when("today 09:00", zone: "Asia/Tokyo")) == "2026-12-06T00:00:00Z")
        #expect(
            try ISO8601.format(Self.when("2026-12-07T09:00:00+01:00", zone: "UTC")) == "2026-12-07T08:00:00Z")
    }

    @Test(arguments: [
        ("today 08:00", "is not in the future"), ("tomorrow 9", "needs a time of day as HH:MM"),
        ("tomorrow 25:00", "needs a time of day as HH:MM"), ("next week", "is not a time"),
        ("2026-12-01T09:00:00Z", "is not in the future"), ("+soon", "is not a duration"),
    ])
    func aTimeThatIsNotToComeIsRefusedSayingWhy(text: String, reason: String) throws {
        do {
            _ = try Self.when(text, zone: "UTC")
            Issue.record("\(text) was read")
        } catch let error as CLIError {
            #expect(error.diagnostic.first?.contains(reason) == true, "\(error.diagnostic)")
        }
    }

    @Test func aTimeIsShownInTheZoneAndInUTC() throws {
        let date = Date(timeIntervalSince1970: 1_796_634_000)  // 2026-12-07T09:00:00Z
        #expect(
            Shown.local(date, try #require(TimeZone(identifier: "Europe/Berlin")))
                == "2026-12-07 10:00 Europe/Berlin (09:00 UTC)"
        )
        #expect(Shown.local(date, try #require(TimeZone(identifier: "UTC"))) == "2026-12-07 09:00 UTC")
    }
}
