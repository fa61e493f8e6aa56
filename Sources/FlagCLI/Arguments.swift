import Foundation

/// An option a command declares: `--name`, `--name VALUE` (also `--name=VALUE`), or one given any number of times.
package struct Option: Sendable, Hashable {
    /// How an option takes values.
    package enum Kind: Sendable, Hashable {
        /// `--explain`: present or not; `--explain=x` is a usage error.
        case flag
        /// `--file SET.json`: exactly one value; giving the option twice is a usage error.
        case value
        /// `--attr k=v --attr k2=v2`: one value per occurrence, kept in order.
        case repeated
    }

    /// The long name without the dashes, e.g. `units-file`.
    package let name: String
    /// How the option takes values.
    package let kind: Kind
    /// The placeholder shown in help, e.g. `FILE`; empty for flags.
    package let valueName: String
    /// One line for the help screen.
    package let help: String

    /// A flag: present or absent.
    package static func flag(_ name: String, help: String) -> Option {
        Option(name: name, kind: .flag, valueName: "", help: help)
    }

    /// An option with exactly one value.
    package static func value(_ name: String, _ valueName: String, help: String) -> Option {
        Option(name: name, kind: .value, valueName: valueName, help: help)
    }

    /// An option that may be given any number of times.
    package static func repeated(_ name: String, _ valueName: String, help: String) -> Option {
        Option(name: name, kind: .repeated, valueName: valueName, help: help)
    }

    /// `--file SET.json`, `--explain`, `--attr NAME=VALUE...`: how the option reads in help.
    var synopsis: String {
        switch kind {
        case .flag: "--\(name)"
        case .value: "--\(name) \(valueName)"
        case .repeated: "--\(name) \(valueName)..."
        }
    }
}

/// A positional argument a command declares, e.g. the `KEY` of `eval KEY`.
package struct Positional: Sendable, Hashable {
    /// The placeholder, e.g. `KEY`.
    package let name: String
    /// One line for the help screen.
    package let help: String
    /// Whether the command runs without it.
    package let isOptional: Bool
    /// Whether it takes every remaining positional argument (only the last one may).
    package let isRepeating: Bool

    /// Creates a positional argument.
    package init(_ name: String, help: String, isOptional: Bool = false, isRepeating: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = isOptional
        self.isRepeating = isRepeating
    }
}

/// What the command line gave one command, already checked against the options and positionals it declares:
/// the command only converts values to their types and checks combinations.
package struct ParsedArguments: Sendable {
    /// The command the arguments are for.
    package let configuration: CommandConfiguration
    /// Values by option name, in command-line order.
    var values: [String: [String]] = [:]
    /// The flags given.
    var flags: Set<String> = []
    /// Positional arguments after the command's name, in order.
    package internal(set) var positionals: [String] = []
    /// When the command line was read: what a relative time on it (`+2h`, `tomorrow 09:00`) counts from.
    package internal(set) var readAt = Date(timeIntervalSince1970: 0)
    /// The zone a local time on it is read in: `TZ`, else the system's.
    package internal(set) var timeZone = TimeZone(secondsFromGMT: 0) ?? .current

    /// Creates empty arguments for a command; the parser fills them.
    init(configuration: CommandConfiguration) {
        self.configuration = configuration
    }

    /// Whether the flag `--name` was given.
    package func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name`, if given.
    package func value(_ name: String) -> String? { values[name]?.last }

    /// Every value of a repeated `--name`, in order.
    package func values(_ name: String) -> [String] { values[name] ?? [] }

    /// The positional argument at `index`, if given.
    package func positional(_ index: Int) -> String? {
        positionals.indices.contains(index) ? positionals[index] : nil
    }

    /// A usage error about these arguments, carrying the command's usage line.
    package func usageError(_ message: String) -> CLIError {
        .usage(message, of: configuration)
    }
}

/// The options every command accepts, anywhere on the line; each defaults to an environment variable (SPEC §5).
package struct GlobalOptions: Sendable, Equatable {
    /// The server's base URL: `--server`, else `FLAGCTL_SERVER`.
    package var server: String?
    /// The admin token: `--token`, else `FLAGCTL_TOKEN`. Never printed.
    package var token: String?
    /// The flag set to work on: `--set`, else `FLAGCTL_SET`.
    package var set: String?
    /// JSON output for scripts instead of tables for people.
    package var json: Bool

    /// Creates global options.
    package init(server: String? = nil, token: String? = nil, set: String? = nil, json: Bool = false) {
        self.server = server
        self.token = token
        self.set = set
        self.json = json
    }

    /// The declarations, for the parser and the help screens.
    static let options: [Option] = [
        .value("server", "URL", help: "FlagServer base URL (default: $FLAGCTL_SERVER, else http://127.0.0.1:8080)"),
        .value("token", "TOKEN", help: "admin token (default: $FLAGCTL_TOKEN)"),
        .value("set", "NAME", help: "flag set to work on (default: $FLAGCTL_SET)"),
        .flag("json", help: "print JSON for scripts instead of tables for people"),
    ]

    /// The environment variable each valued global option falls back to.
    static let environmentNames = ["server": "FLAGCTL_SERVER", "token": "FLAGCTL_TOKEN", "set": "FLAGCTL_SET"]
}

/// What a command line asks for.
package enum Invocation {
    /// Run a command with its arguments.
    case run(any Command.Type, ParsedArguments, GlobalOptions)
    /// Print the help of a command, or of `flagctl` itself when `nil`.
    case help(CommandConfiguration?)
}
