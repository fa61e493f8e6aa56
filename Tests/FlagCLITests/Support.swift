import FlagCLI
import FlagTestSupport
import Foundation
import Testing

/// What a run of `flagctl` did.
struct Run: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String
    /// Whether the process exited by itself (a trap or a signal would be `.uncaughtSignal`).
    let exitedNormally: Bool

    var stdoutLines: [String] {
        stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
    var stderrLines: [String] {
        stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

/// Runs the built `flagctl` binary, as swift-argument-parser's `AssertExecuteCommand` does.
enum Flagctl {
    static var demoPath: String {
        BuiltProducts.repositoryRoot.appendingPathComponent("config/flagsets/demo.json").path
    }

    /// The binary SwiftPM built next to the test bundle (`.build/<triple>/debug/flagctl`).
    static let binary = BuiltProducts.executable("flagctl")

    /// Runs `flagctl arguments` in `directory` with exactly `environment` (nothing leaks in from the shell).
    static func run(_ arguments: [String], in directory: TemporaryDirectory, environment: [String: String] = [:])
        throws -> Run
    {
        try start(arguments, in: directory, environment: environment).finish()
    }

    /// Starts `flagctl arguments` as `run` does, without waiting: the test acts while it runs, then `finish()`es it.
    static func start(_ arguments: [String], in directory: TemporaryDirectory, environment: [String: String] = [:])
        throws -> Running
    {
        let binary = try #require(binary, "flagctl is not built next to the test bundle")
        // Files rather than pipes: a large output can never block the child while the test waits.
        let outURL = directory.url.appendingPathComponent(".stdout-\(UUID().uuidString)")
        let errURL = directory.url.appendingPathComponent(".stderr-\(UUID().uuidString)")
        let pid = try Spawn.start(
            binary.path, arguments, environment: environment, directory: directory.url.path, stdout: outURL.path,
            stderr: errURL.path)
        return Running(pid: pid, outURL: outURL, errURL: errURL)
    }

    /// A `flagctl` process that is running.
    struct Running {
        let pid: pid_t
        let outURL: URL
        let errURL: URL

        /// Waits for it to end and reads what it wrote.
        func finish() throws -> Run {
            // Best effort: the directory itself is removed when the test ends.
            defer {
                try? FileManager.default.removeItem(at: outURL)
                try? FileManager.default.removeItem(at: errURL)
            }
            let ended = Spawn.wait(pid)
            return Run(
                status: ended.status,
                stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
                stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self),
                exitedNormally: ended.exitedNormally)
        }
    }

    /// Parses each stdout line as a JSON object.
    static func jsonObjects(_ run: Run) throws -> [[String: Any]] {
        try run.stdoutLines.map { line in
            try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not an object: \(line)")
        }
    }
}

extension TemporaryDirectory {
    /// Copies the demo set in as `demo.json`.
    @discardableResult
    func copyDemo() throws -> String {
        try write("demo.json", try Data(contentsOf: URL(fileURLWithPath: Flagctl.demoPath)))
    }
}

/// Runs `FlagCTL.main` in-process with a fixed clock, capturing both streams.
func runInProcess(
    _ arguments: [String], environment: [String: String] = [:], now: Date = Date(timeIntervalSince1970: 0),
    commands: [any Command.Type] = FlagCTL.commands
) -> Run {
    let captured = Captured()
    let console = Console(
        writeOutput: { captured.out += $0 }, writeError: { captured.err += $0 })
    let status = FlagCTL.main(
        arguments: arguments, environment: environment, now: { now }, console: console, commands: commands)
    return Run(
        status: status, stdout: String(decoding: captured.out, as: UTF8.self),
        stderr: String(decoding: captured.err, as: UTF8.self), exitedNormally: true)
}

/// Bytes written by an in-process run; used from the test's own thread only.
private final class Captured {
    var out: [UInt8] = []
    var err: [UInt8] = []
}

/// The arguments the parser makes of `line` for `command`, as its `init(parsing:)` receives them.
func parsedArguments(_ command: any Command.Type, _ line: [String]) throws -> ParsedArguments {
    guard case .run(_, let arguments, _) = try ArgumentParser(commands: [command]).parse(line, environment: [:]) else {
        throw CLIError.failure("'\(line.joined(separator: " "))' asks for help, not for \(command.configuration.name)")
    }
    return arguments
}
