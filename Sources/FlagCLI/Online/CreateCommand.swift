import FlagAPI
import FlagCore
import Foundation

/// `flagctl create KEY --type T --default V …`: a new flag. Without `--expires`/`--lifetime` the server gives
/// release and experiment flags their kind's lifetime (42 and 90 days), and this says so.
package struct CreateCommand: Command {
    /// `create KEY --type T --default V …`
    package static let configuration = CommandConfiguration(
        name: "create", abstract: "Create a flag.",
        synopsis: "KEY --type T --default V [--values V,V...] [--kind K] [--description S] [--owner S] "
            + "[--expires DATE | --lifetime 6w] [--kill-value V]",
        positionals: [Positional("KEY", help: "the new flag's key")],
        options: [
            .value("type", "T", help: Vocabulary.choices(FlagType.known.map(\.name))),
            .value("default", "V", help: "the value everyone gets unless targeted"),
            .value("values", "V,V...", help: "a string flag's only values, separated by commas (an enum flag)"),
            .value("kind", "K", help: Vocabulary.choices(FlagKind.known.map(\.name)) + ", default \(defaultKind.name)"),
            .value("description", "S", help: "what the flag is for"),
            .value("owner", "S", help: "who to ask about it"),
            .value("expires", "DATE", help: "when it expires (default: \(lifetimes) from now)"),
            .value("lifetime", "DURATION", help: "expires this long from now, e.g. 6w"),
            .value("kill-value", "V", help: "the value served while killed"),
        ] + Mutation.options,
        example: "flagctl create new-checkout --type bool --default false --owner payments --lifetime 6w")

    /// `release 42 d, experiment 90 d`: the kinds with a lifetime (SPEC §1).
    private static var lifetimes: String {
        FlagKind.known.compactMap { kind in kind.lifetimeDays.map { "\(kind.name) \($0) d" } }.joined(separator: ", ")
    }

    /// The kind of a flag created without `--kind`.
    static let defaultKind = FlagKind.release

    private let key: String
    private let type: FlagType
    private let kind: FlagKind
    private let defaultText: String
    /// The only values a string flag serves (`--values`).
    private let values: [String]?
    private let killText: String?
    private let description: String?
    private let owner: String?
    private let expires: Date?
    private let lifetime: Int?
    private let mutation: Mutation

    /// Checks the type, its values, the kind and the expiry options.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positionals[0]
        guard let type = arguments.value("type") else { throw arguments.usageError("missing --type T") }
        let flagType = try Vocabulary.type(type, option: "type", arguments)
        self.type = flagType
        guard let defaultText = arguments.value("default") else { throw arguments.usageError("missing --default V") }
        self.defaultText = defaultText
        values = try arguments.value("values").map { text throws(CLIError) in
            try Self.values(text, type: flagType, arguments)
        }
        if let name = arguments.value("kind") {
            kind = try Vocabulary.kind(name, option: "kind", arguments)
        } else {
            kind = Self.defaultKind
        }
        killText = arguments.value("kill-value")
        description = arguments.value("description")
        owner = arguments.value("owner")
        if arguments.value("expires") != nil && arguments.value("lifetime") != nil {
            throw arguments.usageError("--expires and --lifetime cannot be used together")
        }
        expires = try arguments.value("expires").map { text throws(CLIError) in
            try Typed.date(text, option: "expires", arguments)
        }
        lifetime = try arguments.value("lifetime").map { text throws(CLIError) in
            try Typed.duration(text, option: "lifetime", arguments)
        }
        mutation = try Mutation(arguments)
    }

    /// `--values blue,green`: only for a string flag, no value empty.
    private static func values(_ text: String, type: FlagType, _ arguments: ParsedArguments) throws(CLIError)
        -> [String]
    {
        guard type == .string else {
            throw arguments.usageError("--values lists a string flag's values; this is a \(type.name) flag")
        }
        let values = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !values.contains(where: \.isEmpty) else {
            throw arguments.usageError("--values '\(text)' has an empty value; separate the values by single commas")
        }
        return values
    }

    /// PUTs the new flag; refuses to replace one that exists.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        var flag: [String: JSONValue] = [
            "type": .string(type.name), "kind": .string(kind.name),
            "default": try Typed.value(defaultText, type: type.name, for: "--default"),
        ]
        if let values { flag["values"] = .array(values.map(JSONValue.string)) }
        if let killText { flag["killValue"] = try Typed.value(killText, type: type.name, for: "--kill-value") }
        if let description { flag["description"] = .string(description) }
        if let owner { flag["owner"] = .string(owner) }
        let now = context.now()
        if let expires { flag["expiresAt"] = .string(ISO8601.format(expires)) }
        if let lifetime { flag["expiresAt"] = .string(ISO8601.format(now.addingTimeInterval(Double(lifetime)))) }
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        // PUT creates or replaces; `create` must never silently replace a flag: the server checks, in the write.
        let request = PutFlagRequest(
            flag: RawJSON(.object(flag)), reason: mutation.reason, allowIncompatible: mutation.forced)
        let (result, answer) = try client.send(
            API.putFlag, PathParameters(set: set, key: key), request, ifMatch: mutation.ifMatch,
            review: mutation.review,
            createOnly: "flag '\(key)' already exists in set '\(set)'; change it with set/rule/rollout")
        return try mutation.finish(result, answer, set: set, client: client, context) { () throws(CLIError) in
            var lines = ["created \(key) in \(set) \(AdminClient.versionNote(result))"]
            let expiresAt = try AdminClient.flag(of: result)["expiresAt"]
            if expiresAt != .null {
                let implied = expires == nil && lifetime == nil
                let lifetime = implied ? ", the \(kind.name) lifetime (set --expires or --lifetime)" : ""
                lines.append("expires \(Shown.when(expiresAt, now: now))\(lifetime)")
            }
            return lines
        }
    }
}
