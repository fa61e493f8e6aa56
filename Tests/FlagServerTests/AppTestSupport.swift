import FlagCore
import FlagLock
import Foundation
import Testing

@testable import FlagServer

/// A clock a test moves by hand, starting at 2027-01-15T08:00:00Z.
final class TestClock: Sendable {
    private let date = Locked(Date(timeIntervalSince1970: 1_800_000_000))

    var clock: ServerClock { ServerClock { [self] in now } }
    var now: Date { date.withLock { $0 } }

    func advance(seconds: Double) {
        date.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// The set every app test starts from: two cohorts, a bool release flag with targeting, an int ops flag.
let fixtureDocument = """
    {"schema":1,"set":"ios-prod","cohorts":{"beta":{"include":["u-1","u-2"]},
     "de":{"groups":[[{"attribute":"country","op":"eq","values":["DE"]}]]}},
     "flags":{"new-checkout":{"type":"bool","kind":"release","default":false,"killValue":false,
       "rules":[{"name":"beta-first","cohort":"beta","value":true}]},
     "search-timeout-ms":{"type":"int","kind":"ops","default":800}}}
    """

/// An app on an SQLite file in its own directory, with the fixture set `ios-prod` at version 1, an empty set
/// `android-prod`, an admin token and an SDK key for `ios-prod`.
struct AppHarness {
    let directory: URL
    let clock: TestClock
    let app: FlagServerApp
    let admin: String
    let sdk: String

    var databasePath: String { directory.appendingPathComponent("flags.sqlite").path }

    init(directory: URL, clock: TestClock = TestClock(), settings: FlagServerApp.Settings = .init()) throws {
        self.directory = directory
        self.clock = clock
        let store = try SQLiteFlagStore(path: directory.appendingPathComponent("flags.sqlite").path)
        let service = try FlagService(store: store, clock: clock.clock)
        let tokens = try TokenAuthority(store: store, clock: clock.clock, environmentToken: "env-secret-token")
        let note = ChangeNote(actor: "test", action: "set.create")
        try service.createSet("ios-prod", from: FlagSet.decode(Array(fixtureDocument.utf8)), note: note)
        try service.createSet("android-prod", note: note)
        admin = try tokens.issue(name: "root", role: .admin, note: ChangeNote(actor: "test", action: "token.create"))
            .token
        sdk = try tokens.issue(
            name: "ios-app", role: .sdk(set: "ios-prod"), note: ChangeNote(actor: "test", action: "key.create")
        ).token
        app = FlagServerApp(service: service, tokens: tokens, clock: clock.clock, settings: settings)
    }

    /// The same data directory opened again, as after a restart.
    func reopened() throws -> FlagServerApp {
        let store = try SQLiteFlagStore(path: databasePath)
        let service = try FlagService(store: store, clock: clock.clock)
        let tokens = try TokenAuthority(store: store, clock: clock.clock, environmentToken: nil)
        return FlagServerApp(service: service, tokens: tokens, clock: clock.clock)
    }

    /// Sends a request to the handler and returns its recorder (for streams and long-polls).
    func start(
        _ method: String, _ target: String, token: String? = nil, headers: [(String, String)] = [], body: String = ""
    ) -> HTTPResponseRecorder {
        var fields = HTTPHeaders()
        if let token { fields.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { fields.add(name: name, value: value) }
        let recorder = HTTPResponseRecorder()
        app.handle(
            HTTPRequest(method: method, target: target, headers: fields, body: Array(body.utf8)), recorder.responder)
        return recorder
    }

    /// Sends a request that must be answered without waiting for a version (within 5 s: admin requests run on the
    /// store queue), as the admin unless `token` says otherwise.
    func send(
        _ method: String, _ target: String, token: String? = "admin", headers: [(String, String)] = [],
        body: String = ""
    ) throws -> HTTPResponse {
        let recorder = start(method, target, token: token == "admin" ? admin : token, headers: headers, body: body)
        let deadline = ContinuousClock.now + .seconds(5)
        while recorder.response == nil && ContinuousClock.now < deadline { usleep(100) }
        return try #require(recorder.response, "\(method) \(target) was not answered")
    }
}

/// Runs `body` with a fresh directory of its own, removed afterwards.
func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("FlagServerAppTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// A harness in a fresh directory.
func withHarness<T>(
    settings: FlagServerApp.Settings = .init(), _ body: (AppHarness) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in try await body(AppHarness(directory: directory, settings: settings))
    }
}

extension HTTPResponse {
    /// The body as text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as JSON.
    func json() throws -> JSONValue { try JSONReader.parse(body) }

    /// A member of a JSON object body, by a dotted path (`error.code`, `flag.killed`).
    func json(_ path: String) throws -> JSONValue? {
        var value: JSONValue? = try json()
        for part in path.split(separator: ".") {
            guard case .object(let members)? = value else { return nil }
            value = members[String(part)]
        }
        return value
    }
}

/// Polls `condition` every millisecond until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(2), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

extension AppHarness {
    /// Kills `flag` of `ios-prod` through the admin API over a new socket to `port`; the response.
    func killOverSocket(_ flag: String, port: Int, reason: String) throws -> TestResponse {
        let admin = try TestClient(port: port)
        let body = #"{"reason":"\#(reason)"}"#
        admin.send(
            "POST /v1/admin/sets/ios-prod/flags/\(flag)/kill HTTP/1.1\r\nHost: t\r\n"
                + "Authorization: Bearer \(self.admin)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        return try admin.readResponse()
    }
}
