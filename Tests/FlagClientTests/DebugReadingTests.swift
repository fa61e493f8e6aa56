import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// What the debug menu reads of a client (`FlagClient+Debug.swift`), for each form the set in use takes: the flags
/// it lists and the readings it gives. The menu's own tests (FlagDebugMenuTests) go through the public API, where a
/// client compiles a cached set at once, so the lazy and patched forms are put in place here.
@Suite struct DebugReadingTests {
    static let flags = [
        Docs.flag("new-checkout", true),
        Flag(key: "max-items", type: .int, defaultValue: .int(20), description: "Items per page"),
        Flag(key: "retired", type: .bool, defaultValue: .bool(true), archived: true),
    ]

    /// A client serving nothing of its own: no cache, no refresh, so that the test puts the source in use.
    private func client(environment: [String: String] = [:]) throws -> FlagClient {
        try makeClient(directory: nil, transport: ScriptedTransport(), refresh: .off) {
            $0.environment = environment
        }
    }

    @Test func listsAWholeSetWithoutItsArchivedFlags() throws {
        let client = try client()
        #expect(client.flagsInUse().isEmpty)
        #expect(client.versionInUse == nil)
        client.core.publish(
            source: CompiledSource(CompiledFlagSet(Docs.set(version: 3, flags: Self.flags))), state: .live(version: 3))
        let flags = client.flagsInUse()
        #expect(Set(flags.keys) == ["new-checkout", "max-items"])
        #expect(flags["max-items"]??.description == "Items per page")
        #expect(client.versionInUse == 3)
    }

    @Test func listsALazySetWithItsPatchesAndUnreadableFlags() throws {
        let client = try client()
        let document = Array(
            #"""
            {"schema": 1, "set": "ios-prod", "version": 4, "flags": {
              "new-checkout": {"type": "bool", "kind": "ops", "default": true},
              "max-items": {"type": "int", "kind": "ops", "default": 20},
              "broken": {"type": 5}}}
            """#.utf8)
        let patch = SetPatch(
            version: 5, base: 4, flags: ["dark-mode": Docs.flag("dark-mode", false).encoded()],
            removedFlags: ["max-items"])
        let lazy = LazySource(index: try DocumentIndex(scanning: document), patches: [patch])
        client.core.publish(source: lazy, state: .cached(version: 5))
        let flags = client.flagsInUse()
        #expect(Set(flags.keys) == ["new-checkout", "dark-mode", "broken"])
        #expect(flags["broken"].map { $0 == nil } == true)  // listed, but not readable
        #expect(flags["dark-mode"]??.type == .bool)
    }

    @Test func listsAPatchedSet() throws {
        let client = try client()
        let base = CompiledSource(CompiledFlagSet(Docs.set(version: 3, flags: Self.flags)))
        let overlay = CompiledFlagSet(Docs.set(version: 4, flags: [Docs.flag("dark-mode", true)]))
        let patched = OverlaySource(
            base: base, overlay: overlay, changed: ["dark-mode"], removed: ["new-checkout"], version: 4, killed: [:])
        client.core.publish(source: patched, state: .live(version: 4))
        #expect(Set(client.flagsInUse().keys) == ["max-items", "dark-mode"])
        let reading = client.reading(AnyFlagKey(FlagKey.darkMode), context: EvaluationContext(unitID: "u-1"))
        #expect(reading.detail.value == .bool(true))
        #expect(reading.detail.version == 4)
    }

    @Test func readsAsASessionsFirstReadWould() throws {
        let client = try client(environment: ["FLAG_MAX_ITEMS": "many"])
        let context = EvaluationContext(unitID: "u-1")
        let notReady = client.reading(AnyFlagKey(FlagKey.maxItems), context: context)
        #expect(notReady.detail.errorCode == .providerNotReady)
        #expect(notReady.detail.value == .int(10))

        client.core.publish(
            source: CompiledSource(CompiledFlagSet(Docs.set(version: 3, flags: Self.flags))), state: .live(version: 3))
        // The environment's override is not an int: shown, ignored, and the set decides.
        let ignored = client.reading(AnyFlagKey(FlagKey.maxItems), context: context)
        #expect(
            ignored.override
                == FlagClient.DebugOverride(text: "many", source: "environment FLAG_MAX_ITEMS", isFromAPI: false))
        #expect(ignored.overrideProblem == "'many' is not a 64-bit integer")
        #expect(ignored.detail.value == .int(20) && ignored.detail.reason == .static)

        client.setOverride(named: "max-items", to: .int(3))
        let overridden = client.reading(AnyFlagKey(FlagKey.maxItems), context: context)
        #expect(overridden.detail.value == .int(3) && overridden.detail.reason == .override)
        #expect(overridden.override?.isFromAPI == true && overridden.overrideProblem == nil)

        // A value of another type than the key's: its default, as a session would serve it.
        let asInt = FlagKey<Int>("new-checkout", default: 7)
        let mismatch = client.reading(AnyFlagKey(asInt), context: context)
        #expect(mismatch.detail.errorCode == .typeMismatch && mismatch.detail.value == .int(7))

    }
}
