import FlagHTTP
import FlagServer
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension LiveHTTPServer {
    /// Starts the engine in front of `app`, and the app's heartbeats and metrics with it; what the engine refuses
    /// before a route is rendered as flagserver renders it.
    public convenience init(configuration: HTTPServerConfiguration, app: FlagServerApp) throws {
        var configuration = configuration
        configuration.renderRejection = FlagServerApp.renderRejection
        let beside = LiveApplication(
            start: { app.start(server: $0) }, beforeShutdown: { app.shutdown() },
            afterShutdown: { app.finishStoreWork() })
        try self.init(configuration: configuration, handler: app.handler, application: beside)
    }

    /// A new connection to the server, for requests through the one request API.
    public func client() throws -> LiveClient {
        try LiveClient(port: port)
    }
}

/// The built `flagserver` binary as a child process listening on 127.0.0.1 and a port of its own, with stdout and
/// stderr in one log file. Stopped with SIGTERM when the test lets go of it, unless stopped before.
public final class ServerProcess {
    /// The child's process id.
    public let pid: pid_t
    /// The port it said it listens on.
    public let port: Int
    /// Where its output goes.
    public let log: URL
    private var running = true

    /// The binary SwiftPM built next to the tests.
    public static var binary: URL? { BuiltProducts.executable("flagserver") }

    /// `http://127.0.0.1:<port>`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Everything the server has written so far.
    public var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Starts `flagserver --listen 127.0.0.1:0 arguments` in `directory` with `environment` (and a plain `PATH`),
    /// and waits until it says where it listens; throws, with what it wrote, if it does not within `timeout`.
    public init(
        arguments: [String], directory: URL, environment: [String: String] = [:], log: URL,
        timeout: Duration = .patience
    ) throws {
        guard let binary = Self.binary else {
            throw Spawn.Failed(description: "flagserver is not built next to the test bundle")
        }
        self.log = log
        pid = try Spawn.start(
            binary.path, ["--listen", "127.0.0.1:0"] + arguments,
            environment: environment.merging(["PATH": "/usr/bin:/bin"]) { $1 }, directory: directory.path,
            stdout: log.path)
        let prefix = "listening on http://127.0.0.1:"
        var port: Int?
        var ended = false
        let pid = pid
        _ = waitUntil(timeout: timeout, every: .milliseconds(20)) {
            // The file is there once the child runs; an unreadable moment just means "not yet".
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains(prefix) }) {
                port = Int(line.split(separator: ":").last ?? "")
            }
            ended = port == nil && Spawn.hasEnded(pid)
            return port != nil || ended
        }
        guard let port else {
            if !ended { Spawn.stop(pid, signal: SIGKILL) }
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw Spawn.Failed(description: "flagserver did not start: \(text)")
        }
        self.port = port
    }

    deinit {
        stop(signal: SIGTERM)
    }

    /// Sends `signal` and reaps the process (SIGKILL after 20 s); how it ended. Only the first call acts.
    @discardableResult
    public func stop(signal: Int32) -> (status: Int32, exitedNormally: Bool)? {
        guard running else { return nil }
        running = false
        return Spawn.stop(pid, signal: signal)
    }
}
