import FlagAPI
import FlagCore

/// `flagctl override KEY VALUE (--unit ID | --cohort C) [--for DURATION]` and
/// `override KEY --remove (--unit ID | --cohort C)`.
package struct OverrideCommand: Command {
    /// `override KEY VALUE …`
    package static let configuration = CommandConfiguration(
        name: "override", abstract: "Force a value for one unit or a cohort, or remove such an override.",
        synopsis: "KEY (VALUE | --remove) (--unit ID | --cohort C) [--for DURATION]",
        positionals: [
            Positional("KEY", help: "the flag's key"),
            Positional("VALUE", help: "the forced value, of the flag's type", isOptional: true),
        ],
        options: [
            .value("unit", "ID", help: "the unit that gets the value"),
            .value("cohort", "C", help: "the cohort whose units get the value"),
            .value("for", "DURATION", help: "only for this long, e.g. 2h (default: until removed)"),
            .flag("remove", help: "remove the override instead"),
        ] + Mutation.options,
        example: "flagctl override new-checkout true --unit u-42 --for 2h")

    private let key: String
    private let value: String?
    private let target: (name: String, id: String)
    private let seconds: Int?
    private let mutation: Mutation

    /// Checks VALUE against `--remove`, and exactly one of `--unit`/`--cohort`.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positionals[0]
        let remove = arguments.flag("remove")
        value = arguments.positional(1)
        if remove && value != nil { throw arguments.usageError("--remove takes no VALUE") }
        if !remove && value == nil { throw arguments.usageError("missing VALUE (or --remove)") }
        switch (arguments.value("unit"), arguments.value("cohort")) {
        case (let unit?, nil): target = ("unit", unit)
        case (nil, let cohort?): target = ("cohort", cohort)
        default: throw arguments.usageError("give exactly one of --unit ID or --cohort C")
        }
        if remove && arguments.value("for") != nil { throw arguments.usageError("--remove takes no --for") }
        seconds = try arguments.value("for").map { text throws(CLIError) in
            try Typed.duration(text, option: "for", arguments)
        }
        mutation = try Mutation(arguments)
    }

    /// Adds or removes the override.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let parameters = PathParameters(set: set, key: key)
        let who = "\(target.name) \(target.id)"
        let unit = target.name == "unit" ? target.id : nil
        let cohort = target.name == "cohort" ? target.id : nil
        guard let value else {
            let request = RemoveOverrideRequest(
                unit: unit, cohort: cohort, reason: mutation.reason, allowIncompatible: mutation.forced)
            return try mutation.write(
                API.removeOverride, parameters, request, set: set, client: client, context
            ) { result in
                ["removed the override of \(key) for \(who) \(AdminClient.versionNote(result))"]
            }
        }
        // One request: the server reads the value as the flag's type.
        let request = OverrideRequest(
            unit: unit, cohort: cohort, valueText: value, for: seconds.map(DurationText.format),
            reason: mutation.reason, allowIncompatible: mutation.forced)
        let until = seconds.map { " for \(DurationText.format($0))" } ?? ""
        return try mutation.write(
            API.addOverride, parameters, request, set: set, client: client, context,
            typed: ["valueText": "VALUE for \(key)"]
        ) { result throws(CLIError) in
            [
                "\(key) is \(Self.served(try AdminClient.flag(of: result), for: target) ?? value) for \(who)\(until) "
                    + AdminClient.versionNote(result)
            ]
        }
    }
}

extension OverrideCommand {
    /// The value the answer's flag forces for `target`, as the server read it.
    static func served(_ flag: JSONValue, for target: (name: String, id: String)) -> String? {
        let override = flag["overrides"].array?.last { $0[target.name].string == target.id }
        return override.map { $0["value"].compactText }
    }
}
