import FlagCore
import Foundation
import Testing

@testable import FlagClient

/// The counts kept between failed reports: merged, bounded, and cut to the size of a report.
@Suite struct TelemetryBacklogTests {
    static let small = TelemetryBacklog.Bounds(
        maxFlags: 2, maxVariants: 2, maxReasons: 2, maxCells: 5, maxNameBytes: 16, maxCount: 1_000)

    @Test func mergesNewerCountsIntoTheKeptOnes() {
        var backlog = TelemetryBacklog()
        backlog.merge(["checkout": ["on": ["TARGETING_MATCH": 2]], "banner": ["": ["STATIC": 1]]])
        backlog.merge(["checkout": ["on": ["TARGETING_MATCH": 3], "off": ["DEFAULT": 1]]])
        #expect(
            backlog.counts == [
                "checkout": ["on": ["TARGETING_MATCH": 5], "off": ["DEFAULT": 1]], "banner": ["": ["STATIC": 1]],
            ])
        #expect(backlog.cells == 3)
        #expect(backlog.dropped == 0)
    }

    /// Past each bound the counts are dropped and counted, and the counts kept still grow.
    @Test func boundsDropAndCountWhatTheyLeaveOut() {
        var backlog = TelemetryBacklog(bounds: Self.small)
        backlog.merge(["a": ["x": ["R1": 1, "R2": 1]], "b": ["": ["R1": 1]]])
        // A third flag, a third variant of `a`, a third reason of `a.x`, a name over 16 bytes, an empty flag key.
        backlog.merge(["c": ["": ["R1": 4]]])
        backlog.merge(["a": ["y": ["R1": 1]]])
        backlog.merge(["a": ["z": ["R1": 5]]])
        backlog.merge(["a": ["x": ["R3": 6]]])
        backlog.merge(["b": ["a-very-long-variant": ["R1": 7]]])
        backlog.merge(["": ["": ["R1": 9]]])
        #expect(backlog.counts == ["a": ["x": ["R1": 1, "R2": 1], "y": ["R1": 1]], "b": ["": ["R1": 1]]])
        #expect(backlog.dropped == 4 + 5 + 6 + 7 + 9)
        // Cells: four kept; the fifth fits, the sixth does not.
        backlog.merge(["b": ["v": ["R1": 1]]])
        backlog.merge(["b": ["v": ["R2": 8]]])
        #expect(backlog.cells == 5)
        #expect(backlog.dropped == 31 + 8)
        // Counts already kept still add up, saturating at the largest count a report may carry.
        backlog.merge(["a": ["x": ["R1": 2_000]]])
        #expect(backlog.counts["a"]?["x"]?["R1"] == 1_000)
        backlog.resetDropped()
        #expect(backlog.dropped == 0)
    }

    /// The server refuses a report with a control character in a name; a rule's name (the variant) may have one,
    /// and the app's flag keys are its own: such names are kept escaped, so the counts still reach the server.
    @Test func namesWithControlCharactersAreKeptEscapedAndTheReportIsTaken() throws {
        var backlog = TelemetryBacklog()
        backlog.merge(["checkout": ["beta\u{1B}]0;pwned\u{7}": ["TARGETING_MATCH": 2], "on": ["SPLIT": 1]]])
        backlog.merge([
            "k\u{9B}2J": ["": ["DEFAULT": 3]], "checkout": ["beta\u{1B}]0;pwned\u{7}": ["TARGETING_MATCH": 1]],
        ])
        #expect(
            backlog.counts == [
                "checkout": [#"beta\e]0;pwned\u0007"#: ["TARGETING_MATCH": 3], "on": ["SPLIT": 1]],
                #"k\u009b2J"#: ["": ["DEFAULT": 3]],
            ])
        #expect(backlog.dropped == 0)
        let report = TelemetryReport(instance: "in_1", sdk: FlagClient.sdk)
        let sent = try TelemetryReport.decode(backlog.body(for: report, maxBytes: 256 * 1024).bytes)
        #expect(sent.counts == backlog.counts)
    }

    @Test func removingSentFlagsFreesTheirCells() {
        var backlog = TelemetryBacklog(bounds: Self.small)
        backlog.merge(["a": ["x": ["R1": 1, "R2": 1]], "b": ["": ["R1": 1]]])
        backlog.remove(["a"])
        #expect(backlog.counts == ["b": ["": ["R1": 1]]])
        #expect(backlog.cells == 1)
        backlog.merge(["c": ["": ["R1": 1]]])
        #expect(backlog.dropped == 0)
    }

    /// A whole backlog goes in one report when it fits; a larger one is cut at whole flags, the rest left for the
    /// next report, and every part is a report the server decodes.
    @Test func aReportCarriesAsManyWholeFlagsAsFit() throws {
        var backlog = TelemetryBacklog()
        var counts: TelemetryReport.Counts = [:]
        for index in 0..<300 {
            counts["flag-\(index)-" + String(repeating: "x", count: 100)] = ["variant": ["TARGETING_MATCH": index + 1]]
        }
        backlog.merge(counts)
        let report = TelemetryReport(instance: "in_1", sdk: FlagClient.sdk)
        let whole = backlog.body(for: report, maxBytes: 1_000_000)
        #expect(whole.flags.count == 300)
        #expect(try TelemetryReport.decode(whole.bytes).counts == counts)

        var sent: TelemetryReport.Counts = [:]
        var parts = 0
        while !backlog.isEmpty {
            let part = backlog.body(for: report, maxBytes: 8_192)
            #expect(part.bytes.count <= 8_192)
            #expect(!part.flags.isEmpty)
            let decoded = try TelemetryReport.decode(part.bytes)
            #expect(Set(decoded.counts.keys) == part.flags)
            sent.merge(decoded.counts) { first, _ in first }
            backlog.remove(part.flags)
            parts += 1
        }
        #expect(sent == counts)
        #expect(parts > 1)
    }
}
