import FlagClientTesting
import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

@Suite struct OverrideTests {
    @Test func fileAndEnvironmentOverridesAreTypedByTheFlag() async throws {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("flags.env")
            try "new-checkout=true\nmax-items=7\nbad line\n".write(to: file, atomically: true, encoding: .utf8)
            let logs = LogSink()
            let client = try makeClient(directory: nil, transport: ScriptedTransport(), refresh: .off) {
                $0.overridesFile = file.path
                $0.environment = ["FLAG_MAX_ITEMS": "9", "FLAG_DARK_MODE": "maybe"]
                $0.logger = logs.logger
            }
            let session = client.session(unitID: "u")
            let detail = session.detail(.newCheckout)
            #expect(detail.value == true)
            #expect(detail.reason == .override)
            #expect(detail.version == nil)
            #expect(session.value(.maxItems) == 9)  // the environment beats the file
            // A value that is not a bool: reported once, ignored.
            #expect(session.value(.darkMode) == false)
            #expect(session.value(.darkMode) == false)
            #expect(session.detail(.darkMode).reason == .default)
            let warnings = logs.messages.filter { $0.level == .warning }.map(\.message)
            #expect(warnings.filter { $0.contains("dark-mode") }.count == 1)
            #expect(warnings.filter { $0.contains("flags.env:3") }.count == 1)
            client.shutdown()
        }
    }

    @Test func overridesFileFromTheEnvironment() async throws {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("o.env")
            try "FLAG_NEW_CHECKOUT=true\n".write(to: file, atomically: true, encoding: .utf8)
            let client = try makeClient(directory: nil, transport: ScriptedTransport(), refresh: .off) {
                $0.environment = ["FLAGS_OVERRIDE_FILE": file.path]
            }
            #expect(client.session(unitID: "u").value(.newCheckout) == true)
            client.shutdown()
        }
    }

    @Test func disabledOverridesAreIgnored() async throws {
        let client = try makeClient(directory: nil, transport: ScriptedTransport(), refresh: .off) {
            $0.environment = ["FLAG_NEW_CHECKOUT": "true"]
            $0.overridesEnabled = false
        }
        client.setOverride(.maxItems, to: 3)
        let session = client.session(unitID: "u")
        #expect(session.value(.newCheckout) == false)
        #expect(session.value(.maxItems) == 10)
        client.shutdown()
    }

    @Test func apiOverridesApplyAtOnceAndSurviveARestart() async throws {
        try withTemporaryDirectory { directory in
            var client = try makeClient(directory: directory, transport: ScriptedTransport(), refresh: .off)
            let session = client.session(unitID: "u")
            #expect(session.value(.maxItems) == 10)
            client.setOverride(.maxItems, to: 4)
            client.setOverride(FlagKey("title", default: "x"), to: "\"quoted\"")
            #expect(session.detail(.maxItems).reason == .override)
            #expect(session.value(.maxItems) == 4)
            client.shutdown()
            client = try makeClient(directory: directory, transport: ScriptedTransport(), refresh: .off)
            #expect(client.session(unitID: "u").value(.maxItems) == 4)
            #expect(client.session(unitID: "u").value(FlagKey("title", default: "x")) == "\"quoted\"")
            client.setOverride(.maxItems, to: nil)
            #expect(client.session(unitID: "u").value(.maxItems) == 10)
            client.shutdown()
        }
    }

    @Test func fixedFeatureFlagsServeWhatTheyAreGiven() {
        let flags = FixedFeatureFlags([.newCheckout: true]).with(.maxItems, 3)
        #expect(flags.value(.newCheckout) == true)
        #expect(flags.detail(.newCheckout).reason == .static)
        #expect(flags.value(.maxItems) == 3)
        let missing = flags.detail(.darkMode)
        #expect(missing.value == false)
        #expect(missing.errorCode == .flagNotFound)
        let mismatch = flags.detail(FlagKey("max-items", default: "x"))
        #expect(mismatch.value == "x")
        #expect(mismatch.errorCode == .typeMismatch)
        let service: any FeatureFlags = flags
        #expect(service.value(.newCheckout))
    }
}
