import FlagLock
import FlagServer
import Foundation
import Testing

@testable import FlagClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real FlagServer (store, service, HTTP engine) running in the test process on 127.0.0.1 and a free port, with
/// its SQLite store in a data directory of the test's own. Changes are made the way an operator makes them: HTTP
/// requests to the admin API with an admin token.
final class LiveFlagServer: Sendable {
    /// Accepted as an admin token through `FLAGSERVER_ADMIN_TOKEN`, as a CI script would pass it.
    static let adminToken = "fsa_end-to-end-admin-token"

    let app: FlagServerApp
    let server: HTTPServer
    let url: URL
    let port: Int
    let dataDirectory: URL
    private let stopped = Locked(false)

    /// Starts a server on `dataDirectory`: a new store the first time, the same store again after `stop()`; on a
    /// free port, or on `port` (a server coming back where its clients expect it).
    init(dataDirectory: URL, port requested: Int = 0) throws {
        var configuration = ServerConfiguration()
        configuration.port = requested
        configuration.dataDirectory = dataDirectory.path
        configuration.seedDirectory = nil
        configuration.loopCount = 1
        let bootstrap = try ServerBootstrap(
            configuration: configuration, environment: ["FLAGSERVER_ADMIN_TOKEN": Self.adminToken], clock: .system,
            log: { _ in })
        app = bootstrap.app
        server = HTTPServer(configuration: configuration.http, handler: app.handler)
        let port = try server.start()
        app.start(server: server)
        url = URL(string: "http://127.0.0.1:\(port)")!
        self.port = port
        self.dataDirectory = dataDirectory
    }

    /// Stops as on SIGTERM: streams end, in-flight requests finish, the port is closed. Only the first call acts.
    func stop() {
        guard stopped.withLock({ stopped in defer { stopped = true }; return !stopped }) else { return }
        app.shutdown()
        server.shutdown(deadline: .seconds(2))
        app.finishStoreWork()
    }

    /// An admin API request; returns the status and the JSON object answered.
    @discardableResult
    func admin(_ method: String, _ path: String, _ body: String? = nil) async throws -> AdminAnswer {
        try await request(method, path, token: Self.adminToken, body: body)
    }

    /// Any request with `token`.
    func request(_ method: String, _ path: String, token: String, body: String? = nil) async throws -> AdminAnswer {
        var request = URLRequest(url: URL(string: url.absoluteString + path)!)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        return try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                guard let response = response as? HTTPURLResponse else {
                    continuation.resume(throwing: error ?? URLErrorStandIn())
                    return
                }
                continuation.resume(returning: AdminAnswer(status: response.statusCode, body: Array(data ?? Data())))
            }.resume()
        }
    }

    /// Creates set `name` from `document` (a JSON object text) and an SDK key for it; returns the key.
    func createSet(_ name: String, document: String) async throws -> String {
        let created = try await admin("POST", "/v1/admin/sets", #"{"name":"\#(name)","document":\#(document)}"#)
        try #require(created.status == 201, "creating the set: \(created.text)")
        let key = try await admin("POST", "/v1/admin/sets/\(name)/keys", #"{"name":"e2e-\#(name)"}"#)
        try #require(key.status == 201, "creating the SDK key: \(key.text)")
        return try #require(key.json["token"] as? String)
    }
}

/// An HTTP answer from the server.
struct AdminAnswer: Sendable {
    var status: Int
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (empty when it is not one).
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    /// The `version` member of a mutation response.
    var version: Int? { json["version"] as? Int }
}
