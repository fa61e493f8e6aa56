import FlagCore
import FlagHTTP
import FlagServer
import Foundation

/// The real FlagServer (store, service, HTTP engine) running in the test process on 127.0.0.1 and a free port, with
/// its SQLite store in a data directory of the test's own. Changes are made the way an operator makes them: HTTP
/// requests to the admin API with an admin token. The client's tests and the debug menu's share it.
public final class LiveFlagServer: Sendable {
    /// Accepted as an admin token through `FLAGSERVER_ADMIN_TOKEN`, as a CI script would pass it.
    public static let adminToken = "fsa_end-to-end-admin-token-for-the-live-server"

    /// Set `ios-prod` as the live chaos and signed-set suites create it: `new-checkout` on, `max-items` 20.
    public static let iosProd = """
        {"schema": 1, "set": "ios-prod", "flags": {
          "new-checkout": {"type": "bool", "kind": "ops", "default": true, "killValue": false},
          "max-items": {"type": "int", "kind": "ops", "default": 20, "killValue": 0}}}
        """

    public let app: FlagServerApp
    public let live: LiveHTTPServer
    public let url: URL
    public let port: Int
    public let dataDirectory: URL

    /// Starts a server on `dataDirectory`: a new store the first time, the same store again after `stop()`; on a
    /// free port, or on `port` (a server coming back where its clients expect it).
    public init(dataDirectory: URL, port requested: Int = 0) throws {
        var configuration = ServerConfiguration()
        configuration.port = requested
        configuration.dataDirectory = dataDirectory.path
        configuration.seedDirectory = nil
        configuration.loopCount = 1
        let bootstrap = try ServerBootstrap(
            configuration: configuration, environment: ["FLAGSERVER_ADMIN_TOKEN": Self.adminToken], clock: .system,
            log: { _ in })
        app = bootstrap.app
        live = try LiveHTTPServer(configuration: configuration.http, app: app)
        url = URL(string: "http://127.0.0.1:\(live.port)")!
        port = live.port
        self.dataDirectory = dataDirectory
    }

    /// Stops as on SIGTERM: streams end, in-flight requests finish, the port is closed. Only the first call acts.
    public func stop() {
        live.stop()
    }

    /// An admin API request; returns the status and the JSON object answered.
    @discardableResult
    public func admin(_ method: String, _ path: String, _ body: String? = nil) async throws -> TestResponse {
        try await request(method, path, token: Self.adminToken, body: body)
    }

    /// Any request with `token`, on a connection of its own.
    public func request(_ method: String, _ path: String, token: String, body: String? = nil) async throws
        -> TestResponse
    {
        let port = port
        return try await offThePool {
            try LiveClient(port: port).send(
                method, path, token: token, headers: body == nil ? [] : [("Content-Type", "application/json")],
                body: body ?? "")
        }
    }

    /// Creates set `name` from `document` (a JSON object text) and an SDK key for it; returns the key.
    public func createSet(_ name: String, document: String) async throws -> String {
        let created = try await admin("POST", "/v1/admin/sets", #"{"name":"\#(name)","document":\#(document)}"#)
        guard created.status == 201 else {
            throw TestClientError(description: "creating the set: \(created.status) \(created.text)")
        }
        let key = try await admin("POST", "/v1/admin/sets/\(name)/keys", #"{"name":"e2e-\#(name)"}"#)
        guard key.status == 201 else {
            throw TestClientError(description: "creating the SDK key: \(key.status) \(key.text)")
        }
        guard case .string(let token)? = try key.json("token") else {
            throw TestClientError(description: "no token in the SDK key answer: \(key.text)")
        }
        return token
    }
}

extension LiveFlagServer {
    /// Runs `body` in a directory of its own with a live server (its data in the directory's `server`) that has set
    /// `name`, made from `document`: `body` gets the server, the set's SDK key and the directory. The server stops
    /// after `body`.
    public static func withSet(
        _ name: String, document: String,
        _ body: (LiveFlagServer, _ sdkKey: String, _ directory: URL) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let server = try LiveFlagServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let sdkKey = try await server.createSet(name, document: document)
            try await body(server, sdkKey, directory)
        }
    }
}
