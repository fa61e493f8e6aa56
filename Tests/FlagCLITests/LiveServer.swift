import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `flagserver` of its own for one test: the built binary on port 0 with a temp data directory, stopped with
/// SIGTERM when the test lets go of it.
final class LiveServer {
    let directory: TemporaryDirectory
    /// Where `flagctl` runs: a directory without `data/admin-token`, so nothing hints at it.
    let workspace: TemporaryDirectory
    let url: String
    let token: String
    private let pid: pid_t

    static var binary: URL? {
        Flagctl.binary.map { $0.deletingLastPathComponent().appendingPathComponent("flagserver") }
            .flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil }
    }

    /// Starts the server; `configuration`, when given, is the text of its `--config` file.
    init(configuration: String? = nil) throws {
        directory = try TemporaryDirectory()
        workspace = try TemporaryDirectory()
        let binary = try #require(Self.binary, "flagserver is not built next to the test bundle")
        let logURL = directory.url.appendingPathComponent("server.log")
        var arguments = ["--listen", "127.0.0.1:0", "--data", "data"]
        if let configuration {
            try Data(configuration.utf8).write(to: directory.url.appendingPathComponent("flagserver.json"))
            arguments += ["--config", "flagserver.json"]
        }
        pid = try Spawn.start(
            binary.path, arguments, environment: ["PATH": "/usr/bin:/bin"],
            directory: directory.url.path, stdout: "/dev/null", stderr: logURL.path)
        var port: Int?
        let deadline = Date().addingTimeInterval(20)
        while port == nil && Date() < deadline && !Spawn.hasEnded(pid) {
            // The file is there once the child runs; an unreadable moment just means "not yet".
            let text = String(decoding: (try? Data(contentsOf: logURL)) ?? Data(), as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.contains("listening on http://127.0.0.1:") }) {
                port = Int(line.split(separator: ":").last ?? "")
            } else {
                usleep(20_000)
            }
        }
        guard let port else {
            kill(pid, SIGKILL)
            _ = Spawn.wait(pid)
            throw ServerDidNotStart()
        }
        url = "http://127.0.0.1:\(port)"
        token = try String(contentsOf: directory.url.appendingPathComponent("data/admin-token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit {
        kill(pid, SIGTERM)
        _ = Spawn.wait(pid)
    }

    /// Runs `flagctl` against this server with its admin token, on `set`.
    func ctl(_ arguments: [String], set: String? = "t", token: String? = nil) throws -> Run {
        var environment = ["FLAGCTL_SERVER": url, "FLAGCTL_TOKEN": token ?? self.token]
        if let set { environment["FLAGCTL_SET"] = set }
        return try Flagctl.run(arguments, in: workspace, environment: environment)
    }

    /// Runs `flagctl --json` and parses its one line.
    func json(_ arguments: [String], set: String? = "t") throws -> [String: Any] {
        let run = try ctl(["--json"] + arguments, set: set)
        #expect(run.status == 0, "\(run)")
        return try #require(try Flagctl.jsonObjects(run).first, "no JSON: \(run)")
    }

    /// `flagctl export` to stdout, parsed (it is pretty, several lines).
    func document(set: String) throws -> [String: Any] {
        let run = try ctl(["export"], set: set)
        #expect(run.status == 0, "\(run)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    /// The set's current version.
    func version(of set: String = "t") throws -> Int {
        let sets = try json(["sets", "list"])["sets"] as? [[String: Any]] ?? []
        return try #require(sets.first { $0["name"] as? String == set }?["version"] as? Int)
    }

    /// The flag `key` as the server has it.
    func flag(_ key: String) throws -> [String: Any] {
        try #require(try json(["get", key])["flag"] as? [String: Any])
    }
}

struct ServerDidNotStart: Error {}
