import FlagAPI
import FlagCore

/// `flagctl sets list`: every flag set on the server with its version.
package struct SetsListCommand: Command {
    /// `sets list`
    package static let configuration = CommandConfiguration(
        name: "sets list", abstract: "List the flag sets on the server.", synopsis: "",
        example: "flagctl sets list")

    /// Takes no arguments.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {}

    /// `NAME  VERSION  FLAGS  COHORTS  UPDATED`
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let (list, answer) = try client.send(API.listSets, PathParameters(), NoRequest())
        return context.showTable(answer) {
            Table(header: ["NAME", "VERSION", "FLAGS", "COHORTS", "UPDATED"], rows: list.sets) { set in
                [
                    set.name, String(set.version), String(set.flags), String(set.cohorts),
                    Shown.when(set.updatedAt, now: context.now()),
                ]
            }
        }
    }
}

/// `flagctl sets create NAME`: a new, empty flag set at version 1.
package struct SetsCreateCommand: NamedWriteCommand {
    /// `sets create NAME`
    package static let configuration = CommandConfiguration(
        name: "sets create", abstract: "Create an empty flag set.", synopsis: "NAME [--reason S]",
        positionals: [Positional("NAME", help: "the new set's name, e.g. ios-prod")], options: Mutation.creationOptions,
        example: "flagctl sets create ios-prod")

    let name: String
    let mutation: Mutation

    /// Creates the set.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let request = CreateSetRequest(name: name, reason: mutation.reason, allowIncompatible: mutation.forced)
        let (result, answer) = try client.send(API.createSet, PathParameters(), request, ifMatch: mutation.ifMatch)
        return try mutation.finish(result, answer, set: name, client: client, context) {
            ["created set \(name) \(AdminClient.versionNote(result))"]
        }
    }
}

/// `flagctl sets settings SET [--compatibility enforce|warn|off] [--reviews required|off]`: shows or changes a set's
/// settings.
package struct SetsSettingsCommand: Command {
    /// `sets settings SET`
    package static let configuration = CommandConfiguration(
        name: "sets settings", abstract: "Show a set's settings, or change its compatibility gate or reviews.",
        synopsis: "SET [--compatibility enforce|warn|off] [--reviews required|off] [--reason S]",
        positionals: [Positional("SET", help: "the set's name")],
        options: [
            .value(
                "compatibility", "MODE",
                help: "what a write that active clients cannot evaluate meets: enforce (refused), warn or off"),
            .value("reviews", "MODE", help: "required: writes need an approved change request (kills aside); off"),
            .auditReason,
        ],
        example: "flagctl sets settings ios-prod --compatibility warn")

    /// The values of `reviews` (docs/reviews.md) and what each does.
    static let reviewModes: [(name: String, effect: String)] = [
        ("required", "a write needs a change request that another person approved (--propose); kills go at once"),
        ("off", "writes go ahead; --propose asks for a second pair of eyes"),
    ]

    /// The values of `compatibility` (docs/telemetry.md) and what each does.
    static let compatibilityModes: [(name: String, effect: String)] = [
        ("enforce", "writes that more than 0.1% of active instances cannot evaluate are refused (--force writes them)"),
        ("warn", "such writes are made, with a warning"),
        ("off", "no check"),
    ]

    private let name: String
    private let compatibility: String?
    private let reviews: String?
    private let reason: String?

    /// Takes the set and the new modes.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        name = arguments.positionals[0]
        compatibility = arguments.value("compatibility")
        reviews = arguments.value("reviews")
        reason = arguments.value("reason")
        if reason != nil && compatibility == nil && reviews == nil {
            throw arguments.usageError(
                "--reason goes with a change: --compatibility enforce|warn|off or --reviews required|off")
        }
        if let compatibility, !Self.compatibilityModes.contains(where: { $0.name == compatibility }) {
            throw arguments.usageError(
                "unknown --compatibility '\(compatibility)'; use "
                    + Vocabulary.choices(Self.compatibilityModes.map(\.name)))
        }
        if let reviews, !Self.reviewModes.contains(where: { $0.name == reviews }) {
            throw arguments.usageError(
                "unknown --reviews '\(reviews)'; use " + Vocabulary.choices(Self.reviewModes.map(\.name)))
        }
    }

    /// GETs the settings, or PUTs the new mode; `compatibility: MODE: what it does`.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let parameters = PathParameters(set: name)
        let changing = compatibility != nil || reviews != nil
        let (settings, answer) =
            if changing {
                try client.send(
                    API.putSettings, parameters,
                    SettingsRequest(compatibility: compatibility, reviews: reviews, reason: reason))
            } else {
                try client.send(API.getSettings, parameters, NoRequest())
            }
        func effect(_ mode: String, _ modes: [(name: String, effect: String)]) -> String {
            modes.first { $0.name == mode }?.effect ?? "a mode this flagctl does not know"
        }
        let lead = changing ? "set \(name):" : "\(name):"
        return context.show(answer) {
            var lines = [
                "\(lead) compatibility \(settings.compatibility): "
                    + effect(settings.compatibility, Self.compatibilityModes)
            ]
            if let mode = settings.reviews {
                lines.append("\(lead) reviews \(mode): \(effect(mode, Self.reviewModes))")
            }
            return lines
        }
    }
}
