import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// What counts as an evaluation (docs/telemetry.md): every read that evaluates, the first read of a session
/// included; never a frozen read.
@Suite(.live) struct TelemetryCountingTests {
    /// A client with `flags` as its bootstrap set, refreshing through a transport that never answers (so that no
    /// report takes the counts before the test does).
    func client(
        _ flags: Flag..., configure: (inout FlagClient.Configuration) -> Void = { _ in }
    ) throws -> FlagClient {
        try makeClient(
            directory: nil, transport: ScriptedTransport(), refresh: .poll, virtualTime: VirtualTime()
        ) { configuration in
            configuration.telemetry = .every(seconds: 60)
            configuration.bootstrap = Docs.set(version: 3, flags: flags).encoded()
            configure(&configuration)
        }
    }

    func counter(_ client: FlagClient) throws -> EvaluationCounter {
        try #require(client.core.counter)
    }

    @Test func firstReadsAreCountedAndFrozenReadsAreNot() throws {
        let client = try client(Docs.flag("new-checkout", true), Docs.flag("dark-mode", false))
        defer { client.shutdown() }
        let first = client.session(unitID: "u-1")
        for _ in 0..<3 { _ = first.value(.newCheckout) }
        _ = first.detail(.newCheckout)
        _ = first.detail(.darkMode)
        _ = first.value(.darkMode)
        _ = first.value(FlagKey("missing", default: 1))
        let second = client.session(unitID: "u-2")
        _ = second.detail(.newCheckout)
        _ = second.value(.newCheckout)
        #expect(
            try counter(client).take() == [
                "new-checkout": ["default": ["STATIC": 2]], "dark-mode": ["default": ["STATIC": 1]],
                "missing": ["": ["DEFAULT": 1]],
            ])
        // Taken: counting starts afresh, and the sessions' frozen reads add nothing.
        _ = first.value(.newCheckout)
        _ = second.detail(.newCheckout)
        #expect(try counter(client).take() == [:])
    }

    @Test func countsCarryTheVariantAndReasonOfEachEvaluation() throws {
        var flag = Flag(key: "checkout", type: .string, defaultValue: .string("old"))
        flag.rules = [
            Rule(
                name: "germany", target: .conditions([Condition(attribute: "country", op: .eq, values: ["DE"])]),
                serve: .value(.string("new")))
        ]
        let client = try client(flag)
        defer { client.shutdown() }
        let key = FlagKey("checkout", default: "none")
        _ = client.session(unitID: "a", attributes: ["country": "DE"]).value(key)
        _ = client.session(unitID: "b", attributes: ["country": "DE"]).value(key)
        _ = client.session(unitID: "c", attributes: ["country": "FR"]).value(key)
        let detail = client.session(unitID: "d", attributes: ["country": "DE"]).detail(key)
        let variant = try #require(detail.variant)
        #expect(detail.reason == .targetingMatch)
        #expect(
            try counter(client).take() == ["checkout": [variant: ["TARGETING_MATCH": 3], "default": ["DEFAULT": 1]]])
    }

    /// A session created before any set is available freezes the default: that first read counts too.
    @Test func aReadBeforeAnySetCountsAsADefault() throws {
        let client = try makeClient(
            directory: nil, transport: ScriptedTransport(), refresh: .poll, virtualTime: VirtualTime()
        ) { $0.telemetry = .every(seconds: 60) }
        defer { client.shutdown() }
        let session = client.session(unitID: "u")
        _ = session.value(.newCheckout)
        _ = session.value(.newCheckout)
        #expect(try counter(client).take() == ["new-checkout": ["": ["DEFAULT": 1]]])
    }

    /// Overrides are not frozen: each read of an overridden flag is an evaluation the app made, counted under
    /// `OVERRIDE`; a flag without an override is still counted once per session.
    @Test func overriddenReadsAreCountedEachTime() throws {
        let client = try client(Docs.flag("new-checkout", false), Docs.flag("dark-mode", false)) {
            $0.environment = ["FLAG_NEW_CHECKOUT": "true"]
        }
        defer { client.shutdown() }
        let session = client.session(unitID: "u")
        #expect(session.value(.newCheckout) == true)
        _ = session.detail(.newCheckout)
        _ = session.value(.darkMode)
        _ = session.value(.darkMode)
        #expect(
            try counter(client).take() == [
                "new-checkout": ["": ["OVERRIDE": 2]], "dark-mode": ["default": ["STATIC": 1]],
            ])
    }

    /// A kill replaces what open sessions serve: each session counts its first read of the kill value once, whether it
    /// had read the flag before or not; reads after that are frozen reads.
    @Test func aKillIsCountedAtEachSessionsFirstReadOfIt() async throws {
        let (client, stream) = try await makeCountingClient(Docs.flag("new-checkout", true))
        defer { client.shutdown() }
        let reader = client.session(unitID: "reader")
        let notYet = client.session(unitID: "not-yet")
        #expect(reader.value(.newCheckout) == true)
        #expect(try counter(client).take() == ["new-checkout": ["default": ["STATIC": 1]]])

        let kill = Docs.patch(version: 8, base: 7, flags: [Docs.flag("new-checkout", true, killed: true)])
        stream.yield(.bytes(Docs.sse("patch", id: 8, kill)))
        try await eventually("v8") { client.state == .live(version: 8) }
        #expect(reader.value(.newCheckout) == false)
        #expect(reader.detail(.newCheckout).reason == .disabled)
        #expect(notYet.detail(.newCheckout).reason == .disabled)
        _ = notYet.value(.newCheckout)
        #expect(try counter(client).take() == ["new-checkout": ["kill": ["DISABLED": 2]]])
    }

    @Test func nothingIsCountedWithTelemetryOrRefreshOff() throws {
        let off = try client(Docs.flag("new-checkout", true)) { $0.telemetry = .off }
        defer { off.shutdown() }
        #expect(off.core.counter == nil)
        #expect(off.core.telemetry == nil)
        _ = off.session(unitID: "u").value(.newCheckout)

        let offline = try makeClient(directory: nil, transport: ScriptedTransport(), refresh: .off) {
            $0.telemetry = .every(seconds: 60)
        }
        defer { offline.shutdown() }
        #expect(offline.core.counter == nil)
        #expect(offline.core.telemetry == nil)
    }

    /// Counting from many threads at once loses nothing.
    @Test func concurrentFirstReadsAreAllCounted() async throws {
        let client = try client(Docs.flag("new-checkout", true), Docs.flag("dark-mode", true))
        defer { client.shutdown() }
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<500 {
                        let session = client.session(unitID: "u-\(task)-\(index)")
                        _ = session.value(.newCheckout)
                        _ = session.value(.darkMode)
                        _ = session.value(.darkMode)
                    }
                }
            }
        }
        #expect(
            try counter(client).take() == [
                "new-checkout": ["default": ["STATIC": 4_000]], "dark-mode": ["default": ["STATIC": 4_000]],
            ])
    }
}
