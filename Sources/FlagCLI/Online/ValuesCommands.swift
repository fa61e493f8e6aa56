import FlagAPI
import FlagCore

/// `flagctl values add KEY V…`: more values an enum flag may serve (docs/core.md, "Enum flags").
package struct ValuesAddCommand: Command {
    /// `values add KEY V…`
    package static let configuration = ValuesEdit.configuration(
        "add", abstract: "Add values to those a string flag may serve (an enum flag).", key: "the string flag")

    private let edit: ValuesEdit

    /// Takes the key and the values.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        edit = try ValuesEdit(arguments)
    }

    /// Reads the flag, appends the values it does not list yet, and writes the list at the version read.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        try edit.run(in: context, for: Self.configuration) { current throws(CLIError) in
            (current ?? []) + edit.values.filter { !(current ?? []).contains($0) }
        }
    }
}

/// `flagctl values remove KEY V…`: values an enum flag no longer serves.
package struct ValuesRemoveCommand: Command {
    /// `values remove KEY V…`
    package static let configuration = ValuesEdit.configuration(
        "remove", abstract: "Remove values from those an enum flag may serve.", key: "the enum flag")

    private let edit: ValuesEdit

    /// Takes the key and the values.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        edit = try ValuesEdit(arguments)
    }

    /// Reads the flag, drops the values, and writes the list at the version read; the flag must list each value, and
    /// keep one.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let key = edit.key
        return try edit.run(in: context, for: Self.configuration) { current throws(CLIError) in
            guard let current else { throw .failure("\(key) lists no values: it serves any string") }
            for value in edit.values where !current.contains(value) {
                throw .failure(
                    "\(key) does not list \(ValuesEdit.shown([value])); its values are \(ValuesEdit.shown(current))")
            }
            let kept = current.filter { !edit.values.contains($0) }
            guard !kept.isEmpty else {
                throw .usage(
                    "removing every value of \(key) would leave none; to let it serve any string again: "
                        + "flagctl values clear \(key)", of: Self.configuration)
            }
            return kept
        }
    }
}

/// `flagctl values clear KEY`: the flag serves any string again.
package struct ValuesClearCommand: FlagActionCommand {
    /// `values clear KEY`
    package static let configuration = CommandConfiguration(
        name: "values clear", abstract: "Let an enum flag serve any string again: drop its list of values.",
        synopsis: "KEY [--reason S]", positionals: [Positional("KEY", help: "the enum flag")],
        options: Mutation.options, example: "flagctl values clear checkout-theme")

    /// Deletes the list in one request.
    static let endpoint = API.removeValues
    static func done(to key: String) -> String { "\(key) serves any string again" }
    let key: String
    let mutation: Mutation
}

/// What `values add` and `values remove` share: read the flag, make its new list, and write it with `If-Match` of
/// the version read (or `--if-match`), so that a change made meanwhile is a conflict (exit 3), not a lost update.
struct ValuesEdit {
    let key: String
    /// The values named on the command line, each once, in their order.
    let values: [String]
    let mutation: Mutation

    /// The declaration of `values add` and `values remove`: `KEY V... [--reason S]`; `key` describes the flag.
    static func configuration(_ verb: String, abstract: String, key: String) -> CommandConfiguration {
        CommandConfiguration(
            name: "values \(verb)", abstract: abstract, synopsis: "KEY V... [--reason S]",
            positionals: [
                Positional("KEY", help: key),
                Positional("V", help: "a value to \(verb); give several to \(verb) them all", isRepeating: true),
            ],
            options: Mutation.options, example: "flagctl values \(verb) checkout-theme orange")
    }

    /// Takes the key, the values (none empty) and the mutation options.
    init(_ arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positionals[0]
        var values: [String] = []
        for value in arguments.positionals.dropFirst() where !values.contains(value) {
            guard !value.isEmpty else { throw arguments.usageError("a value of \(key) cannot be empty") }
            values.append(value)
        }
        self.values = values
        mutation = try Mutation(arguments)
    }

    /// Reads the flag, asks `change` for its new list (from the current one, `nil` when it lists none) and PUTs it.
    func run(
        in context: CommandContext, for configuration: CommandConfiguration,
        change: ([String]?) throws(CLIError) -> [String]
    ) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: configuration)
        let set = try client.requireSet(for: configuration)
        let path = PathParameters(set: set, key: key)
        let (read, _) = try client.send(API.getFlag, path, NoRequest())
        let flag = try AdminClient.parsed(read.flag, "flag \"\(key)\"")
        guard flag["type"].string == FlagType.string.name else {
            throw .failure("\(key) is a \(flag["type"].string ?? "?") flag; only a string flag lists its values")
        }
        let current = flag["values"].array.map { $0.compactMap(\.string) }
        let values = try change(current)
        let request = ValuesRequest(values: values, reason: mutation.reason, allowIncompatible: mutation.forced)
        let (result, answer) = try client.send(
            API.putValues, path, request, ifMatch: mutation.ifMatch ?? read.version, review: mutation.review)
        return try mutation.finish(result, answer, set: set, client: client, context) {
            ["\(key) serves \(Self.shown(values)) \(AdminClient.versionNote(result))"]
        }
    }

    /// `"blue", "green" or "orange"`: values as JSON strings, so that a comma or a space in one shows.
    static func shown(_ values: [String]) -> String {
        Vocabulary.choices(values.map { JSONValue.string($0).compactText })
    }
}
