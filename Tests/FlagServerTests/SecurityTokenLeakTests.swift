import FlagCore
import FlagTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A whole session against the real `flagserver` binary, then a search of everything it said for every token.
@Suite(
    "Security: tokens never appear in logs, error bodies or /metrics",
    .enabled(if: ServerProcess.binary != nil), .live)
struct SecurityTokenLeakTests {
    /// Every 8-character window of `token`: a prefix, a suffix or any slice of 8 or more characters contains one.
    static func windows(_ token: String) -> [String] {
        let characters = Array(token)
        guard characters.count >= 8 else { return [token] }
        return (0...(characters.count - 8)).map { String(characters[$0..<($0 + 8)]) }
    }

    /// The first window of any token found in `text`, with where it was found.
    static func leak(of tokens: [String: String], in text: String, _ place: String) -> String? {
        for (name, token) in tokens.sorted(by: { $0.key < $1.key }) {
            if let window = windows(token).first(where: { text.contains($0) }) {
                return "\(place) contains \"\(window)\" of the \(name)"
            }
        }
        return nil
    }

    @Test func aLiveSessionLeaksNoToken() throws {
        try withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("data").path
            // The first start writes the admin token file; the second also accepts an environment token.
            let firstLog = directory.appendingPathComponent("first.log").path
            let environmentToken = "envtok-" + SHA256.hexString(SHA256.hash(UUID().uuidString))
            let first = try Self.startServer(data: data, directory: directory, log: firstLog, environment: [:])
            first.stop(signal: SIGTERM)
            let logPath = directory.appendingPathComponent("server.log").path
            let server = try Self.startServer(
                data: data, directory: directory, log: logPath,
                environment: ["FLAGSERVER_ADMIN_TOKEN": environmentToken])

            var session = Session(port: server.port, dataDirectory: data, environmentToken: environmentToken)
            try session.run()

            server.stop(signal: SIGTERM)
            let serverLog = try String(contentsOfFile: firstLog, encoding: .utf8) + server.output
            #expect(serverLog.hasSuffix("flagserver: stopped\n"))
            #expect(serverLog.contains("created the first admin token"))

            // The SDK key is in the one body that issued it, by design; every other byte must be free of tokens.
            var tokens = session.tokens
            #expect(tokens.count == 4)
            tokens["wrong admin token"] = session.wrongToken
            #expect(Self.leak(of: tokens, in: serverLog, "the server log") == nil)
            for (index, exchange) in session.transcript.enumerated() {
                var others = tokens
                if let shown = exchange.shows { others[shown] = nil }
                let place = "response \(index) to \(exchange.request)"
                #expect(Self.leak(of: others, in: exchange.response, place) == nil)
            }
            #expect(session.transcript.contains { $0.request.hasPrefix("GET /metrics") })
            for file in try FileManager.default.contentsOfDirectory(atPath: data) where file != "admin-token" {
                let bytes = try String(contentsOfFile: "\(data)/\(file)", encoding: .isoLatin1)
                #expect(Self.leak(of: tokens, in: bytes, "data file \(file)") == nil)
            }
        }
    }

    /// Starts the binary on port 0 with its output in `log`, once it says where it listens.
    static func startServer(data: String, directory: URL, log: String, environment: [String: String]) throws
        -> ServerProcess
    {
        try ServerProcess(
            arguments: ["--data", data], directory: directory, environment: environment,
            log: URL(fileURLWithPath: log))
    }

    /// The requests of the session and what they got.
    struct Session {
        struct Exchange {
            var request: String
            var response: String
            /// The token this response is meant to show (a new SDK key), if any.
            var shows: String?
        }

        let port: Int
        let dataDirectory: String
        var tokens: [String: String]
        var transcript: [Exchange] = []

        init(port: Int, dataDirectory: String, environmentToken: String) {
            self.port = port
            self.dataDirectory = dataDirectory
            self.tokens = ["environment token": environmentToken]
        }

        var wrongToken: String {
            let admin = tokens["admin token"] ?? ""
            return String(admin.dropLast()) + (admin.hasSuffix("0") ? "1" : "0")
        }

        mutating func run() throws {
            tokens["admin token"] = try String(contentsOfFile: "\(dataDirectory)/admin-token", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let admin = try #require(tokens["admin token"])
            let environment = try #require(tokens["environment token"])
            let set = "/v1/admin/sets/web-prod"
            let flag = #"{"flag":{"type":"bool","kind":"ops","default":false}}"#

            #expect(try send("GET /healthz", token: nil).status == 200)
            #expect(try send("POST /v1/admin/sets", token: admin, body: #"{"name":"web-prod"}"#).status == 201)
            #expect(try send("PUT \(set)/flags/checkout", token: admin, body: flag).status == 201)
            #expect(try send("POST \(set)/flags/checkout/kill?reason=incident", token: environment).status == 200)
            for name in ["web-app", "old-app"] {
                let created = try send("POST \(set)/keys", token: admin, body: "{\"name\":\"\(name)\"}")
                #expect(created.status == 201)
                let key = try #require(created.json("token")?.stringValue)
                tokens["SDK key \(name)"] = key
                transcript[transcript.count - 1].shows = "SDK key \(name)"
            }
            let key = try #require(tokens["SDK key web-app"])
            let revoked = try #require(tokens["SDK key old-app"])
            #expect(try send("DELETE \(set)/keys/old-app?reason=leaked", token: admin).status == 200)

            #expect(try send("GET /v1/sets/web-prod", token: key).status == 200)
            #expect(try send("GET /v1/sets/web-prod", token: revoked).status == 401)
            #expect(try send("GET /v1/sets/web-prod", token: wrongToken).status == 401)
            #expect(try send("GET \(set)/flags", token: key).status == 403)
            #expect(try send("GET /v1/admin/sets", header: "Basic \(admin)").status == 401)
            #expect(try send("GET /v1/admin/sets", header: "Bearer \(admin) \(key)").status == 401)
            #expect(try send("GET /v1/admin/sets", header: "Bearer \(String(admin.prefix(20)))").status == 401)
            #expect(try send("PATCH \(set)", token: admin).status == 405)
            #expect(try send("GET /v1/sets/web-prod/versions/99", token: key).status == 404)
            let stale = try send("POST \(set)/flags/checkout/restore", token: admin, extra: [("If-Match", "\"1\"")])
            #expect(stale.status == 409)
            let invalid = #"{"flag":{"type":"bool","kind":"ops","default":3}}"#
            #expect(try send("PUT \(set)/flags/checkout", token: admin, body: invalid).status == 422)
            #expect(try send("POST /v1/admin/sets", token: admin, body: "{").status == 400)
            let ofrep = #"{"context":{"targetingKey":"u-1"}}"#
            #expect(try send("POST /ofrep/v1/evaluate/flags/checkout", token: key, body: ofrep).status == 200)
            #expect(try send("GET \(set)/keys", token: admin).status == 200)
            #expect(try send("GET \(set)/audit", token: admin).status == 200)
            #expect(try send("GET \(set)/history", token: admin).status == 200)
            #expect(try send("GET /metrics", token: key).status == 403)
            #expect(try send("GET /metrics", token: admin).status == 200)
        }

        /// Sends `line` (method and target) on a fresh connection and records the whole answer.
        mutating func send(
            _ line: String, token: String? = nil, header: String? = nil, extra: [(String, String)] = [],
            body: String = ""
        ) throws -> TestResponse {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            var headers = [("Connection", "close")] + extra
            if let header { headers.append(("Authorization", header)) }
            let response = try LiveClient(port: port).send(
                parts[0], parts[1], token: token, headers: headers, body: body)
            let fields = response.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
            transcript.append(Exchange(request: line, response: "\(response.status)\n\(fields)\n\n\(response.text)"))
            return response
        }
    }
}

extension JSONValue {
    /// The string, if this is one.
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
