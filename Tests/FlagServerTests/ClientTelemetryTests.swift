import FlagCore
import Foundation
import Testing

@testable import FlagServer

/// `ClientTelemetry`'s bounds, on its own over an in-memory store: a flood of instances or of flag names cannot
/// grow memory without bound, and what a bound drops is counted.
@Suite("Telemetry: caps, rate limits and flushes")
struct ClientTelemetryTests {
    static func telemetry(_ configure: (inout ClientTelemetry.Limits) -> Void = { _ in }) -> (
        ClientTelemetry, TestClock, InMemoryFlagStore
    ) {
        var limits = ClientTelemetry.Limits()
        configure(&limits)
        let clock = TestClock()
        let store = InMemoryFlagStore()
        return (ClientTelemetry(store: store, clock: clock.clock, limits: limits), clock, store)
    }

    static func report(_ id: String, counts: TelemetryReport.Counts = [:]) -> TelemetryReport {
        TelemetryReport(instance: id, sdk: .init(name: "FlagClient", version: "2.0.0"), version: 1, counts: counts)
    }

    @Test func instancesPerKeyAndInAllAreCapped() throws {
        let (telemetry, _, _) = Self.telemetry {
            $0.instancesPerKey = 2
            $0.instances = 3
        }
        let ids = (0..<3).map { _ in telemetry.issue(set: "s", presented: nil, key: "app", stream: true) }
        #expect(telemetry.trackedInstances == 2)
        #expect(telemetry.dropped[.instanceCap] == 1)
        try telemetry.accept(Self.report(ids[0]), set: "s", key: "app")
        #expect(throws: ClientTelemetry.Refusal.self) {
            try telemetry.accept(Self.report(ids[2]), set: "s", key: "app")
        }
        _ = telemetry.issue(set: "s", presented: nil, key: "other", stream: true)
        _ = telemetry.issue(set: "s", presented: nil, key: "other", stream: true)
        #expect(telemetry.trackedInstances == 3)
        #expect(telemetry.dropped[.instanceCap] == 2)
    }

    @Test func flagKeysPerSetAreCappedBetweenFlushes() throws {
        let (telemetry, _, store) = Self.telemetry { $0.flagsPerSet = 100 }
        let id = telemetry.issue(set: "s", presented: nil, key: "app", stream: true)
        var counts: TelemetryReport.Counts = [:]
        for index in 0..<150 { counts["flag-\(index)"] = ["": ["STATIC": 1]] }
        try telemetry.accept(Self.report(id, counts: counts), set: "s", key: "app")
        telemetry.flush()
        let stored = try store.usage(set: "s", flag: nil, fromHour: 0)
        #expect(stored.count == 100)
        #expect(telemetry.dropped[.flagCap] == 50)
        #expect(telemetry.evaluations["s"] == 150)
    }

    @Test func everyKeyAndAddressHasABudget() throws {
        let (telemetry, clock, _) = Self.telemetry {
            $0.reportsPerKeyPerSecond = 3
            $0.reportsPerAddressPerSecond = 2
        }
        try telemetry.admit(address: "10.0.0.1:1")
        try telemetry.admit(address: "10.0.0.1:2")
        #expect(throws: ClientTelemetry.Refusal.self) { try telemetry.admit(address: "10.0.0.1:3") }
        #expect(telemetry.dropped[.rateLimitedAddress] == 1)
        try telemetry.admit(address: "10.0.0.2:1")

        let ids = (0..<4).map { _ in telemetry.issue(set: "s", presented: nil, key: "app", stream: true) }
        for id in ids.prefix(3) { try telemetry.accept(Self.report(id), set: "s", key: "app") }
        #expect(throws: ClientTelemetry.Refusal.self) {
            try telemetry.accept(Self.report(ids[3]), set: "s", key: "app")
        }
        #expect(telemetry.dropped[.rateLimitedKey] == 1)
        clock.advance(seconds: 1)
        try telemetry.accept(Self.report(ids[3]), set: "s", key: "app")
    }

    /// Made-up ids are refused before the key's budget is spent: a key holder cannot starve the key's real clients.
    @Test func madeUpIdsDoNotSpendTheKeysBudget() throws {
        let (telemetry, _, _) = Self.telemetry { $0.reportsPerKeyPerSecond = 2 }
        for index in 0..<50 {
            #expect(throws: ClientTelemetry.Refusal.self) {
                try telemetry.accept(
                    Self.report("in_\(String(repeating: "X", count: 20))\(index % 10)\(index / 10)"), set: "s",
                    key: "app")
            }
        }
        #expect(telemetry.dropped[.unknownInstance] == 50)
        let id = telemetry.issue(set: "s", presented: nil, key: "app", stream: true)
        try telemetry.accept(Self.report(id), set: "s", key: "app")
    }

    @Test func aFlushWritesInShortTransactions() {
        let counts = (0..<7).map { UsageCount(set: "s", flag: "f\($0)", variant: "", hour: 1, count: 1, lastAt: .now) }
        let instances = (0..<5).map {
            StoredInstance(set: "s", id: "i\($0)", firstSeen: .now, lastSeen: .now, report: nil, applied: [:])
        }
        let chunks = TelemetryBatch(instances: instances, counts: counts).chunked(rows: 3)
        #expect(chunks.map(\.instances.count) == [3, 2, 0, 0, 0])
        #expect(chunks.map(\.counts.count) == [0, 0, 3, 3, 1])
    }

    @Test func aFailedFlushKeepsTheCountsForTheNext() throws {
        let clock = TestClock()
        let store = try SQLiteFlagStore.inMemory()
        let telemetry = ClientTelemetry(store: store, clock: clock.clock)
        let id = telemetry.issue(set: "s", presented: nil, key: "app", stream: true)
        try telemetry.accept(Self.report(id, counts: ["f": ["on": ["R": 2]]]), set: "s", key: "app")
        // The table out of the way, the flush fails as with a store that went down.
        try store.database.write { try $0.execute("ALTER TABLE evaluation_count RENAME TO away") }
        telemetry.flush()
        #expect(telemetry.dropped[.flushFailed] == 1)
        try store.database.write { try $0.execute("ALTER TABLE away RENAME TO evaluation_count") }
        telemetry.flush()
        #expect(try store.usage(set: "s", flag: "f", fromHour: 0).map(\.count) == [2])
        #expect(try store.instances(set: "s", seenSince: .distantPast).map(\.id) == [id])
    }

    @Test func anInstanceFromAnotherServerIsKnownThroughTheStore() throws {
        let clock = TestClock()
        let store = InMemoryFlagStore()
        let issuing = ClientTelemetry(store: store, clock: clock.clock)
        let other = ClientTelemetry(store: store, clock: clock.clock)
        let id = issuing.issue(set: "s", presented: nil, key: "app", stream: true)
        issuing.flush()
        try other.accept(Self.report(id), set: "s", key: "app")
        #expect(throws: ClientTelemetry.Refusal.self) {
            try other.accept(Self.report("in_CCCCCCCCCCCCCCCCCCCCCC"), set: "s", key: "app")
        }
        // A client that reconnects to the other server with its id gets a new one there; the old id is expired.
        let renewed = other.issue(set: "s", presented: id, key: "app", stream: true)
        #expect(renewed == id)
        let fresh = other.issue(set: "s", presented: "in_DDDDDDDDDDDDDDDDDDDDDD", key: "app", stream: true)
        #expect(fresh != "in_DDDDDDDDDDDDDDDDDDDDDD")
    }

    /// Reads are incremental: a later report, and an id replaced on another server, show in the next read.
    @Test func readsFollowReportsAndReplacedIdsOnEveryServer() throws {
        let clock = TestClock()
        let store = InMemoryFlagStore()
        let first = ClientTelemetry(store: store, clock: clock.clock)
        let second = ClientTelemetry(store: store, clock: clock.clock)
        let id = first.issue(set: "s", presented: nil, key: "app", stream: true)
        try first.accept(Self.report(id), set: "s", key: "app")
        first.flush()
        #expect(try second.instances(set: "s", within: 300).map(\.report.version) == [1])
        clock.advance(seconds: 10)
        var newer = Self.report(id)
        newer.version = 2
        try first.accept(newer, set: "s", key: "app")
        first.flush()
        #expect(try second.instances(set: "s", within: 300).map(\.report.version) == [2])
        // The client moves to the second server, which does not hold its id: a new one, and the old one is gone.
        clock.advance(seconds: 10)
        let renewed = second.issue(set: "s", presented: id, key: "app", stream: true)
        #expect(renewed != id)
        second.flush()
        #expect(try first.instances(set: "s", within: 300).isEmpty)
        #expect(try second.instances(set: "s", within: 300).map(\.stored.id) == [])
    }

    @Test func hostsAreReadWithoutTheirPort() {
        #expect(ClientTelemetry.host(of: "127.0.0.1:53142") == "127.0.0.1")
        #expect(ClientTelemetry.host(of: "[::1]:53142") == "::1")
        #expect(ClientTelemetry.host(of: "") == "")
    }
}
