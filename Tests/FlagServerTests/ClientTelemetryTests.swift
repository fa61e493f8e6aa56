import FlagCore
import Foundation
import Testing

@testable import FlagServer

/// `ClientTelemetry`'s bounds, on its own over a SQLite store in memory: a flood of instances or of flag names cannot
/// grow memory without bound, and what a bound drops is counted.
@Suite("Telemetry: caps, rate limits and flushes")
struct ClientTelemetryTests {
    static func telemetry(_ configure: (inout ClientTelemetry.Limits) -> Void = { _ in }) throws -> (
        ClientTelemetry, TestClock, SQLiteFlagStore
    ) {
        var limits = ClientTelemetry.Limits()
        configure(&limits)
        let clock = TestClock()
        let store = try SQLiteFlagStore.inMemory()
        return (ClientTelemetry(store: store.telemetry, clock: clock.clock, limits: limits), clock, store)
    }

    /// The telemetry of two servers sharing one store, as replicas on one database do, and their clock.
    static func twoServers() throws -> (ClientTelemetry, ClientTelemetry, TestClock) {
        let clock = TestClock()
        let store = try SQLiteFlagStore.inMemory()
        let telemetry = { ClientTelemetry(store: store.telemetry, clock: clock.clock) }
        return (telemetry(), telemetry(), clock)
    }

    static func report(_ id: String, counts: TelemetryReport.Counts = [:]) -> TelemetryReport {
        TelemetryReport(instance: id, sdk: .init(name: "FlagClient", version: "2.0.0"), version: 1, counts: counts)
    }

    /// The set the reports are of: `f`, whose rule `on` is a variant it can report, and `flag-0` … `flag-149`.
    static let flags: CompiledFlagSet = {
        var flags = [#""f":{"type":"bool","default":false,"rules":[{"name":"on","conditions":[],"value":true}]}"#]
        for index in 0..<150 { flags.append(#""flag-\#(index)":{"type":"bool","default":false}"#) }
        let document = #"{"schema":1,"set":"s","version":1,"flags":{\#(flags.joined(separator: ","))}}"#
        // A literal of this file: it decodes.
        return CompiledFlagSet(try! FlagSet.decode(Array(document.utf8)))
    }()

    /// A new id of `key` for a stream (or a poll) from `address`.
    static func issue(
        _ telemetry: ClientTelemetry, key: String = "app", stream: Bool = true, address: String = "10.0.0.1"
    ) throws -> String {
        try #require(telemetry.issue(set: "s", presented: nil, key: key, stream: stream, address: address))
    }

    /// At a key's cap a new id evicts the one that reported least recently, never-reported first; over the cap of
    /// all instances a new id is not kept.
    @Test func aKeysCapEvictsTheLeastRecentlyReportingAndTheWholeCapRefuses() throws {
        let (telemetry, clock, _) = try Self.telemetry {
            $0.instancesPerKey = 3
            $0.instances = 5
        }
        let ids = try (0..<3).map { _ in try Self.issue(telemetry, stream: false) }
        try telemetry.accept(Self.report(ids[0]), set: "s", key: "app", flags: Self.flags)
        clock.advance(seconds: 1)
        try telemetry.accept(Self.report(ids[1]), set: "s", key: "app", flags: Self.flags)
        // Full: the provisional ids[2] makes room.
        let fourth = try Self.issue(telemetry, stream: false)
        #expect(telemetry.trackedInstances == 3)
        #expect(telemetry.dropped[.instanceEvicted] == 1)
        #expect(throws: ClientTelemetry.Refusal.self) {
            try telemetry.accept(Self.report(ids[2]), set: "s", key: "app", flags: Self.flags)
        }
        try telemetry.accept(Self.report(fourth), set: "s", key: "app", flags: Self.flags)
        // Every one has reported: the least recent report, ids[0]'s, makes room; the key's real clients stay.
        clock.advance(seconds: 6)
        _ = try Self.issue(telemetry, stream: false)
        #expect(throws: ClientTelemetry.Refusal.self) {
            try telemetry.accept(Self.report(ids[0]), set: "s", key: "app", flags: Self.flags)
        }
        try telemetry.accept(Self.report(ids[1]), set: "s", key: "app", flags: Self.flags)
        try telemetry.accept(Self.report(fourth), set: "s", key: "app", flags: Self.flags)
        // Another key has room of its own, until the cap of all instances.
        _ = try Self.issue(telemetry, key: "other")
        _ = try Self.issue(telemetry, key: "other")
        #expect(telemetry.trackedInstances == 5)
        let unkept = try Self.issue(telemetry, key: "other")
        #expect(telemetry.dropped[.instanceCap] == 1)
        #expect(throws: ClientTelemetry.Refusal.self) {
            try telemetry.accept(Self.report(unkept), set: "s", key: "other", flags: Self.flags)
        }
    }

    /// An id issued to a poll is provisional until its first report, and expires a minute after its issue without
    /// one, however often it is presented again.
    @Test func anUnreportedIdExpiresAfterAMinute() throws {
        let (telemetry, clock, _) = try Self.telemetry()
        let polled = try Self.issue(telemetry, stream: false)
        let reporting = try Self.issue(telemetry, stream: false)
        clock.advance(seconds: 40)
        #expect(telemetry.issue(set: "s", presented: polled, key: "app", stream: false, address: "10.0.0.1") == polled)
        try telemetry.accept(Self.report(reporting), set: "s", key: "app", flags: Self.flags)
        clock.advance(seconds: 21)
        #expect(throws: ClientTelemetry.Refusal.self) {
            try telemetry.accept(Self.report(polled), set: "s", key: "app", flags: Self.flags)
        }
        // Once reported, it lives `expiry` after its last report.
        clock.advance(seconds: 500)
        try telemetry.accept(Self.report(reporting), set: "s", key: "app", flags: Self.flags)
        telemetry.flush()
        #expect(telemetry.trackedInstances == 1)
    }

    /// New ids per client address: a burst, then one a second; ids presented again cost nothing.
    @Test func newIdsAreRateLimitedPerClientAddress() throws {
        let (telemetry, clock, _) = try Self.telemetry {
            $0.mintBurst = 3
            $0.mintsPerSecond = 1
        }
        let ids = try (0..<3).map { _ in try Self.issue(telemetry, address: "203.0.113.9") }
        #expect(telemetry.issue(set: "s", presented: nil, key: "app", stream: false, address: "203.0.113.9") == nil)
        #expect(telemetry.dropped[.mintRateLimited] == 1)
        #expect(
            telemetry.issue(set: "s", presented: ids[0], key: "app", stream: true, address: "203.0.113.9") == ids[0])
        _ = try Self.issue(telemetry, address: "203.0.113.10")
        clock.advance(seconds: 1)
        _ = try Self.issue(telemetry, address: "203.0.113.9")
        #expect(telemetry.issue(set: "s", presented: nil, key: "app", stream: true, address: "203.0.113.9") == nil)
    }

    /// An id is bound to the key it was issued to, here and on another server sharing the store.
    @Test func anIdReportsOnlyWithItsOwnKey() throws {
        let (issuing, other, _) = try Self.twoServers()
        let id = try Self.issue(issuing, key: "ios-app")
        let refusal = try #require(throws: ClientTelemetry.Refusal.self) {
            try issuing.accept(Self.report(id), set: "s", key: "web-app", flags: Self.flags)
        }
        #expect(refusal.reason == .unknownInstance)
        issuing.flush()
        #expect(throws: ClientTelemetry.Refusal.self) {
            try other.accept(Self.report(id), set: "s", key: "web-app", flags: Self.flags)
        }
        try other.accept(Self.report(id), set: "s", key: "ios-app", flags: Self.flags)
        // Presented with another key, it is not renewed: that key gets an id of its own.
        #expect(issuing.issue(set: "s", presented: id, key: "web-app", stream: true, address: "10.0.0.1") != id)
    }

    /// Counts are kept only for flags the set has, or had in the last day, and variants they can report.
    @Test func countsAreKeptOnlyForWhatExists() throws {
        let (telemetry, clock, store) = try Self.telemetry()
        let id = try Self.issue(telemetry)
        let counts: TelemetryReport.Counts = [
            "f": ["on": ["TARGETING_MATCH": 2], "default": ["DEFAULT": 1], "": ["OVERRIDE": 4], "made-up": ["X": 9]],
            "no-such-flag": ["default": ["DEFAULT": 7]],
        ]
        try telemetry.accept(Self.report(id, counts: counts), set: "s", key: "app", flags: Self.flags)
        telemetry.flush()
        let kept = try store.telemetry.usage(set: "s", flag: nil, fromHour: 0).map {
            "\($0.flag)/\($0.variant)=\($0.count)"
        }
        #expect(kept.sorted() == ["f/=4", "f/default=1", "f/on=2"])
        #expect(telemetry.dropped[.unknownVariant] == 1)
        #expect(telemetry.dropped[.unknownFlag] == 1)

        // `gone` was removed by a version: its counts are kept for a day after, then dropped.
        let gone = try #require(
            try CompiledFlagSet(
                FlagSet.decode(
                    Array(#"{"schema":1,"set":"s","flags":{"gone":{"type":"bool","default":false}}}"#.utf8))
            ).flag("gone"))
        telemetry.retire(set: "s", flags: [gone])
        clock.advance(seconds: 6)
        try telemetry.accept(
            Self.report(id, counts: ["gone": ["default": ["STATIC": 3]]]), set: "s", key: "app", flags: Self.flags)
        clock.advance(seconds: 86_400)
        try telemetry.accept(
            Self.report(id, counts: ["gone": ["default": ["STATIC": 5]]]), set: "s", key: "app", flags: Self.flags)
        telemetry.flush()
        #expect(try store.telemetry.usage(set: "s", flag: "gone", fromHour: 0).map(\.count) == [3])
        #expect(telemetry.dropped[.unknownFlag] == 2)
    }

    /// Distinct rows per set and hour are capped, across flushes; a new hour starts afresh.
    @Test func rowsPerSetAndHourAreCapped() throws {
        let (telemetry, clock, store) = try Self.telemetry { $0.rowsPerSetPerHour = 10 }
        let id = try Self.issue(telemetry)
        func report(_ range: Range<Int>) throws {
            var counts: TelemetryReport.Counts = [:]
            for index in range { counts["flag-\(index)"] = ["default": ["STATIC": 1]] }
            try telemetry.accept(Self.report(id, counts: counts), set: "s", key: "app", flags: Self.flags)
            telemetry.flush()
            clock.advance(seconds: 6)
        }
        try report(0..<6)
        try report(3..<9)
        #expect(try store.telemetry.usage(set: "s", flag: nil, fromHour: 0).count == 9)
        try report(9..<12)
        #expect(try store.telemetry.usage(set: "s", flag: nil, fromHour: 0).count == 10)
        #expect(telemetry.dropped[.rowCap] == 2)
        clock.advance(seconds: 3600)
        try report(20..<25)
        #expect(try store.telemetry.usage(set: "s", flag: nil, fromHour: 0).count == 15)
    }

    @Test func flagKeysPerSetAreCappedBetweenFlushes() throws {
        let (telemetry, _, store) = try Self.telemetry { $0.flagsPerSet = 100 }
        let id = try Self.issue(telemetry)
        var counts: TelemetryReport.Counts = [:]
        for index in 0..<150 { counts["flag-\(index)"] = ["": ["STATIC": 1]] }
        try telemetry.accept(Self.report(id, counts: counts), set: "s", key: "app", flags: Self.flags)
        telemetry.flush()
        let stored = try store.telemetry.usage(set: "s", flag: nil, fromHour: 0)
        #expect(stored.count == 100)
        #expect(telemetry.dropped[.flagCap] == 50)
        #expect(telemetry.evaluations["s"] == 150)
    }

    @Test func everyKeyAndAddressHasABudget() throws {
        let (telemetry, clock, _) = try Self.telemetry {
            $0.reportsPerKeyPerSecond = 3
            $0.reportsPerAddressPerSecond = 2
        }
        try telemetry.admit(address: "10.0.0.1")
        try telemetry.admit(address: "10.0.0.1")
        #expect(throws: ClientTelemetry.Refusal.self) { try telemetry.admit(address: "10.0.0.1") }
        #expect(telemetry.dropped[.rateLimitedAddress] == 1)
        try telemetry.admit(address: "10.0.0.2")

        let ids = try (0..<4).map { _ in try Self.issue(telemetry) }
        for id in ids.prefix(3) { try telemetry.accept(Self.report(id), set: "s", key: "app", flags: Self.flags) }
        #expect(throws: ClientTelemetry.Refusal.self) {
            try telemetry.accept(Self.report(ids[3]), set: "s", key: "app", flags: Self.flags)
        }
        #expect(telemetry.dropped[.rateLimitedKey] == 1)
        clock.advance(seconds: 1)
        try telemetry.accept(Self.report(ids[3]), set: "s", key: "app", flags: Self.flags)
    }

    /// Made-up ids are refused before the key's budget is spent: a key holder cannot starve the key's real clients.
    @Test func madeUpIdsDoNotSpendTheKeysBudget() throws {
        let (telemetry, _, _) = try Self.telemetry { $0.reportsPerKeyPerSecond = 2 }
        for index in 0..<50 {
            #expect(throws: ClientTelemetry.Refusal.self) {
                try telemetry.accept(
                    Self.report("in_\(String(repeating: "X", count: 20))\(index % 10)\(index / 10)"), set: "s",
                    key: "app", flags: Self.flags)
            }
        }
        #expect(telemetry.dropped[.unknownInstance] == 50)
        let id = try Self.issue(telemetry)
        try telemetry.accept(Self.report(id), set: "s", key: "app", flags: Self.flags)
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
        let telemetry = ClientTelemetry(store: store.telemetry, clock: clock.clock)
        let id = try Self.issue(telemetry)
        try telemetry.accept(Self.report(id, counts: ["f": ["on": ["R": 2]]]), set: "s", key: "app", flags: Self.flags)
        // The table out of the way, the flush fails as with a store that went down.
        try store.database.write { try $0.execute("ALTER TABLE evaluation_count RENAME TO away") }
        telemetry.flush()
        #expect(telemetry.dropped[.flushFailed] == 1)
        try store.database.write { try $0.execute("ALTER TABLE away RENAME TO evaluation_count") }
        telemetry.flush()
        #expect(try store.telemetry.usage(set: "s", flag: "f", fromHour: 0).map(\.count) == [2])
        #expect(try store.telemetry.instances(set: "s", seenSince: .distantPast).map(\.id) == [id])
    }

    @Test func anInstanceFromAnotherServerIsKnownThroughTheStore() throws {
        let (issuing, other, _) = try Self.twoServers()
        let id = try Self.issue(issuing)
        issuing.flush()
        try other.accept(Self.report(id), set: "s", key: "app", flags: Self.flags)
        #expect(throws: ClientTelemetry.Refusal.self) {
            try other.accept(Self.report("in_CCCCCCCCCCCCCCCCCCCCCC"), set: "s", key: "app", flags: Self.flags)
        }
        // A client that reconnects to the other server with its id gets a new one there; the old id is expired.
        let renewed = other.issue(set: "s", presented: id, key: "app", stream: true, address: "10.0.0.1")
        #expect(renewed == id)
        let fresh = other.issue(
            set: "s", presented: "in_DDDDDDDDDDDDDDDDDDDDDD", key: "app", stream: true, address: "10.0.0.1")
        #expect(fresh != "in_DDDDDDDDDDDDDDDDDDDDDD")
    }

    /// Reads are incremental: a later report, and an id replaced on another server, show in the next read.
    @Test func readsFollowReportsAndReplacedIdsOnEveryServer() throws {
        let (first, second, clock) = try Self.twoServers()
        let id = try Self.issue(first)
        try first.accept(Self.report(id), set: "s", key: "app", flags: Self.flags)
        first.flush()
        #expect(try second.instances(set: "s", within: 300).map(\.report.version) == [1])
        clock.advance(seconds: 10)
        var newer = Self.report(id)
        newer.version = 2
        try first.accept(newer, set: "s", key: "app", flags: Self.flags)
        first.flush()
        #expect(try second.instances(set: "s", within: 300).map(\.report.version) == [2])
        // The client moves to the second server, which does not hold its id: a new one, and the old one is gone.
        clock.advance(seconds: 10)
        let renewed = second.issue(set: "s", presented: id, key: "app", stream: true, address: "10.0.0.1")
        #expect(renewed != id)
        second.flush()
        #expect(try first.instances(set: "s", within: 300).isEmpty)
        #expect(try second.instances(set: "s", within: 300).map(\.stored.id) == [])
    }
}
