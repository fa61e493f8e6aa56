import FlagAPI
import FlagCore

/// `flagctl keys create NAME`: a new SDK key for the set, printed this once.
package struct KeysCreateCommand: NamedWriteCommand {
    /// `keys create NAME`
    package static let configuration = CommandConfiguration(
        name: "keys create", abstract: "Create an SDK key that reads this set; prints it once.",
        synopsis: "NAME [--reason S]", positionals: [Positional("NAME", help: "a name unique on the server")],
        options: Mutation.recordOptions, example: "flagctl --set ios-prod keys create ios-app-2026")

    let name: String
    let mutation: Mutation

    /// POSTs and prints the token.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (created, answer) = try client.send(
            API.createKey, PathParameters(set: set), CreateKeyRequest(name: name, reason: mutation.reason))
        return context.showSecret(
            answer, created.token, note: "created SDK key \(name) for \(set); it is shown only this once, store it now")
    }
}

/// `flagctl keys list`.
package struct KeysListCommand: Command {
    /// `keys list`
    package static let configuration = CommandConfiguration(
        name: "keys list", abstract: "List the SDK keys of a set (never the tokens).", synopsis: "",
        example: "flagctl --set ios-prod keys list")

    /// Takes no arguments.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {}

    /// `NAME  CREATED  REVOKED`
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (list, answer) = try client.send(API.listKeys, PathParameters(set: set), NoRequest())
        return context.showTable(answer) {
            Table(header: ["NAME", "CREATED", "REVOKED"], rows: list.keys) { key in
                [key.name, Shown.date(key.createdAt), key.revokedAt.map(Shown.date) ?? "-"]
            }
        }
    }
}

/// `flagctl keys revoke NAME`: refused from the next request on.
package struct KeysRevokeCommand: NamedWriteCommand {
    /// `keys revoke NAME`
    package static let configuration = CommandConfiguration(
        name: "keys revoke", abstract: "Revoke an SDK key.", synopsis: "NAME [--reason S]",
        positionals: [Positional("NAME", help: "the key's name")], options: Mutation.recordOptions,
        example: "flagctl --set ios-prod keys revoke ios-app-2025 --reason leaked")

    let name: String
    let mutation: Mutation

    /// DELETEs the key.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (_, answer) = try client.send(
            API.revokeKey, PathParameters(set: set, name: name), ChangeRequest(reason: mutation.reason))
        return context.report(answer, "revoked SDK key \(name)")
    }
}
