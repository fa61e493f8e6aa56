import FlagTestSupport
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
    let port: Int
    let token: String
    private let process: ServerProcess

    static var binary: URL? { ServerProcess.binary }

    /// Starts the server; `configuration`, when given, is the text of its `--config` file.
    init(configuration: String? = nil) throws {
        directory = try TemporaryDirectory()
        workspace = try TemporaryDirectory()
        var arguments = ["--data", "data"]
        if let configuration {
            try Data(configuration.utf8).write(to: directory.url.appendingPathComponent("flagserver.json"))
            arguments += ["--config", "flagserver.json"]
        }
        process = try ServerProcess(
            arguments: arguments, directory: directory.url,
            log: directory.url.appendingPathComponent("server.log"), timeout: .patience)
        url = process.url
        port = process.port
        token = try String(contentsOf: directory.url.appendingPathComponent("data/admin-token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit {
        // Before the directories go: the server must not see its data directory removed under it.
        process.stop(signal: SIGTERM)
    }

    /// Runs `flagctl` against this server with its admin token, on `set`.
    func ctl(_ arguments: [String], set: String? = "t", token: String? = nil) throws -> Run {
        var environment = ["FLAGCTL_SERVER": url, "FLAGCTL_TOKEN": token ?? self.token]
        if let set { environment["FLAGCTL_SET"] = set }
        return try Flagctl.run(arguments, in: workspace, environment: environment)
    }

    /// Starts `flagctl` against this server as `ctl` does, without waiting for it.
    func start(_ arguments: [String], set: String? = "t") throws -> Flagctl.Running {
        var environment = ["FLAGCTL_SERVER": url, "FLAGCTL_TOKEN": token]
        if let set { environment["FLAGCTL_SET"] = set }
        return try Flagctl.start(arguments, in: workspace, environment: environment)
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
