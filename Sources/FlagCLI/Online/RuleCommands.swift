import FlagAPI
import FlagCore

/// `flagctl rule add KEY (--cohort C | --where COND...) (--value V | --percent P --value V) [--name N]`.
package struct RuleAddCommand: Command {
    /// `rule add KEY …`
    package static let configuration = CommandConfiguration(
        name: "rule add", abstract: "Append a targeting rule to a flag.",
        synopsis: "KEY (--cohort C | --where COND...) (--value V | --percent P --value V) [--name N]",
        positionals: [Positional("KEY", help: "the flag's key")],
        options: [
            .value("cohort", "C", help: "match the units of this cohort"),
            .repeated("where", "COND", help: "match 'ATTRIBUTE OP VALUE[,VALUE]'; several must all match"),
            .value("value", "V", help: "the value served to matching units"),
            .value("percent", "P", help: "serve the value to this percent of matching units only"),
            .value("name", "N", help: "the rule's name (default: the cohort, or rule-N)"),
        ] + Mutation.options,
        example: "flagctl rule add new-checkout --where 'country in DE,AT' --percent 50 --value true")

    private let key: String
    private let cohort: String?
    private let conditions: [JSONValue]
    private let value: String
    private let percent: Double?
    private let name: String?
    private let mutation: Mutation

    /// Checks that exactly one of `--cohort`/`--where` is given, and the value.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positionals[0]
        cohort = arguments.value("cohort")
        var conditions: [JSONValue] = []
        for text in arguments.values("where") { conditions.append(try Typed.condition(text, arguments)) }
        self.conditions = conditions
        guard (cohort == nil) != conditions.isEmpty else {
            throw arguments.usageError("give either --cohort C or --where COND, not both and not neither")
        }
        guard let value = arguments.value("value") else { throw arguments.usageError("missing --value V") }
        self.value = value
        percent = try arguments.value("percent").map { text throws(CLIError) in try Typed.percent(text, arguments) }
        name = arguments.value("name")
        mutation = try Mutation(arguments)
    }

    /// Appends the rule in one request: the server reads the value as the flag's type and, without `--name`,
    /// names the rule after its cohort or as `rule-N`.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        var rule: [String: JSONValue] = [:]
        if let name { rule["name"] = .string(name) }
        if let cohort { rule["cohort"] = .string(cohort) } else { rule["conditions"] = .array(conditions) }
        if let percent {
            rule["rollout"] = .object(["percent": .double(percent), "valueText": .string(value)])
        } else {
            rule["valueText"] = .string(value)
        }
        let request = RuleRequest(
            rule: RawJSON(.object(rule)), reason: mutation.reason, allowIncompatible: mutation.forced)
        return try mutation.write(
            API.addRule, PathParameters(set: set, key: key), request, set: set, client: client, context,
            typed: ["rule.valueText": "--value for \(key)", "rule.rollout.valueText": "--value for \(key)"]
        ) { result throws(CLIError) in
            let added = try AdminClient.flag(of: result)["rules"].array?.last ?? .object(rule)
            return [
                "added rule \(added["name"].string ?? "?") to \(key): \(RuleText.describe(added)) "
                    + AdminClient.versionNote(result)
            ]
        }
    }
}

/// `flagctl rule remove KEY NAME`.
package struct RuleRemoveCommand: Command {
    /// `rule remove KEY NAME`
    package static let configuration = CommandConfiguration(
        name: "rule remove", abstract: "Remove a targeting rule from a flag.", synopsis: "KEY NAME [--reason S]",
        positionals: [Positional("KEY", help: "the flag's key"), Positional("NAME", help: "the rule's name")],
        options: Mutation.options, example: "flagctl rule remove new-checkout beta")

    private let key: String
    private let name: String
    private let mutation: Mutation

    /// Takes the key and the rule's name.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positionals[0]
        name = arguments.positionals[1]
        mutation = try Mutation(arguments)
    }

    /// Deletes the rule.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        return try mutation.write(
            API.removeRule, PathParameters(set: set, key: key, name: name), mutation.changeRequest, set: set,
            client: client, context
        ) { result in
            ["removed rule \(name) from \(key) \(AdminClient.versionNote(result))"]
        }
    }
}
