import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// `refresh()`, `suspend()` and `resume()` against the scripted transport: what is fetched, and when.
@Suite struct LifecycleTests {
    /// A server that answers `document` with its version as the ETag, and 304 to a request that names it.
    static func conditionalServer(_ version: Box<Int>) -> ScriptedTransport {
        ScriptedTransport { request in
            let current = version.value
            if request.headers["If-None-Match"] == "\"\(current)\"" {
                return (TransportHead(status: 304, headers: [:]), [])
            }
            return (
                TransportHead(status: 200, headers: ["etag": "\"\(current)\""]),
                Docs.bytes(version: current, Docs.flag("new-checkout", current > 1))
            )
        }
    }

    @Test func refreshFetchesInModeOffAndAnswersLiveOn200And304() async throws {
        try await withTemporaryDirectory { directory in
            let version = Box(1)
            let transport = Self.conditionalServer(version)
            let client = try makeClient(directory: directory, transport: transport, refresh: .off)
            defer { client.shutdown() }
            #expect(client.state == .defaultsOnly)
            #expect(await client.refresh())
            #expect(client.state == .live(version: 1))
            #expect(await client.refresh())
            #expect(client.state == .live(version: 1))
            version.value = 2
            #expect(await client.refresh())
            #expect(client.state == .live(version: 2))
            #expect(client.session(unitID: "u").value(.newCheckout) == true)
            #expect(transport.fetches.map { $0.headers["If-None-Match"] } == [nil, "\"1\"", "\"1\""])
        }
    }

    @Test func refreshAnswersFalseWhenTheServerCannotBeReached() async throws {
        try await withTemporaryDirectory { directory in
            let transport = ScriptedTransport()
            let client = try makeClient(directory: directory, transport: transport, refresh: .off)
            defer { client.shutdown() }
            #expect(await client.refresh() == false)
            #expect(client.state == .defaultsOnly)
            #expect(transport.fetches.count == 1)
        }
    }

    @Test func refreshAnswersFalseWhenTheKeyIsRefused() async throws {
        let transport = ScriptedTransport { _ in (TransportHead(status: 401, headers: [:]), []) }
        let client = try makeClient(directory: nil, transport: transport, refresh: .off)
        defer { client.shutdown() }
        #expect(await client.refresh() == false)
    }

    /// A refresh called before the loop compiled the cached set is not undone by it: the loop's first step would
    /// otherwise put the older cached set back in use.
    @Test func aRefreshBeforeTheLoopStartsKeepsTheNewerSet() async throws {
        try await withTemporaryDirectory { directory in
            try seedCache(directory, Docs.bytes(version: 1, Docs.flag("new-checkout", false)), version: 1)
            let version = Box(2)
            let client = try makeClient(directory: directory, transport: Self.conditionalServer(version), refresh: .off)
            defer { client.shutdown() }
            #expect(await client.refresh())
            try await Task.sleep(for: .milliseconds(50))
            #expect(client.state == .live(version: 2))
            #expect(client.session(unitID: "u").value(.newCheckout) == true)
        }
    }
}

/// A value a test changes while a transport's handler reads it.
final class Box<Value: Sendable>: Sendable {
    private let box: Locked<Value>
    init(_ value: Value) { box = Locked(value) }
    var value: Value {
        get { box.withLock { $0 } }
        set { box.withLock { $0 = newValue } }
    }
}
