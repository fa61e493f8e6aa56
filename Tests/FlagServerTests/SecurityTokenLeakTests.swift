import FlagCore
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A whole session against the real `flagserver` binary, then a search of everything it said for every token.
@Suite(
    "Security: tokens never appear in logs, error bodies or /metrics",
    .enabled(if: FileManager.default.isExecutableFile(atPath: flagserverBinary.path)))
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
            ServerProcess.stop(first.pid, signal: SIGTERM)
            let logPath = directory.appendingPathComponent("server.log").path
            let (pid, port) = try Self.startServer(
                data: data, directory: directory, log: logPath,
                environment: ["FLAGSERVER_ADMIN_TOKEN": environmentToken])
            var running = true
            defer { if running { ServerProcess.stop(pid, signal: SIGKILL) } }
            let log = { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

            var session = Session(port: port, dataDirectory: data, environmentToken: environmentToken)
            try session.run()

            ServerProcess.stop(pid, signal: SIGTERM)
            running = false
            let serverLog = try String(contentsOfFile: firstLog, encoding: .utf8) + log()
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

    /// Starts the binary on port 0 with its output in `log`; its pid and port once it says where it listens.
    static func startServer(data: String, directory: URL, log: String, environment: [String: String]) throws
        -> (pid: pid_t, port: Int)
    {
        let pid = try ServerProcess.start(
            flagserverBinary.path, ["--listen", "127.0.0.1:0", "--data", data],
            environment: environment.merging(["PATH": "/usr/bin:/bin"]) { $1 }, directory: directory.path,
            output: log)
        let text = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        guard waitUntil(timeout: .seconds(30), { text().contains("listening on") }),
            let line = text().split(separator: "\n").first(where: { $0.contains("listening on http") }),
            let port = Int(line.split(separator: ":").last ?? "")
        else {
            ServerProcess.stop(pid, signal: SIGKILL)
            throw TestClientError(description: "flagserver did not start: \(text())")
        }
        return (pid, port)
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
            let stale = try send("POST \(set)/flags/checkout/restore", token: admin, extra: "If-Match: \"1\"\r\n")
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
            _ line: String, token: String? = nil, header: String? = nil, extra: String = "", body: String = ""
        ) throws -> TestResponse {
            let client = try TestClient(port: port)
            var head = "\(line) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\(extra)"
            if let token { head += "Authorization: Bearer \(token)\r\n" }
            if let header { head += "Authorization: \(header)\r\n" }
            if !body.isEmpty { head += "Content-Length: \(body.utf8.count)\r\n" }
            client.send(head + "\r\n" + body)
            let response = try client.readResponse()
            let headers = response.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
            transcript.append(
                Exchange(request: line, response: "\(response.status)\n\(headers)\n\n\(response.bodyText)"))
            return response
        }
    }
}

extension TestResponse {
    /// A member of a JSON object body.
    func json(_ member: String) throws -> JSONValue? {
        guard case .object(let members) = try JSONReader.parse(body) else { return nil }
        return members[member]
    }
}

extension JSONValue {
    /// The string, if this is one.
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

/// The server as a child process: `posix_spawn` with stdout and stderr in one file, reaped with `waitpid` (see
/// `FlagCLITests/Spawn.swift` for why not Foundation's `Process`).
enum ServerProcess {
    static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], directory: String,
        output: String
    ) throws -> pid_t {
        let argv = ["/bin/sh", "-c", #"cd "$0" || exit 127; exec "$@""#, directory, executable] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let pointers = (argv + envp).map { strdup($0) }
        defer { for pointer in pointers { free(pointer) } }
        var argvPointers = Array(pointers[..<argv.count]) + [nil]
        var envPointers = Array(pointers[argv.count...]) + [nil]
        var pid: pid_t = 0
        let status = posix_spawn(&pid, "/bin/sh", &actions, nil, &argvPointers, &envPointers)
        guard status == 0 else { throw TestClientError(description: "posix_spawn \(executable): error \(status)") }
        return pid
    }

    /// Sends `signal` and reaps the process; SIGKILL after 20 s if it has not ended.
    static func stop(_ pid: pid_t, signal: Int32) {
        kill(pid, signal)
        var status: Int32 = 0
        let ended = waitUntil(timeout: .seconds(20)) { waitpid(pid, &status, WNOHANG) == pid }
        if !ended {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
        }
    }
}
