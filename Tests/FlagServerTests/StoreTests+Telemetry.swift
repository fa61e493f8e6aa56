import FlagAPI
import FlagServer
import FlagTestSupport
import Foundation
import Testing

/// The telemetry part of the `FlagStore` contract, on every store (PostgreSQL when a cluster is given).
extension StoreTests {
    private static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    private static func instance(_ id: String, seen: Double, report: [UInt8]? = [1, 2]) -> StoredInstance {
        StoredInstance(
            set: "ios", id: id, firstSeen: t0, lastSeen: t0.addingTimeInterval(seen), report: report,
            applied: [3: t0.addingTimeInterval(1.25), 4: t0.addingTimeInterval(seen)])
    }

    @Test(arguments: StoreKind.allCases)
    func instancesAreReplacedAndReadBySeenTime(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.telemetry.record(
                TelemetryBatch(instances: [Self.instance("a", seen: 10), Self.instance("b", seen: 20)]))
            try store.telemetry.record(TelemetryBatch(instances: [Self.instance("a", seen: 30, report: nil)]))
            let all = try store.telemetry.instances(set: "ios", seenSince: Self.t0)
            #expect(all.map(\.id) == ["a", "b"])
            #expect(all[0] == Self.instance("a", seen: 30, report: nil))
            #expect(all[1].applied == [3: Self.t0.addingTimeInterval(1.25), 4: Self.t0.addingTimeInterval(20)])
            #expect(
                try store.telemetry.instances(set: "ios", seenSince: Self.t0.addingTimeInterval(25)).map(\.id) == ["a"])
            #expect(try store.telemetry.instances(set: "android", seenSince: .distantPast).isEmpty)
            #expect(
                try store.telemetry.instance(set: "ios", id: "b", seenSince: Self.t0) == Self.instance("b", seen: 20))
            #expect(try store.telemetry.instance(set: "ios", id: "b", seenSince: Self.t0.addingTimeInterval(21)) == nil)

            try store.telemetry.prune(countsBefore: 0, instancesBefore: Self.t0.addingTimeInterval(25))
            #expect(try store.telemetry.instances(set: "ios", seenSince: .distantPast).map(\.id) == ["a"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func countsAddUpPerFlagVariantAndHour(kind: StoreKind) throws {
        try kind.withStore { store in
            func count(_ flag: String, _ variant: String, hour: Int, _ count: Int, at seconds: Double) -> UsageCount {
                UsageCount(
                    set: "ios", flag: flag, variant: variant, hour: hour, count: count,
                    lastAt: Self.t0.addingTimeInterval(seconds))
            }
            try store.telemetry.record(
                TelemetryBatch(counts: [count("a", "on", hour: 10, 2, at: 5), count("a", "", hour: 11, 1, at: 6)]))
            try store.telemetry.record(
                TelemetryBatch(counts: [count("a", "on", hour: 10, 3, at: 4), count("b", "off", hour: 12, 7, at: 9)]))
            let all = try store.telemetry.usage(set: "ios", flag: nil, fromHour: 0)
            #expect(
                all == [
                    count("a", "on", hour: 10, 5, at: 5), count("a", "", hour: 11, 1, at: 6),
                    count("b", "off", hour: 12, 7, at: 9),
                ])
            #expect(try store.telemetry.usage(set: "ios", flag: "b", fromHour: 0).map(\.count) == [7])
            #expect(try store.telemetry.usage(set: "ios", flag: nil, fromHour: 11).count == 2)
            try store.telemetry.prune(countsBefore: 12, instancesBefore: .distantPast)
            #expect(try store.telemetry.usage(set: "ios", flag: nil, fromHour: 0).map(\.flag) == ["b"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func settingsAreKeptPerSetWithTheirAudit(kind: StoreKind) throws {
        try kind.withStore { store in
            try Self.fill(store)
            #expect(try store.settings.read(set: "ios") == SetSettings())
            let audit = AuditEntry(time: Self.t0, actor: "root", action: "set.settings", subject: "compatibility=warn")
            try store.settings.update(set: "ios", SetSettings(compatibility: .warn), audit: audit)
            #expect(try store.settings.read(set: "ios").compatibility == .warn)
            #expect(try store.auditLog.records(set: "ios", limit: 1).first?.action == "set.settings")
            #expect(throws: StoreError.self) { try store.settings.read(set: "nope") }
            #expect(throws: StoreError.self) { try store.settings.update(set: "nope", SetSettings(), audit: audit) }
        }
    }
}
