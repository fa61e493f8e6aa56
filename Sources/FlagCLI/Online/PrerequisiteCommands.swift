import FlagAPI
import FlagCore

/// `flagctl requires KEY --on OTHER --values V [--values V…]` and `flagctl requires KEY --remove OTHER`.
package struct RequiresCommand: Command {
    /// `requires KEY …`
    package static let configuration = CommandConfiguration(
        name: "requires", abstract: "Make a flag require another flag to serve one of some values, or stop it.",
        synopsis: "KEY (--on OTHER --values V [--values V]... | --remove OTHER)",
        positionals: [Positional("KEY", help: "the flag that requires")],
        options: [
            .value("on", "OTHER", help: "the flag it requires"),
            .repeated("values", "V", help: "a value OTHER must serve, read as OTHER's type; repeat for more"),
            .value("remove", "OTHER", help: "stop requiring OTHER"),
        ] + Mutation.options,
        example: "flagctl requires express-checkout --on new-checkout --values true")

    private let key: String
    private let required: String
    private let values: [String]
    private let mutation: Mutation

    /// Checks that exactly one of `--on` (with values) or `--remove` is given.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positionals[0]
        values = arguments.values("values")
        switch (arguments.value("on"), arguments.value("remove")) {
        case (let on?, nil):
            guard !values.isEmpty else {
                throw arguments.usageError("--on \(on) needs the values it must serve: --values V")
            }
            required = on
        case (nil, let removed?):
            guard values.isEmpty else { throw arguments.usageError("--remove takes no --values") }
            required = removed
        default:
            throw arguments.usageError("give either --on OTHER --values V or --remove OTHER")
        }
        mutation = try Mutation(arguments)
    }

    /// Sets or removes the prerequisite in one request; the server reads the values as the required flag's type.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let path = PathParameters(set: set, key: key, name: required)
        if values.isEmpty {
            return try mutation.write(
                API.removePrerequisite, path, mutation.changeRequest, set: set, client: client, context
            ) { result in
                ["\(key) no longer requires \(required) \(AdminClient.versionNote(result))"]
            }
        }
        let request = PrerequisiteRequest(
            valuesText: values, reason: mutation.reason, allowIncompatible: mutation.forced)
        return try mutation.write(
            API.putPrerequisite, path, request, set: set, client: client, context,
            typed: Dictionary(
                uniqueKeysWithValues: values.indices.map { ("valuesText[\($0)]", "--values for \(required)") })
        ) { result in
            [
                "\(key) requires \(required) to serve \(values.joined(separator: " or ")) "
                    + AdminClient.versionNote(result)
            ]
        }
    }
}

/// A flag's prerequisites as flagctl reads them from the flag's JSON, in either form (docs/core.md,
/// "Prerequisites"): the authoring form's `prerequisites` member, or the wire form's first rule.
enum PrerequisiteText {
    /// Each prerequisite of `flag` as `new-checkout = true` or `theme = "dark" or "dim"`, and the flag's rules
    /// without the wire form's rule.
    static func split(_ flag: JSONValue) -> (prerequisites: [String], rules: [JSONValue]) {
        let (required, rules) = read(flag)
        return (required.map { "\($0.flag) = \($0.values.joined(separator: " or "))" }, rules)
    }

    /// The keys of the flags `flag` requires.
    static func requiredKeys(_ flag: JSONValue) -> [String] {
        read(flag).required.map(\.flag)
    }

    /// The prerequisites, each value as JSON text, and the rules without the wire form's rule.
    private static func read(_ flag: JSONValue) -> (required: [(flag: String, values: [String])], rules: [JSONValue]) {
        var rules = flag["rules"].array ?? []
        var required: [(flag: String, values: [String])] = []
        for item in flag["prerequisites"].array ?? [] {
            required.append((item["flag"].string ?? "?", (item["values"].array ?? []).map(\.compactText)))
        }
        if let conditions = rules.first?["conditions"].array, !conditions.isEmpty,
            conditions.allSatisfy({ $0["op"].string == Operator.prerequisite.name })
        {
            rules.removeFirst()
            for condition in conditions {
                required.append(
                    (condition["attribute"].string ?? "?", (condition["values"].array ?? []).compactMap(\.string)))
            }
        }
        return (required, rules)
    }
}
