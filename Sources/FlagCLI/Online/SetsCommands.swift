import FlagCore

/// `flagctl sets list`: every flag set on the server with its version.
public struct SetsListCommand: Command {
    /// `sets list`
    public static let configuration = CommandConfiguration(
        name: "sets list", abstract: "List the flag sets on the server.", synopsis: "",
        example: "flagctl sets list")

    /// Takes no arguments.
    public init(parsing arguments: ParsedArguments) throws(CLIError) {}

    /// `NAME  VERSION  FLAGS  COHORTS  UPDATED`
    public func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let answer = try client.send("GET", "/v1/admin/sets")
        if context.globals.json {
            context.console.print(answer.json.compactText)
            return .success
        }
        var table = Table(header: ["NAME", "VERSION", "FLAGS", "COHORTS", "UPDATED"])
        for set in answer.json["sets"].array ?? [] {
            table.append([
                set["name"].string ?? "?", set["version"].compactText, set["flags"].compactText,
                set["cohorts"].compactText, Shown.when(set["updatedAt"], now: context.now()),
            ])
        }
        context.printTable(table)
        return .success
    }
}

/// `flagctl sets create NAME`: a new, empty flag set at version 1.
public struct SetsCreateCommand: Command {
    /// `sets create NAME`
    public static let configuration = CommandConfiguration(
        name: "sets create", abstract: "Create an empty flag set.", synopsis: "NAME [--reason S]",
        positionals: [Positional("NAME", help: "the new set's name, e.g. ios-prod")], options: Mutation.options,
        example: "flagctl sets create ios-prod")

    private let name: String
    private let mutation: Mutation

    /// Takes the name.
    public init(parsing arguments: ParsedArguments) throws(CLIError) {
        name = arguments.positionals[0]
        mutation = try Mutation(arguments)
    }

    /// Creates the set.
    public func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let answer = try client.send(
            "POST", "/v1/admin/sets", body: mutation.body(["name": .string(name)]), ifMatch: mutation.ifMatch)
        let note = try AdminClient.versionNote(answer)
        context.report(answer, "created set \(name) \(note)")
        return .success
    }
}

extension CommandContext {
    /// Prints a table fitted to the help width.
    func printTable(_ table: Table) {
        for line in table.lines(fitting: Help.width) { console.print(line) }
    }
}
