import FlagCLI
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
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var demoPath: String { repositoryRoot.appendingPathComponent("config/flagsets/demo.json").path }

    /// The binary SwiftPM built next to the test bundle (`.build/<triple>/debug/flagctl`).
    static let binary: URL? = {
        var directories = Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        if let first = CommandLine.arguments.first {
            directories.insert(URL(fileURLWithPath: first).deletingLastPathComponent(), at: 0)
        }
        return directories.map { $0.appendingPathComponent("flagctl") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Runs `flagctl arguments` in `directory` with exactly `environment` (nothing leaks in from the shell).
    static func run(_ arguments: [String], in directory: TemporaryDirectory, environment: [String: String] = [:])
        throws -> Run
    {
        let binary = try #require(binary, "flagctl is not built next to the test bundle")
        // Files rather than pipes: a large output can never block the child while the test waits.
        let outURL = directory.url.appendingPathComponent(".stdout-\(UUID().uuidString)")
        let errURL = directory.url.appendingPathComponent(".stderr-\(UUID().uuidString)")
        // Best effort: the directory itself is removed when the test ends.
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let pid = try Spawn.start(
            binary.path, arguments, environment: environment, directory: directory.url.path, stdout: outURL.path,
            stderr: errURL.path)
        let ended = Spawn.wait(pid)
        return Run(
            status: ended.status,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self),
            exitedNormally: ended.exitedNormally)
    }

    /// Parses each stdout line as a JSON object.
    static func jsonObjects(_ run: Run) throws -> [[String: Any]] {
        try run.stdoutLines.map { line in
            try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not an object: \(line)")
        }
    }
}

/// A directory of its own for one test, removed when the test lets go of it.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("flagctl-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        // Best effort: a leftover directory under /tmp is harmless and must not fail a test that passed.
        try? FileManager.default.removeItem(at: url)
    }

    /// Writes a file and returns its name (tests run the binary in this directory, so names are paths).
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try write(name, Data(text.utf8))
    }

    /// Writes raw bytes.
    @discardableResult
    func write(_ name: String, _ data: Data) throws -> String {
        try data.write(to: url.appendingPathComponent(name))
        return name
    }

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
