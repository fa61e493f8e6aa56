import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

@Suite(.live) struct SessionTests {
    /// A client on the scripted stream, live with `bytes` as version `version`.
    func liveClient(
        _ directory: URL?, _ transport: ScriptedTransport, clock: TestClock = TestClock(),
        _ flags: Flag..., version: Int = 1
    ) async throws -> (FlagClient, ScriptedTransport.Continuation) {
        let client = try makeClient(directory: directory, transport: transport, clock: clock)
        let stream = try await transport.openStream()
        try await put(stream, client, version: version, flags: flags)
        return (client, stream)
    }

    func put(_ stream: ScriptedTransport.Continuation, _ client: FlagClient, version: Int, _ flags: Flag...)
        async throws
    {
        try await put(stream, client, version: version, flags: flags)
    }

    /// Sends version `version` of the set with `flags` on the stream, and waits until the client is live on it.
    private func put(_ stream: ScriptedTransport.Continuation, _ client: FlagClient, version: Int, flags: [Flag])
        async throws
    {
        stream.yield(.bytes(Docs.sse("put", id: version, Docs.document(version: version, flags: flags))))
        try await eventually("live v\(version)") { client.state == .live(version: version) }
    }

    @Test func eachFlagFreezesAtItsFirstRead() async throws {
        let transport = ScriptedTransport()
        let (client, stream) = try await liveClient(
            nil, transport, Docs.flag("new-checkout", true), Docs.flag("dark-mode", false))
        let session = client.session(unitID: "u-1")
        #expect(session.value(.newCheckout) == true)
        try await put(stream, client, version: 2, Docs.flag("new-checkout", false), Docs.flag("dark-mode", true))
        #expect(session.value(.newCheckout) == true)  // frozen at v1
        #expect(session.detail(.newCheckout).version == 1)
        #expect(session.value(.darkMode) == true)  // first read now, at v2
        #expect(session.detail(.darkMode).version == 2)
        #expect(client.session(unitID: "u-1").value(.newCheckout) == false)
        client.shutdown()
    }

    /// A session that froze a prerequisite decides its dependents with that value, though the set changed since:
    /// what the screen showed for the new checkout and whether it offers the express button agree.
    @Test func aDependentUsesThePrerequisiteValueTheSessionFroze() async throws {
        var express = Docs.flag("dark-mode", false)
        express.rules = [Rule(name: "everyone", target: .conditions([]), serve: .value(.bool(true)))]
        express.prerequisites = [Prerequisite(flag: "new-checkout", values: [.bool(true)])]
        let transport = ScriptedTransport()
        let (client, stream) = try await liveClient(nil, transport, Docs.flag("new-checkout", true), express)
        let session = client.session(unitID: "u-1")
        #expect(session.value(.newCheckout) == true)
        try await put(stream, client, version: 2, Docs.flag("new-checkout", false), express)
        #expect(session.value(.darkMode) == true)
        #expect(session.detail(.darkMode).version == 2)
        // A new session reads the new checkout as off at v2, and the prerequisite fails.
        let fresh = client.session(unitID: "u-1")
        #expect(fresh.value(.darkMode) == false)
        #expect(fresh.detail(.darkMode).reason == .prerequisiteFailed)
        #expect(fresh.detail(.darkMode).variant == "new-checkout")
        client.shutdown()
    }

    @Test func killAppliesToOpenSessionsAtOnceAndRestoreOnlyToNewOnes() async throws {
        let transport = ScriptedTransport()
        let (client, stream) = try await liveClient(nil, transport, Docs.flag("new-checkout", true))
        let session = client.session(unitID: "u-1")
        let untouched = client.session(unitID: "u-2")
        #expect(session.value(.newCheckout) == true)
        try await put(stream, client, version: 2, Docs.flag("new-checkout", true, killed: true))
        let killed = session.detail(.newCheckout)
        #expect(killed.value == false)
        #expect(killed.reason == .disabled)
        #expect(killed.variant == "kill")
        #expect(killed.version == 2)
        #expect(untouched.detail(.newCheckout).reason == .disabled)
        try await put(stream, client, version: 3, Docs.flag("new-checkout", true))
        #expect(session.detail(.newCheckout).reason == .disabled)  // restore does not reach open sessions
        #expect(untouched.value(.newCheckout) == false)
        let fresh = client.session(unitID: "u-1").detail(.newCheckout)
        #expect(fresh.value == true)
        #expect(fresh.reason == .static)
        #expect(fresh.version == 3)
        client.shutdown()
    }

    /// The state names a version only once open sessions have its kills: a session read after the state changed
    /// is never served what the version killed.
    @Test func theStateNamesAVersionOnlyOnceOpenSessionsHaveItsKills() async throws {
        let transport = ScriptedTransport()
        let (client, stream) = try await liveClient(nil, transport, Docs.flag("new-checkout", true))
        let session = client.session(unitID: "u-1")
        #expect(session.value(.newCheckout) == true)
        let killing = Docs.document(version: 2, flags: [Docs.flag("new-checkout", true, killed: true)])
        // While the test holds the session's values, the kill of v2 cannot reach them.
        session.frozen.withLock { _ in
            stream.yield(.bytes(Docs.sse("put", id: 2, killing)))
            #expect(waitUntil { client.core.state == .live(version: 2) })
            #expect(client.state == .live(version: 1))
        }
        try await eventually("live v2") { client.state == .live(version: 2) }
        #expect(session.detail(.newCheckout).reason == .disabled)
        client.shutdown()
    }

    @Test func killByPatchAppliesMidSession() async throws {
        let transport = ScriptedTransport()
        let (client, stream) = try await liveClient(
            nil, transport, Docs.flag("new-checkout", true), Docs.flag("dark-mode", true), version: 5)
        let session = client.session(unitID: "u-1")
        #expect(session.value(.newCheckout) && session.value(.darkMode))
        stream.yield(
            .bytes(
                Docs.sse(
                    "patch", id: 6,
                    Docs.patch(version: 6, base: 5, flags: [Docs.flag("new-checkout", true, killed: true)]))))
        try await eventually("v6") { client.state == .live(version: 6) }
        #expect(session.detail(.newCheckout).reason == .disabled)
        #expect(session.value(.darkMode) == true)
        client.shutdown()
    }

    @Test func persistedSessionResumesAfterRecreatingTheClientUntilItsTTL() async throws {
        try await withTemporaryDirectory { directory in
            let clock = TestClock()
            var transport = ScriptedTransport()
            var (client, _) = try await liveClient(directory, transport, clock: clock, Docs.flag("new-checkout", true))
            var session = client.session(id: "s-1", unitID: "u-1", attributes: ["country": "DE"])
            #expect(session.value(.newCheckout) == true)
            client.core.flushPersistence()
            client.shutdown()

            // Restart: the set is now v2 with the flag off, but the session resumes its frozen value.
            transport = ScriptedTransport()
            clock.advance(3600)
            (client, _) = try await liveClient(
                directory, transport, clock: clock, Docs.flag("new-checkout", false), version: 2)
            session = client.session(id: "s-1", unitID: "u-1", attributes: ["country": "DE"])
            let resumed = session.detail(.newCheckout)
            #expect(resumed.value == true)
            #expect(resumed.version == 1)
            #expect(client.session(id: "s-2", unitID: "u-1").value(.newCheckout) == false)
            // Another unit under the same id starts afresh.
            #expect(client.session(id: "s-1", unitID: "u-9").value(.newCheckout) == false)
            client.core.flushPersistence()
            client.shutdown()

            // The id was reopened for u-9 above; start it again for u-1 and let the TTL run out.
            transport = ScriptedTransport()
            (client, _) = try await liveClient(
                directory, transport, clock: clock, Docs.flag("new-checkout", true), version: 3)
            #expect(client.session(id: "s-3", unitID: "u-1").value(.newCheckout) == true)
            client.core.flushPersistence()
            clock.advance(24 * 3600 - 1)
            #expect(client.session(id: "s-3", unitID: "u-1").detail(.newCheckout).version == 3)
            try await put(transport.stream(0), client, version: 4, Docs.flag("new-checkout", false))
            clock.advance(1)
            let expired = client.session(id: "s-3", unitID: "u-1").detail(.newCheckout)
            #expect(expired.value == false)
            #expect(expired.version == 4)
            client.shutdown()
        }
    }

    /// A client recreated right after `shutdown()` resumes the session: shutdown waits for the pending writes.
    @Test func shutdownFinishesPersistedSessionWrites() async throws {
        try await withTemporaryDirectory { directory in
            let clock = TestClock()
            var (client, _) = try await liveClient(
                directory, ScriptedTransport(), clock: clock, Docs.flag("new-checkout", true))
            #expect(client.session(id: "s", unitID: "u").value(.newCheckout) == true)
            client.shutdown()
            (client, _) = try await liveClient(
                directory, ScriptedTransport(), clock: clock, Docs.flag("new-checkout", false), version: 2)
            let resumed = client.session(id: "s", unitID: "u").detail(.newCheckout)
            #expect(resumed.value == true)
            #expect(resumed.version == 1)
            client.shutdown()
        }
    }

    @Test func persistedSessionKeepsAKillAcrossRestarts() async throws {
        try await withTemporaryDirectory { directory in
            var transport = ScriptedTransport()
            var (client, stream) = try await liveClient(directory, transport, Docs.flag("new-checkout", true))
            let session = client.session(id: "s", unitID: "u")
            #expect(session.value(.newCheckout))
            try await put(stream, client, version: 2, Docs.flag("new-checkout", true, killed: true))
            #expect(session.detail(.newCheckout).reason == .disabled)
            client.core.flushPersistence()
            client.shutdown()
            transport = ScriptedTransport()
            (client, _) = try await liveClient(directory, transport, Docs.flag("new-checkout", true), version: 3)
            #expect(client.session(id: "s", unitID: "u").detail(.newCheckout).reason == .disabled)
            client.shutdown()
        }
    }

    @Test func typeMismatchAndMissingFlagServeTheDefault() async throws {
        let transport = ScriptedTransport()
        let (client, _) = try await liveClient(nil, transport, Docs.flag("new-checkout", true))
        let session = client.session(unitID: "u")
        let mismatch = session.detail(FlagKey("new-checkout", default: 3))
        #expect(mismatch.value == 3)
        #expect(mismatch.reason == .error)
        #expect(mismatch.errorCode == .typeMismatch)
        #expect(mismatch.errorMessage?.contains("new-checkout") == true)
        let missing = session.detail(.maxItems)
        #expect(missing.value == 10)
        #expect(missing.reason == .default)
        #expect(missing.errorCode == .flagNotFound)
        #expect(missing.errorMessage?.isEmpty == false)
        // Read again, the frozen entries give the same messages.
        #expect(session.detail(FlagKey("new-checkout", default: 3)).errorMessage == mismatch.errorMessage)
        #expect(session.detail(.maxItems).errorMessage == missing.errorMessage)
        client.shutdown()
    }

    struct Banner: Decodable, Sendable, Equatable {
        var title: String
        var count: Int
    }

    /// A `Decodable` value that counts its decodings.
    struct CountedBanner: Decodable, Sendable, Equatable {
        static let decodings = Locked(0)
        var title: String

        init(title: String) {
            self.title = title
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decode(String.self, forKey: .title)
            Self.decodings.withLock { $0 += 1 }
        }

        private enum CodingKeys: String, CodingKey { case title }
    }

    /// The frozen value of a `Decodable` key is decoded at its first read and kept: later reads, by `value` or by
    /// `detail`, do not decode again.
    @Test func aDecodableValueDecodesOncePerSession() async throws {
        let transport = ScriptedTransport()
        let flag = Flag(key: "counted-banner", type: .json, defaultValue: .object(["title": .string("Hi")]))
        let (client, _) = try await liveClient(nil, transport, flag)
        let session = client.session(unitID: "u")
        let key = FlagKey("counted-banner", default: CountedBanner(title: "none"))
        for _ in 0..<3 { #expect(session.value(key) == CountedBanner(title: "Hi")) }
        #expect(session.detail(key).value == CountedBanner(title: "Hi"))
        #expect(CountedBanner.decodings.withLock { $0 } == 1)
        client.shutdown()
    }

    @Test func boolValuesOfJSONFlagsReadAsJSONAndNotAsBool() async throws {
        let transport = ScriptedTransport()
        let (client, _) = try await liveClient(nil, transport, Flag(key: "raw", type: .json, defaultValue: .bool(true)))
        let session = client.session(unitID: "u")
        let key = FlagKey("raw", default: JSONValue.null)
        #expect(session.value(key) == .bool(true))  // first read
        #expect(session.value(key) == .bool(true))  // frozen read, the `bool` shortcut
        // A json flag is not a bool flag: a first read with a `Bool` key is a type mismatch.
        let other = client.session(unitID: "u")
        #expect(other.detail(FlagKey("raw", default: false)).errorCode == .typeMismatch)
        #expect(other.value(FlagKey("raw", default: false)) == false)
        client.shutdown()
    }

    @Test func decodableJSONValues() async throws {
        let transport = ScriptedTransport()
        let banner = Flag(
            key: "banner", type: .json, defaultValue: .object(["title": .string("Hi"), "count": .int(2)]))
        let broken = Flag(key: "broken", type: .json, defaultValue: .object(["title": .int(1)]))
        let (client, _) = try await liveClient(nil, transport, banner, broken)
        let session = client.session(unitID: "u")
        let key = FlagKey("banner", default: Banner(title: "none", count: 0))
        #expect(session.value(key) == Banner(title: "Hi", count: 2))
        #expect(session.value(key) == Banner(title: "Hi", count: 2))
        let bad = session.detail(FlagKey("broken", default: Banner(title: "none", count: 0)))
        #expect(bad.value == Banner(title: "none", count: 0))
        #expect(bad.errorCode == .typeMismatch)
        #expect(
            session.value(FlagKey("banner", default: JSONValue.null))
                == .object(["title": .string("Hi"), "count": .int(2)]))
        client.shutdown()
    }
}

@Suite(.live) struct FrozenValuesTests {
    /// A live client whose bootstrap document holds `flags` at `version`, with nothing else running.
    func client(_ flags: [Flag], version: Int = 1) throws -> FlagClient {
        try makeClient(directory: nil, transport: ScriptedTransport(), refresh: .off) {
            $0.bootstrap = Docs.set(version: version, flags: flags).encoded()
            $0.overridesEnabled = false
        }
    }

    @Test func aPersistedValueWithAReasonOrCodeThisBuildDoesNotGiveIsDropped() {
        let values = FrozenValues([
            "known": EvaluationDetail(value: .bool(true), reason: .static, variant: "default", version: 3),
            "future-reason": EvaluationDetail(value: .bool(true), reason: Reason(rawValue: "FUTURE")),
            "future-code": EvaluationDetail(
                value: .bool(true), reason: .error, errorCode: ErrorCode(rawValue: "FUTURE"), errorMessage: "?"),
        ])
        #expect(values.count == 1)
        #expect(values[FlagSlots.slot(for: "future-reason")] == nil)
        #expect(values[FlagSlots.slot(for: "future-code")] == nil)
        #expect(
            values[FlagSlots.slot(for: "known")]?.detail(default: .bool(false))
                == EvaluationDetail(value: .bool(true), reason: .static, variant: "default", version: 3))
    }

    @Test func aSlotPastTheEndIsEmptyAndSettingOneGrowsTheValues() {
        var values = FrozenValues([:])
        #expect(values[0] == nil)
        #expect(values[1_000] == nil)
        values[40] = Evaluation.kill(.int(3), version: 2)
        #expect(values[40]?.served == .int(3))
        #expect(values[39] == nil)
        #expect(values[41] == nil)
        #expect(values.count == 1)
    }

    /// Slot after slot in order, as a session reading flags in the order the process first read them: the array
    /// grows with the slots (a capacity doubled at every new slot overflowed within a hundred).
    @Test func settingSlotsInOrderGrowsTheValuesWithThem() {
        var values = FrozenValues([:])
        for slot in 0..<200 { values[slot] = Evaluation.kill(.int(Int64(slot)), version: 1) }
        #expect(values.count == 200)
        #expect((0..<200).allSatisfy { values[$0]?.served == .int(Int64($0)) })
    }

    /// A required flag is found by the slot its set gave it, and by its key in a set compiled without slots; a flag
    /// no session can have read is not frozen.
    @Test func aRequiredFlagIsFoundBySlotAndWithoutOneByKey() {
        let key = "required-by-a-test"
        let slot = FlagSlots.slot(for: key)
        var values = FrozenValues([:])
        values[slot] = Evaluation(served: .string("dark"), reason: .targetingMatch, version: 1)
        for asked in [slot, -1] {
            guard case .served(let value) = values.prerequisite(slot: asked, key: { key }) else {
                Issue.record("slot \(asked): not found")
                continue
            }
            #expect(value == .string("dark"))
        }
        guard case .notFrozen = values.prerequisite(slot: -1, key: { "never-read-by-any-key" }) else {
            Issue.record("a flag without a slot was found")
            return
        }
    }

    @Test func theSameKeyNameFromTwoKeysSharesOneSlot() {
        #expect(FlagKey("slot-shared", default: false).slot == FlagKey("slot-shared", default: 0).slot)
        #expect(FlagKey("slot-a", default: false).slot != FlagKey("slot-b", default: false).slot)
    }

    /// Each of many flags keeps its own first value, whatever order the keys were made and read in.
    @Test func aSessionFreezesEachOfManyKeysOnItsOwn() throws {
        let names = (0..<300).map { "many-\($0)" }
        let client = try client(names.map { Flag(key: $0, type: .int, defaultValue: .int(1)) })
        let session = client.session(unitID: "u-1")
        // Read every other key first, backwards, then the rest, each through a key of its own.
        for index in stride(from: 298, through: 0, by: -2) {
            #expect(session.value(FlagKey(names[index], default: 0)) == 1)
        }
        let changed = names.map { Flag(key: $0, type: .int, defaultValue: .int(2)) }
        client.core.publish(
            source: CompiledSource(CompiledFlagSet(Docs.set(version: 2, flags: changed))), state: .live(version: 2))
        for (index, name) in names.enumerated() {
            let detail = session.detail(FlagKey(name, default: 0))
            #expect(detail.value == (index % 2 == 0 ? 1 : 2), "\(name)")
            #expect(detail.version == (index % 2 == 0 ? 1 : 2), "\(name)")
        }
        #expect(client.session(unitID: "u-1").value(FlagKey(names[0], default: 0)) == 2)
        client.shutdown()
    }

    /// `value` and `detail` freeze through one function: whichever reads first, the other sees the same value.
    @Test(arguments: [true, false])
    func valueAndDetailFreezeTheSameValue(valueFirst: Bool) throws {
        var flag = Flag(key: "half", type: .bool, defaultValue: .bool(false))
        flag.rollout = Rollout(value: .bool(true), stage: .percent(50))
        let client = try client([flag])
        let key = FlagKey("half", default: false)
        let sessions = (0..<40).map { client.session(unitID: "unit-\($0)") }
        let first = sessions.map { valueFirst ? $0.value(key) : $0.detail(key).value }
        #expect(Set(first) == [true, false])  // both sides of the rollout are covered
        var unrolled = flag
        unrolled.rollout = nil
        client.core.publish(
            source: CompiledSource(CompiledFlagSet(Docs.set(version: 2, flags: [unrolled]))), state: .live(version: 2))
        for (session, expected) in zip(sessions, first) {
            #expect(session.value(key) == expected)
            let detail = session.detail(key)
            #expect(detail.value == expected)
            #expect(detail.version == 1)
            #expect(detail.reason == (expected ? .split : .default))
        }
        client.shutdown()
    }

    /// A flag that is not in the set freezes the caller's default with its error, for `value` and `detail` alike.
    @Test func aMissingFlagFreezesTheDefaultWithItsError() throws {
        let client = try client([Docs.flag("present", true)])
        let session = client.session(unitID: "u-1")
        #expect(session.value(FlagKey("absent", default: 7)) == 7)
        let detail = session.detail(FlagKey("absent", default: 7))
        #expect(detail.value == 7)
        #expect(detail.errorCode == .flagNotFound)
        #expect(detail.version == 1)
        client.shutdown()
    }
}
