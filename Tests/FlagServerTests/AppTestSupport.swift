import FlagCore
import FlagLock
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagHTTP
@testable import FlagServer

/// A clock a test moves by hand, starting at 2027-01-15T08:00:00Z; a `running` one also moves with real time, for
/// work that waits for its time to come (webhook retries).
final class TestClock: Sendable {
    private let date = Locked(Date(timeIntervalSince1970: 1_800_000_000))
    private let started: ContinuousClock.Instant?

    init(running: Bool = false) {
        started = running ? ContinuousClock.now : nil
    }

    var clock: ServerClock { ServerClock { [self] in now } }
    var now: Date {
        let elapsed = started.map { (ContinuousClock.now - $0).timeInterval } ?? 0
        return date.withLock { $0 }.addingTimeInterval(elapsed)
    }

    func advance(seconds: Double) {
        date.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// A `FLAGSERVER_ADMIN_TOKEN` long enough for the start to take it (`ServerBootstrap.minimumEnvironmentTokenLength`).
let environmentAdminToken = "fsa_environment-admin-token-for-the-tests"

/// The set every app test starts from: two cohorts, a bool release flag with targeting, an int ops flag.
let fixtureDocument = """
    {"schema":1,"set":"ios-prod","cohorts":{"beta":{"include":["u-1","u-2"]},
     "de":{"groups":[[{"attribute":"country","op":"eq","values":["DE"]}]]}},
     "flags":{"new-checkout":{"type":"bool","kind":"release","default":false,"killValue":false,
       "rules":[{"name":"beta-first","cohort":"beta","value":true}]},
     "search-timeout-ms":{"type":"int","kind":"ops","default":800}}}
    """

extension ServerConfiguration {
    /// A start's configuration with its data in `directory`/data, seeded from `seeds` (no seed sets unless given).
    static func test(in directory: URL, seeds: URL? = nil) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.dataDirectory = directory.appendingPathComponent("data").path
        configuration.seedDirectory = seeds?.path
        return configuration
    }
}

extension ServerBootstrap {
    /// A start on `configuration` at `clock`'s time, its log dropped, with `adminToken` as `FLAGSERVER_ADMIN_TOKEN`
    /// when given and no other environment.
    static func quiet(
        _ configuration: ServerConfiguration, adminToken: String? = nil, clock: TestClock = TestClock()
    ) throws -> ServerBootstrap {
        try ServerBootstrap(
            configuration: configuration, environment: adminToken.map { ["FLAGSERVER_ADMIN_TOKEN": $0] } ?? [:],
            clock: clock.clock, log: { _ in })
    }
}

/// An app on an SQLite file in its own directory, with the fixture set `ios-prod` at version 1, an empty set
/// `android-prod`, an admin token and an SDK key for `ios-prod`. Its server has a key-encryption key, as a default
/// flagserver does, so both sets are signed (docs/signing.md), unless `signed` is false.
struct AppHarness {
    let directory: URL
    let clock: TestClock
    let app: FlagServerApp
    let admin: String
    let sdk: String
    let keyEncryptionKey: KeyEncryptionKey?

    var databasePath: String { directory.appendingPathComponent("flags.sqlite").path }

    init(
        directory: URL, clock: TestClock = TestClock(), settings: FlagServerApp.Settings = .init(), signed: Bool = true
    ) throws {
        self.directory = directory
        self.clock = clock
        let store = try SQLiteFlagStore(path: directory.appendingPathComponent("flags.sqlite").path)
        keyEncryptionKey = signed ? try KeyEncryptionKey.generate() : nil
        let service = try FlagService(store: store, clock: clock.clock, keyEncryptionKey: keyEncryptionKey)
        let tokens = try TokenAuthority(tokens: store.tokens, clock: clock.clock, environmentToken: "env-secret-token")
        let note = ChangeNote(actor: "test", action: "set.create")
        try service.createSet("ios-prod", from: FlagSet.decode(Array(fixtureDocument.utf8)), note: note)
        try service.createSet("android-prod", note: note)
        admin = try tokens.issue(
            name: "root", role: .admin(.admin, sets: nil), note: ChangeNote(actor: "test", action: "token.create")
        )
        .token
        sdk = try tokens.issue(
            name: "ios-app", role: .sdk(set: "ios-prod"), note: ChangeNote(actor: "test", action: "key.create")
        ).token
        app = FlagServerApp(service: service, tokens: tokens, clock: clock.clock, settings: settings)
    }

    /// The same data directory opened again, as after a restart, with the same key-encryption key.
    func reopened() throws -> FlagServerApp {
        let store = try SQLiteFlagStore(path: databasePath)
        let service = try FlagService(store: store, clock: clock.clock, keyEncryptionKey: keyEncryptionKey)
        let tokens = try TokenAuthority(tokens: store.tokens, clock: clock.clock, environmentToken: nil)
        return FlagServerApp(service: service, tokens: tokens, clock: clock.clock)
    }

    /// The app in process, without sockets: the `.router` back end of the one request API.
    var client: InProcessClient { InProcessClient(handler: app.handler) }

    /// Sends a request to the handler and returns its recorder (for streams and long-polls).
    func start(
        _ method: String, _ target: String, token: String? = nil, headers: [(String, String)] = [], body: String = ""
    ) -> HTTPResponseRecorder {
        let authorization = token.map { [("Authorization", "Bearer \($0)")] } ?? []
        return client.start(method, target, headers: authorization + headers, body: Array(body.utf8))
    }

    /// Sends a request that must be answered without waiting for a version (within 5 s: admin requests run on the
    /// store queue), as the admin unless `token` says otherwise. Returns once what the request published has reached
    /// the streams and long-polls (`settle()`), as a client on another connection would see it a moment later.
    func send(
        _ method: String, _ target: String, token: String? = "admin", headers: [(String, String)] = [],
        body: String = ""
    ) throws -> TestResponse {
        let response = try client.send(
            method, target, token: token == "admin" ? admin : token, headers: headers, body: body)
        settle()
        return response
    }

    /// Returns when the store route running now has finished and every signal made so far has been told to the
    /// subscribers: a write's fan-out starts after its answer (`SetRegistry.answeringFirst`).
    func settle() {
        app.storeWork.sync {}
        app.service.registry.waitForFanout()
    }
}

/// A harness in a fresh directory; `signed: false` leaves its sets unsigned.
func withHarness<T>(
    settings: FlagServerApp.Settings = .init(), signed: Bool = true, _ body: (AppHarness) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        try await body(AppHarness(directory: directory, settings: settings, signed: signed))
    }
}

/// A harness in a fresh directory served live on port 0 (`withLive`, `configure`), for synchronous tests; `signed:
/// false` leaves its sets unsigned.
func withLiveHarness(
    signed: Bool = true, _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    _ body: (AppHarness, LiveHTTPServer) throws -> Void
) throws {
    try withTemporaryDirectory { directory in
        let harness = try AppHarness(directory: directory, signed: signed)
        try harness.withLive(configure) { live in try body(harness, live) }
    }
}

extension AppHarness {
    /// Kills `flag` of `ios-prod` through the admin API over a new socket to `port`; the response.
    func killOverSocket(_ flag: String, port: Int, reason: String) throws -> TestResponse {
        try LiveClient(port: port).send(
            "POST", "/v1/admin/sets/ios-prod/flags/\(flag)/kill", token: admin, body: #"{"reason":"\#(reason)"}"#)
    }

    /// Runs `body` with this app served live on port 0 (two loops unless `configure` says otherwise): the `.live`
    /// back end of the one request API.
    func withLive(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }, _ body: (LiveHTTPServer) throws -> Void
    ) throws {
        let live = try LiveHTTPServer(configuration: LiveHTTPServer.configuration(configure), app: app)
        defer { live.stop() }
        try body(live)
    }

    /// `withLive` for async tests.
    func withLive(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }, _ body: (LiveHTTPServer) async throws -> Void
    ) async throws {
        let live = try LiveHTTPServer(configuration: LiveHTTPServer.configuration(configure), app: app)
        defer { live.stop() }
        try await body(live)
    }
}

/// The real app (SQLite store, tokens, routes) served over real sockets on port 0, in a directory of its own.
func withLiveApp(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    _ body: (AppHarness, HTTPServer, Int) async throws -> Void
) async throws {
    try await withHarness { harness in
        try await harness.withLive(configure) { live in try await body(harness, live.server, live.port) }
    }
}

/// The members of a JSON object body.
func jsonMembers(_ body: [UInt8]) throws -> [String: JSONValue] {
    let value = try JSONReader.parse(body)
    guard case .object(let members) = value else {
        throw JSONShapeError(description: "not a JSON object: \(String(decoding: body, as: UTF8.self))")
    }
    return members
}

struct JSONShapeError: Error, CustomStringConvertible {
    let description: String
}

extension JSONValue {
    /// The text of a string value; nil for any other value.
    var text: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }
}

extension TestResponse {
    /// The `path` of each problem an error answer lists (`error.problems`); nil when it lists none.
    func problemPaths() throws -> [String]? {
        guard case .array(let problems)? = try json("error.problems") else { return nil }
        return problems.compactMap { $0.member("path")?.text }
    }
}
