import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// A flag that requires another, compiled without the whole set: read from the cache flag by flag (at launch, and
/// always in an app extension's read-only client), or changed by a patch that leaves the flag it requires as it was.
/// The flag it requires comes from the same set.
struct LazyPrerequisiteTests {
    static func seeded(_ directory: URL, newCheckout: Bool) throws {
        var express = Docs.flag("dark-mode", false)
        express.rules = [Rule(name: "everyone", target: .conditions([]), serve: .value(.bool(true)))]
        express.prerequisites = [Prerequisite(flag: "new-checkout", values: [.bool(true)])]
        try seedCache(directory, Docs.bytes(version: 3, Docs.flag("new-checkout", newCheckout), express), version: 3)
    }

    @Test(arguments: [true, false])
    func anExtensionEvaluatesTheRequiredFlagFromTheCache(newCheckout: Bool) throws {
        try withTemporaryDirectory { directory in
            try Self.seeded(directory, newCheckout: newCheckout)
            let client = try SharedCacheTests.extensionClient(directory)
            defer { client.shutdown() }
            #expect(client.core.source is LazySource)
            let detail = client.session(unitID: "u-1").detail(.darkMode)
            #expect(detail.value == newCheckout)
            #expect(detail.reason == (newCheckout ? .targetingMatch : .prerequisiteFailed))
            #expect(detail.errorCode == nil)
        }
    }

    @Test func aPatchChangingOnlyTheDependentIsApplied() async throws {
        try await withTemporaryDirectory { directory in
            try Self.seeded(directory, newCheckout: true)
            let transport = ScriptedTransport()
            let client = try makeClient(directory: directory, transport: transport)
            defer { client.shutdown() }
            let stream = try await transport.openStream()
            stream.yield(.bytes(Array(": current\n\n".utf8)))
            try await eventually("live") { client.state == .live(version: 3) }
            var express = Docs.flag("dark-mode", false)
            express.prerequisites = [Prerequisite(flag: "new-checkout", values: [.bool(true)])]
            express.rules = [Rule(name: "nobody", target: .conditions([]), serve: .value(.bool(false)))]
            stream.yield(.bytes(Docs.sse("patch", id: 4, Docs.patch(version: 4, base: 3, flags: [express]))))
            try await eventually("v4 in use") { client.state == .live(version: 4) }
            let detail = client.session(unitID: "u-1").detail(.darkMode)
            #expect(detail.value == false && detail.reason == .targetingMatch && detail.version == 4)
        }
    }
}
