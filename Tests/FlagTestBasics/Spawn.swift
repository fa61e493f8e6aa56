import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Child processes started with `posix_spawn` and reaped with a blocking `waitpid`.
///
/// Foundation's `Process` on Linux can miss a child's exit when many tests start processes at once on a loaded
/// machine (the child stays a zombie and `waitUntilExit` never returns, hanging the suite); a direct `waitpid` on
/// our own pid cannot.
public enum Spawn {
    public struct Failed: Error, CustomStringConvertible {
        public let description: String

        /// A failure described by `description`.
        public init(description: String) {
            self.description = description
        }
    }

    /// Starts `executable arguments` in `directory` with exactly `environment`, stdin from /dev/null, stdout into
    /// the file at `stdout` and stderr into the file at `stderr`, or into the same file when `stderr` is nil (files
    /// are created or truncated, readable only by the owner).
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], directory: String,
        stdout: String, stderr: String? = nil
    ) throws -> pid_t {
        LiveTest.expectOwnThread("starting \(executable)")
        // The shell changes directory, then becomes the program: posix_spawn has no portable chdir action.
        let argv = ["/bin/sh", "-c", #"cd "$0" || exit 127; exec "$@""#, directory, executable] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if let stderr {
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        var pid: pid_t = 0
        let status = withCStrings(argv) { argvPointers in
            withCStrings(envp) { envPointers in
                posix_spawn(&pid, "/bin/sh", &actions, nil, argvPointers, envPointers)
            }
        }
        guard status == 0 else { throw Failed(description: "posix_spawn \(executable): error \(status)") }
        return pid
    }

    /// Runs `executable arguments` in `directory` with this process's environment and waits for it: its exit
    /// status, what it wrote to stdout and stderr together, and whether it exited by itself. For tools such as
    /// `swiftc` and `swift package`.
    public static func run(_ executable: URL, _ arguments: [String], in directory: URL) throws -> (
        status: Int32, output: String, exitedNormally: Bool
    ) {
        let output = directory.appendingPathComponent(".spawn-output-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let pid = try start(
            executable.path, arguments, environment: ProcessInfo.processInfo.environment, directory: directory.path,
            stdout: output.path)
        let ended = wait(pid)
        return (ended.status, String(decoding: try Data(contentsOf: output), as: UTF8.self), ended.exitedNormally)
    }

    /// Waits for `pid` to end: its exit status, and whether it exited by itself (not by a signal).
    public static func wait(_ pid: pid_t) -> (status: Int32, exitedNormally: Bool) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            if errno != EINTR { return (-1, false) }
        }
        return decode(status)
    }

    /// How `pid` ended, reaping it, or nil while it runs.
    public static func exitStatus(_ pid: pid_t) -> (status: Int32, exitedNormally: Bool)? {
        var status: Int32 = 0
        switch waitpid(pid, &status, WNOHANG) {
        case 0: return nil
        case -1: return (-1, false)
        default: return decode(status)
        }
    }

    /// Whether `pid` has ended, reaping it if so.
    public static func hasEnded(_ pid: pid_t) -> Bool {
        exitStatus(pid) != nil
    }

    /// Sends `signal` and reaps the process, with SIGKILL if it has not ended after `grace`; how it ended.
    @discardableResult
    public static func stop(_ pid: pid_t, signal: Int32, grace: Duration = .seconds(20)) -> (
        status: Int32, exitedNormally: Bool
    ) {
        kill(pid, signal)
        var ended: (status: Int32, exitedNormally: Bool)?
        let gone = waitUntil(timeout: grace) {
            ended = exitStatus(pid)
            return ended != nil
        }
        guard gone, let ended else {
            kill(pid, SIGKILL)
            return wait(pid)
        }
        return ended
    }

    private static func decode(_ status: Int32) -> (status: Int32, exitedNormally: Bool) {
        let signal = status & 0x7f
        return signal == 0 ? ((status >> 8) & 0xff, true) : (signal, false)
    }

    /// A NULL-terminated array of C strings alive for the duration of `body`.
    private static func withCStrings<R>(
        _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R
    ) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }
}

/// The executables SwiftPM built with the tests, and the checkout they came from.
public enum BuiltProducts {
    /// The checkout's root directory (this file is at `Tests/FlagTestSupport/` in it).
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The executable `name` that SwiftPM built next to the test bundle (`.build/<triple>/debug/<name>`), if any.
    public static func executable(_ name: String) -> URL? {
        var directories = Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        if let first = CommandLine.arguments.first {
            directories.insert(URL(fileURLWithPath: first).deletingLastPathComponent(), at: 0)
        }
        return directories.map { $0.appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The directory holding the `.swiftmodule` SwiftPM built for `module`, for compiling other code against it
    /// (`.build/<triple>/debug/Modules` since Swift 6, the products directory itself before), if any.
    public static func moduleDirectory(of module: String) -> URL? {
        var directories = Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        if let first = CommandLine.arguments.first {
            directories.insert(URL(fileURLWithPath: first).deletingLastPathComponent(), at: 0)
        }
        return directories.flatMap { [$0.appendingPathComponent("Modules"), $0] }
            .first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("\(module).swiftmodule").path) }
    }

    /// The first executable `name` on the `PATH`, e.g. `swiftc`.
    public static func onPath(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
