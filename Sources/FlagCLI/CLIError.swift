/// How `flagctl` ends (SPEC §5): 0 done, 1 failed, 2 usage error, 3 conflict, 4 not confirmed in time (`--wait`).
package struct ExitCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The process exit status.
    package let rawValue: Int32
    /// Creates an exit code from a process status.
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// The command did what was asked.
    package static let success = ExitCode(rawValue: 0)
    /// The command ran and failed, or found problems (`lint`); stderr names what to fix.
    package static let failure = ExitCode(rawValue: 1)
    /// The command line is wrong: unknown command or option, a missing value, a value of the wrong form.
    package static let usage = ExitCode(rawValue: 2)
    /// Someone changed the flag set meanwhile (online commands).
    package static let conflict = ExitCode(rawValue: 3)
    /// The write succeeded, but too few active clients reported its version before `--wait-timeout` passed.
    package static let timeout = ExitCode(rawValue: 4)

    /// The status as a number.
    package var description: String { String(rawValue) }
}

/// Why a command could not do what it was asked: the message for stderr and the exit code it ends with.
///
/// A usage error also carries the usage line of the command it concerns, so that the user sees at once what the
/// command accepts.
package struct CLIError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        /// The command line is wrong; the usage line and the command whose help to suggest.
        case usage(usage: String, helpCommand: String)
        /// The command ran and failed.
        case failure
        /// Someone changed the flag set meanwhile (`--if-match` was stale).
        case conflict
        /// A written version did not reach the share of clients `--wait` asked for in time.
        case timeout
    }

    private let code: Code
    /// What is wrong, in one line, naming the argument, file or flag at fault.
    package let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A usage error for `configuration`'s command, or for `flagctl` itself when `nil`.
    package static func usage(_ message: String, of configuration: CommandConfiguration?) -> CLIError {
        let usage = configuration?.usage ?? FlagCTL.usage
        let helpCommand = configuration.map { "flagctl \($0.name) --help" } ?? "flagctl --help"
        return CLIError(.usage(usage: usage, helpCommand: helpCommand), message)
    }

    /// A failure: the command line was fine but the command could not do its work.
    package static func failure(_ message: String) -> CLIError {
        CLIError(.failure, message)
    }

    /// A conflict: the set is no longer at the version the command was told to expect; never retried silently.
    package static func conflict(_ message: String) -> CLIError {
        CLIError(.conflict, message)
    }

    /// A timeout of `--wait`: the write is done, but not confirmed on enough clients; never retried silently.
    package static func timeout(_ message: String) -> CLIError {
        CLIError(.timeout, message)
    }

    /// The exit code the process ends with.
    package var exitCode: ExitCode {
        switch code {
        case .usage: .usage
        case .failure: .failure
        case .conflict: .conflict
        case .timeout: .timeout
        }
    }

    /// The lines written to stderr: the message, and for usage errors the usage line and where to find help.
    package var diagnostic: [String] {
        switch code {
        case .usage(let usage, let helpCommand):
            ["error: \(message)", "usage: \(usage)", "See '\(helpCommand)'."]
        case .failure, .conflict, .timeout:
            ["error: \(message)"]
        }
    }

    /// The diagnostic lines joined.
    package var description: String { diagnostic.joined(separator: "\n") }
}
