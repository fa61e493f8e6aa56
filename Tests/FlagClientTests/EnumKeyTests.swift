import FlagClientTesting
import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// A theme this build knows: blue and green.
enum Theme: String, CaseIterable, Sendable {
    case blue, green
}

/// The same theme in a later build, which knows orange too; `Codable`, as app enums often are.
enum NewerTheme: String, CaseIterable, Codable, Sendable {
    case blue, green, orange
}

/// The theme's cases in another order.
enum Reordered: String, CaseIterable, Sendable {
    case orange, green, blue
}

/// An enum whose cases the server would refuse in a report: one raw value is over 64 characters.
enum Verbose: String, CaseIterable, Sendable {
    case short
    case long = "a-raw-value-of-sixty-five-characters-that-no-enum-flag-could-list"
}

/// A `RawRepresentable` type that does not list its cases.
struct Size: RawRepresentable, Sendable, Equatable {
    let rawValue: String
    init?(rawValue: String) {
        guard ["s", "m"].contains(rawValue) else { return nil }
        self.rawValue = rawValue
    }
}

extension FlagKey where Value == Theme {
    static let theme = FlagKey("checkout-theme", default: .blue)
}

/// Enum keys (docs/client.md, "Enum keys"): a `string` flag read as a Swift enum. A served string that is not a case
/// gives the compiled-in default with `ERROR` / `TYPE_MISMATCH`, frozen and counted as such, and never traps; a
/// `CaseIterable` enum's cases are reported.
@Suite(.live) struct EnumKeyTests {
    /// `checkout-theme` serving `value` by default, or from a rule when `rule` is given.
    static func themeFlag(_ value: String, killValue: String? = nil, killed: Bool = false) -> Flag {
        Flag(
            key: "checkout-theme", type: .string, defaultValue: .string(value),
            killValue: killValue.map { .string($0) }, killed: killed)
    }

    func client(
        _ flags: Flag..., telemetry: Bool = true, configure: (inout FlagClient.Configuration) -> Void = { _ in }
    ) throws -> FlagClient {
        try makeClient(directory: nil, transport: ScriptedTransport(), refresh: .poll, virtualTime: VirtualTime()) {
            configuration in
            configuration.telemetry = telemetry ? .every(seconds: 60) : .off
            configuration.bootstrap = Docs.set(version: 3, flags: flags).encoded()
            configure(&configuration)
        }
    }

    @Test func aServedCaseIsReadAsTheEnum() throws {
        let client = try client(Self.themeFlag("green"))
        defer { client.shutdown() }
        let session = client.session(unitID: "u")
        #expect(session.value(.theme) == .green)
        let detail = session.detail(.theme)
        #expect(detail.value == .green)
        #expect(detail.reason == .static)
        #expect(detail.errorCode == nil)
        #expect(FlagKey<Theme>.theme.type == .string)
    }

    /// Whichever read comes first, `value` or `detail`, freezes the mismatch: the default, `ERROR`, `TYPE_MISMATCH`.
    @Test(arguments: [true, false])
    func aServedStringThatIsNotACaseGivesTheDefaultWithTypeMismatch(_ valueFirst: Bool) throws {
        let client = try client(Self.themeFlag("orange"))
        defer { client.shutdown() }
        let session = client.session(unitID: "u")
        if valueFirst { #expect(session.value(.theme) == .blue) }
        let detail = session.detail(.theme)
        #expect(detail.value == .blue)
        #expect(detail.reason == .error)
        #expect(detail.errorCode == .typeMismatch)
        #expect(detail.variant == nil)
        #expect(detail.errorMessage?.contains("served \"orange\", which is not a case of Theme") == true)
        for _ in 0..<3 { #expect(session.value(.theme) == .blue) }
        // Another build's key for the same flag knows orange.
        #expect(client.session(unitID: "v").value(FlagKey("checkout-theme", default: NewerTheme.blue)) == .orange)
    }

    /// Counted once, under `ERROR` and no variant, as a flag of another type is: the set served something this
    /// app cannot read.
    @Test func aMismatchIsCountedAsAnErrorAndTheCasesAreKept() throws {
        let client = try client(Self.themeFlag("orange"))
        defer { client.shutdown() }
        let counter = try #require(client.core.counter)
        #expect(counter.knownValues.isEmpty)
        for unit in ["a", "b"] {
            let session = client.session(unitID: unit)
            _ = session.value(.theme)
            _ = session.detail(.theme)
        }
        #expect(counter.take() == ["checkout-theme": ["": ["ERROR": 2]]])
        #expect(counter.knownValues == ["checkout-theme": .init(values: ["blue", "green"], defaultValue: "blue")])
        // The known values stay for the next report; the counts start afresh.
        #expect(counter.take() == [:])
        #expect(counter.knownValues.count == 1)
    }

    @Test func aStringKeyOfTheSameFlagTakesAnyValueAndDeclaresNothing() throws {
        let client = try client(Self.themeFlag("orange"))
        defer { client.shutdown() }
        #expect(client.session(unitID: "u").value(FlagKey("checkout-theme", default: "blue")) == "orange")
        let counter = try #require(client.core.counter)
        #expect(counter.take() == ["checkout-theme": ["default": ["STATIC": 1]]])
        #expect(counter.knownValues.isEmpty)
    }

    /// A frozen read takes the case its own key's first read found; a session that froze the flag through another
    /// key (a `String` one, or an enum with other cases) still answers each key with its own cases.
    @Test func keysOfOneFlagWithOtherCasesShareASessionCorrectly() throws {
        let client = try client(
            Flag(key: "checkout-theme", type: .string, defaultValue: .string("orange")),
            Flag(key: "banner", type: .string, defaultValue: .string("blue")))
        defer { client.shutdown() }
        let newer = FlagKey("checkout-theme", default: NewerTheme.green)
        let session = client.session(unitID: "u")
        for _ in 0..<2 {
            #expect(session.value(newer) == .orange)
            #expect(session.value(.theme) == .blue)
            #expect(session.value(FlagKey("checkout-theme", default: "x")) == "orange")
        }
        // Blue is the first case of one and the third of the other: the index one key froze must not answer for the
        // other.
        let older = FlagKey("banner", default: Theme.blue)
        let reordered = FlagKey("banner", default: Reordered.orange)
        let other = client.session(unitID: "v")
        for _ in 0..<2 {
            #expect(other.value(older) == .blue)
            #expect(other.value(reordered) == .blue)
            #expect(other.value(FlagKey("banner", default: "x")) == "blue")
        }
    }

    /// A type that does not list its cases is read the same way, and reports none.
    @Test func aRawRepresentableThatIsNotCaseIterableDeclaresNoValues() throws {
        let client = try client(
            Flag(key: "size", type: .string, defaultValue: .string("m")),
            Flag(key: "other-size", type: .string, defaultValue: .string("xl")))
        defer { client.shutdown() }
        let session = client.session(unitID: "u")
        #expect(session.value(FlagKey("size", default: Size(rawValue: "s")!)) == Size(rawValue: "m"))
        #expect(session.detail(FlagKey("other-size", default: Size(rawValue: "s")!)).errorCode == .typeMismatch)
        #expect(try #require(client.core.counter).knownValues.isEmpty)
    }

    /// A `String` enum that is `Codable` too is an enum key of a `string` flag, not a `json` one.
    @Test func aCodableEnumIsStillAStringFlag() throws {
        let key = FlagKey("checkout-theme", default: NewerTheme.green)
        #expect(key.type == .string)
        #expect(key.cases?.known == .init(values: ["blue", "green", "orange"], defaultValue: "green"))
    }

    /// A flag of another type is a mismatch in the core already; no value is checked against the cases.
    @Test func aFlagOfAnotherTypeIsATypeMismatch() throws {
        let client = try client(Flag(key: "checkout-theme", type: .bool, defaultValue: .bool(true)))
        defer { client.shutdown() }
        let detail = client.session(unitID: "u").detail(.theme)
        #expect(detail.value == .blue)
        #expect(detail.errorCode == .typeMismatch)
    }

    /// A kill value that is not a case meets the same check at the first read of it, and stays a kill in the session.
    @Test func aKillValueThatIsNotACaseIsAMismatchToo() async throws {
        let (client, stream) = try await makeCountingClient(Self.themeFlag("green", killValue: "black"))
        defer { client.shutdown() }
        let session = client.session(unitID: "u")
        #expect(session.value(.theme) == .green)
        let counter = try #require(client.core.counter)
        _ = counter.take()

        let killed = Self.themeFlag("green", killValue: "black", killed: true)
        stream.yield(.bytes(Docs.sse("patch", id: 8, Docs.patch(version: 8, base: 7, flags: [killed]))))
        try await eventually("v8") { client.state == .live(version: 8) }
        #expect(session.value(.theme) == .blue)
        #expect(session.detail(.theme).errorCode == .typeMismatch)
        #expect(counter.take() == ["checkout-theme": ["": ["ERROR": 1]]])

        // Restored, the session keeps what the kill gave it.
        stream.yield(
            .bytes(Docs.sse("patch", id: 9, Docs.patch(version: 9, base: 8, flags: [Self.themeFlag("green")]))))
        try await eventually("v9") { client.state == .live(version: 9) }
        #expect(session.detail(.theme).errorCode == .typeMismatch)
        #expect(client.session(unitID: "new").value(.theme) == .green)
    }

    /// Overrides are parsed as strings, then taken only when they are a case.
    @Test func anOverrideMustBeACase() throws {
        let logs = LogSink()
        let client = try client(Self.themeFlag("blue")) {
            $0.environment = ["FLAG_CHECKOUT_THEME": "pink"]
            $0.logger = logs.logger
        }
        defer { client.shutdown() }
        #expect(client.session(unitID: "u").value(.theme) == .blue)
        #expect(logs.messages.contains { $0.message.contains("override of 'checkout-theme'") })
        client.setOverride(.theme, to: .green)
        let detail = client.session(unitID: "v").detail(.theme)
        #expect(detail.value == .green)
        #expect(detail.reason == .override)
        client.setOverride(.theme, to: nil)
        #expect(client.session(unitID: "w").detail(.theme).reason == .static)
    }

    /// A persisted session resumes the mismatch it froze, as it resumes any value.
    @Test func aPersistedMismatchResumesAsAMismatch() throws {
        try withTemporaryDirectory { directory in
            func make() throws -> FlagClient {
                try makeClient(directory: directory, transport: ScriptedTransport(), refresh: .off) {
                    $0.bootstrap = Docs.set(version: 3, flags: [Self.themeFlag("orange")]).encoded()
                }
            }
            let first = try make()
            #expect(first.session(id: "s", unitID: "u").detail(.theme).errorCode == .typeMismatch)
            first.shutdown()
            let second = try make()
            defer { second.shutdown() }
            let resumed = second.session(id: "s", unitID: "u").detail(.theme)
            #expect(resumed.value == .blue)
            #expect(resumed.errorCode == .typeMismatch)
        }
    }

    @Test func fixedFlagsTakeAnEnumCase() {
        let flags = FixedFeatureFlags().with(.theme, .green)
        #expect(flags.value(.theme) == .green)
        let wrong = FixedFeatureFlags(values: ["checkout-theme": .string("pink")])
        #expect(wrong.detail(.theme).errorCode == .typeMismatch)
        #expect(wrong.value(.theme) == .blue)
    }

    // MARK: - What reports carry

    /// A report may carry only what the server takes: an enum it would refuse is left out (not cut, which would
    /// misinform the gate), and the rest within 200 flags and a quarter of a report.
    @Test func knownValuesOutsideTheReportsBoundsAreLeftOut() {
        typealias Known = TelemetryReport.KnownValues
        let long = String(repeating: "x", count: 65)
        let all: [String: Known] = [
            "ok": Known(values: ["a", "b"], defaultValue: "a"),
            "long-value": Known(values: ["a", long], defaultValue: "a"),
            "too-many": Known(values: (0..<65).map { "v\($0)" }),
            "control": Known(values: ["a\u{1B}"]),
            "long-default": Known(values: ["a"], defaultValue: long),
            "": Known(values: ["a"]),
        ]
        let (kept, leftOut) = Known.reportable(all, maxBytes: 1_000)
        #expect(kept == ["ok": all["ok"]!, "long-default": Known(values: ["a"])])
        #expect(leftOut == ["", "control", "long-value", "too-many"])

        let many = Dictionary(uniqueKeysWithValues: (0..<201).map { ("f\($0)", Known(values: ["a"])) })
        let bounded = Known.reportable(many, maxBytes: 1 << 20)
        #expect(bounded.enums.count == 200)
        #expect(bounded.leftOut == ["f99"])
        let small = Known.reportable(many, maxBytes: 100)
        #expect(small.enums.count == 4)  // `"f0":{"values":["a"]}` is 21 bytes, and `"f100":…` 23
    }

    @Test func aReportCarriesTheCasesOfTheEnumKeysRead() async throws {
        let fixture = try TelemetryFixture(configure: { configuration in
            configuration.bootstrap = Docs.bytes(version: 6, Self.themeFlag("green"))
        })
        defer { fixture.client.shutdown() }
        _ = fixture.client.session(unitID: "a").value(.theme)
        _ = fixture.client.session(unitID: "b").value(FlagKey("size", default: Size(rawValue: "s")!))
        _ = fixture.client.session(unitID: "c").value(FlagKey("verbose", default: Verbose.short))
        try await fixture.connect(instance: "in_1", version: 7, Self.themeFlag("green"))
        let sent = try await fixture.report(1)
        #expect(sent.report.enums == ["checkout-theme": .init(values: ["blue", "green"], defaultValue: "blue")])
        let warnings = fixture.logs.messages.filter { $0.message.contains("the cases of the enum keys of") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.hasPrefix("telemetry: the cases of the enum keys of verbose are not") == true)
        #expect(sent.report.counts["checkout-theme"] == ["default": ["STATIC": 1]])
        // Every report says it again.
        fixture.time.release()
        let next = try await fixture.report(2)
        #expect(next.report.enums == sent.report.enums)
        #expect(next.report.counts.isEmpty)
        #expect(fixture.logs.messages.filter { $0.message.contains("the cases of the enum keys of") }.count == 1)
    }
}
