import Foundation

/// One `flagctl` command: it declares its arguments, builds itself from what was parsed (checking values and
/// their combinations), then runs.
///
/// A new command is one type conforming to this protocol plus one line in `FlagCTL.commands`:
///
/// ```swift
/// struct KillCommand: Command {
///     static let configuration = CommandConfiguration(
///         name: "kill", abstract: "Serve the kill value to everyone, at once.", synopsis: "KEY [--reason S]",
///         positionals: [Positional("KEY", help: "the flag's key")],
///         options: [.value("reason", "S", help: "why, for the history")],
///         example: "flagctl kill new-checkout --reason 'payment errors'")
///     let key: String
///     init(parsing arguments: ParsedArguments) throws(CLIError) { key = arguments.positionals[0] }
///     func run(in context: CommandContext) throws(CLIError) -> ExitCode { … }
/// }
/// ```
package protocol Command {
    /// The command's name, arguments and help.
    static var configuration: CommandConfiguration { get }
    /// Converts and validates the parsed arguments; throws a usage error (`arguments.usageError`) when a value
    /// has the wrong form or options do not go together.
    init(parsing arguments: ParsedArguments) throws(CLIError)
    /// Does the work, writing to `context.console`; throws a failure naming what to fix.
    func run(in context: CommandContext) throws(CLIError) -> ExitCode
}

/// A command's name, the arguments it accepts, and its help.
package struct CommandConfiguration: Sendable {
    /// The name as typed, one or two words: `lint`, `sets list`.
    package let name: String
    /// One line saying what the command does.
    package let abstract: String
    /// The arguments after the name as the usage line shows them, e.g. `KEY --file SET.json (--unit ID | …)`.
    package let synopsis: String
    /// Positional arguments, in order.
    package let positionals: [Positional]
    /// The command's own options (the global ones are added by the parser).
    package let options: [Option]
    /// One example command line.
    package let example: String

    /// Creates a configuration.
    package init(
        name: String, abstract: String, synopsis: String, positionals: [Positional] = [], options: [Option] = [],
        example: String
    ) {
        self.name = name
        self.abstract = abstract
        self.synopsis = synopsis
        self.positionals = positionals
        self.options = options
        self.example = example
    }

    /// The words of the name.
    var words: [String] { name.split(separator: " ").map(String.init) }

    /// `flagctl lint SET.json`
    package var usage: String { synopsis.isEmpty ? "flagctl \(name)" : "flagctl \(name) \(synopsis)" }
}

/// What a running command may use: the global options, the console, the clock and the other commands.
package struct CommandContext {
    /// `--server`, `--token`, `--set`, `--json`, with their environment defaults applied.
    package let globals: GlobalOptions
    /// Where output goes.
    package let console: Console
    /// The current time; injected so that tests fix it.
    package let now: () -> Date
    /// Every registered command (for `help`).
    package let commands: [any Command.Type]

    /// Creates a context.
    package init(globals: GlobalOptions, console: Console, now: @escaping () -> Date, commands: [any Command.Type]) {
        self.globals = globals
        self.console = console
        self.now = now
        self.commands = commands
    }
}

/// The `flagctl` program: the registered commands and the dispatch from a command line to an exit code.
package enum FlagCTL {
    /// Every command, in the order the top-level help lists them.
    package static var commands: [any Command.Type] {
        [
            SetsListCommand.self, SetsCreateCommand.self, SetsSettingsCommand.self, ListCommand.self, GetCommand.self,
            CreateCommand.self, SetDefaultCommand.self, RuleAddCommand.self, RuleRemoveCommand.self,
            RequiresCommand.self, ValuesAddCommand.self, ValuesRemoveCommand.self, ValuesClearCommand.self,
            RolloutCommand.self, OverrideCommand.self, KillCommand.self, RestoreCommand.self, ExpireCommand.self,
            ArchiveCommand.self, StaleCommand.self, UsageCommand.self, ClientsCommand.self, CohortCreateCommand.self,
            CohortListCommand.self, CohortShowCommand.self,
            EvalCommand.self, LintCommand.self, GenerateCommand.self, RefsCommand.self, HistoryCommand.self,
            DiffCommand.self, RollbackCommand.self, ChangesListCommand.self, ChangesShowCommand.self,
            ChangesApproveCommand.self, ChangesRejectCommand.self, ChangesScheduleCommand.self,
            ChangesApplyCommand.self,
            ChangesWithdrawCommand.self,
            ExportCommand.self, ImportCommand.self, PromoteCommand.self, KeysCreateCommand.self,
            KeysListCommand.self, KeysRevokeCommand.self, TokensCreateCommand.self, TokensListCommand.self,
            TokensRevokeCommand.self, SigningKeyShowCommand.self, SigningKeyRotateCommand.self,
            SigningKeyActivateCommand.self, SigningKeyRetireCommand.self, VerifyCommand.self,
            WebhooksCreateCommand.self, WebhooksListCommand.self, WebhooksShowCommand.self,
            WebhooksDeleteCommand.self, WebhooksTestCommand.self, WebhooksRotateSecretCommand.self, HelpCommand.self,
        ]
    }

    /// The top-level usage line.
    package static let usage = "flagctl [--server URL] [--token TOKEN] [--set NAME] [--json] COMMAND"

    /// Runs one command line (without the program name) and returns the process exit status.
    ///
    /// Nothing is read from the process: the environment and the clock are passed in, output goes to `console`
    /// (flushed before returning).
    package static func main(
        arguments: some Sequence<String>, environment: [String: String], now: @escaping () -> Date,
        console: Console, commands: [any Command.Type] = FlagCTL.commands
    ) -> Int32 {
        defer { console.flush() }
        do throws(CLIError) {
            switch try ArgumentParser(commands: commands).parse(arguments, environment: environment) {
            case .help(let configuration):
                console.printText(Help.text(for: configuration, commands: commands))
                return ExitCode.success.rawValue
            case .run(let type, var arguments, let globals):
                arguments.readAt = now()
                arguments.timeZone = environment["TZ"].flatMap { TimeZone(identifier: $0) } ?? .current
                let command = try type.init(parsing: arguments)
                let context = CommandContext(globals: globals, console: console, now: now, commands: commands)
                return try command.run(in: context).rawValue
            }
        } catch {
            for line in error.diagnostic { console.printError(line) }
            return error.exitCode.rawValue
        }
    }
}
