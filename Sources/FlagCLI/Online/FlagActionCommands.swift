import FlagAPI
import FlagCore
import Foundation

/// The commands that send one action to a flag, with only a reason, and report it: kill, restore, archive,
/// values clear.
protocol FlagActionCommand: Command {
    /// The action's endpoint, e.g. `API.kill`.
    static var endpoint: Endpoint<ChangeRequest, MutationResult> { get }
    /// What the report says was done to the flag, before the version, e.g. `killed new-checkout`.
    static func done(to key: String) -> String
    var key: String { get }
    var mutation: Mutation { get }
    init(key: String, mutation: Mutation)
}

extension FlagActionCommand {
    /// The declaration shared by these commands.
    static func actionConfiguration(_ name: String, abstract: String, example: String) -> CommandConfiguration {
        CommandConfiguration(
            name: name, abstract: abstract, synopsis: "KEY [--reason S] [--if-match N] [--wait PERCENT]",
            positionals: [Positional("KEY", help: "the flag's key")], options: Mutation.options, example: example)
    }

    /// Takes the key.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        self.init(key: arguments.positionals[0], mutation: try Mutation(arguments))
    }

    /// Sends the action and reports the new version.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        return try mutation.write(
            Self.endpoint, PathParameters(set: set, key: key), mutation.changeRequest, set: set, client: client, context
        ) { result in
            ["\(Self.done(to: key)) \(AdminClient.versionNote(result))"]
        }
    }
}

/// `flagctl kill KEY [--reason S]`: everyone gets the kill value, at once.
package struct KillCommand: FlagActionCommand {
    /// `kill KEY`
    package static let configuration = actionConfiguration(
        "kill", abstract: "Serve the kill value to everyone, at once.",
        example: "flagctl kill new-checkout --reason 'payment errors'")
    static let endpoint = API.kill
    static func done(to key: String) -> String { "killed \(key)" }
    let key: String
    let mutation: Mutation
}

/// `flagctl restore KEY`: undoes a kill.
package struct RestoreCommand: FlagActionCommand {
    /// `restore KEY`
    package static let configuration = actionConfiguration(
        "restore", abstract: "Undo a kill: the flag evaluates normally again.",
        example: "flagctl restore new-checkout --reason 'fixed'")
    static let endpoint = API.restore
    static func done(to key: String) -> String { "restored \(key)" }
    let key: String
    let mutation: Mutation
}

/// `flagctl archive KEY`: the flag is no longer served.
package struct ArchiveCommand: FlagActionCommand {
    /// `archive KEY`
    package static let configuration = actionConfiguration(
        "archive", abstract: "Archive a flag: clients no longer get it.", example: "flagctl archive old-banner")
    static let endpoint = API.archive
    static func done(to key: String) -> String { "archived \(key)" }
    let key: String
    let mutation: Mutation
}

/// `flagctl set KEY --default V`: changes the default.
package struct SetDefaultCommand: Command {
    /// `set KEY --default V`
    package static let configuration = CommandConfiguration(
        name: "set", abstract: "Change a flag's default value.", synopsis: "KEY --default V [--reason S]",
        positionals: [Positional("KEY", help: "the flag's key")],
        options: [.value("default", "V", help: "the new default, of the flag's type")] + Mutation.options,
        example: "flagctl set checkout-columns --default 3")

    private let key: String
    private let text: String
    private let mutation: Mutation

    /// Takes the key and the value.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positionals[0]
        guard let text = arguments.value("default") else { throw arguments.usageError("missing --default V") }
        self.text = text
        mutation = try Mutation(arguments)
    }

    /// Sets the default in one request: the server reads the text as the flag's type.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let request = DefaultRequest(valueText: text, reason: mutation.reason, allowIncompatible: mutation.forced)
        return try mutation.write(
            API.setDefault, PathParameters(set: set, key: key), request, set: set, client: client, context,
            typed: ["valueText": "--default for \(key)"]
        ) { result throws(CLIError) in
            let flag = try AdminClient.flag(of: result)
            return ["\(key) defaults to \(flag["default"].compactText) \(AdminClient.versionNote(result))"]
        }
    }
}

/// `flagctl expire KEY [--at DATE | --now] --keep V`: when the flag ends and the value it then serves.
package struct ExpireCommand: Command {
    /// `expire KEY [--at DATE | --now] --keep V`
    package static let configuration = CommandConfiguration(
        name: "expire", abstract: "Expire a flag: from then on everyone gets the kept value.",
        synopsis: "KEY [--at DATE | --now] --keep V [--reason S]",
        positionals: [Positional("KEY", help: "the flag's key")],
        options: [
            .value("at", "DATE", help: "when it expires (default: now)"),
            .flag("now", help: "expire now"),
            .value("keep", "V", help: "the value served once expired"),
        ] + Mutation.creationOptions + Mutation.reviewOptions(schedule: "apply-at"),
        example: "flagctl expire new-checkout --now --keep true")

    private let key: String
    private let at: Date?
    private let keep: String
    private let mutation: Mutation

    /// Takes the key, the time and the kept value.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positionals[0]
        if arguments.flag("now") && arguments.value("at") != nil {
            throw arguments.usageError("--at and --now cannot be used together")
        }
        at = try arguments.value("at").map { text throws(CLIError) in try Typed.date(text, option: "at", arguments) }
        guard let keep = arguments.value("keep") else { throw arguments.usageError("missing --keep V") }
        self.keep = keep
        mutation = try Mutation(arguments, schedule: "apply-at")
    }

    /// Expires the flag in one request: the server reads the kept value as the flag's type.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let request = ExpireRequest(
            keepText: keep, at: at, reason: mutation.reason, allowIncompatible: mutation.forced)
        return try mutation.write(
            API.expire, PathParameters(set: set, key: key), request, set: set, client: client, context,
            typed: ["keepText": "--keep for \(key)"]
        ) { result throws(CLIError) in
            let flag = try AdminClient.flag(of: result)
            return [
                "\(key) expires \(Shown.when(flag["expiresAt"], now: context.now())), then serves "
                    + "\(flag["expiredValue"].compactText) \(AdminClient.versionNote(result))"
            ]
        }
    }
}
