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
enum Spawn {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `executable arguments` in `directory` with exactly `environment`, stdin from /dev/null, stdout and
    /// stderr into the files at those paths (created or truncated).
    static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], directory: String,
        stdout: String, stderr: String
    ) throws -> pid_t {
        // The shell changes directory, then becomes the program: posix_spawn has no portable chdir action.
        let argv = ["/bin/sh", "-c", #"cd "$0" || exit 127; exec "$@""#, directory, executable] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var pid: pid_t = 0
        let status = withCStrings(argv) { argvPointers in
            withCStrings(envp) { envPointers in
                posix_spawn(&pid, "/bin/sh", &actions, nil, argvPointers, envPointers)
            }
        }
        guard status == 0 else { throw Failed(description: "posix_spawn \(executable): error \(status)") }
        return pid
    }

    /// Waits for `pid` to end: its exit status, and whether it exited by itself (not by a signal).
    static func wait(_ pid: pid_t) -> (status: Int32, exitedNormally: Bool) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            if errno != EINTR { return (-1, false) }
        }
        let signal = status & 0x7f
        return signal == 0 ? ((status >> 8) & 0xff, true) : (signal, false)
    }

    /// Whether `pid` has ended, reaping it if so.
    static func hasEnded(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) != 0
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
