import FlagAPI
import FlagCore
import Foundation

/// `flagctl rollout KEY --value V (--percent P | --phased apple [--start DATE] | --steps S)`, and
/// `rollout KEY pause|resume|show`.
package struct RolloutCommand: Command {
    /// `rollout KEY …`
    package static let configuration = CommandConfiguration(
        name: "rollout", abstract: "Roll a value out by percent or on a schedule; pause, resume, show it.",
        synopsis: "KEY [pause|resume|show] --value V (--percent P | --phased apple [--start DATE] | --steps S)",
        positionals: [
            Positional("KEY", help: "the flag's key"),
            Positional("ACTION", help: "pause, resume or show (without it: set the rollout)", isOptional: true),
        ],
        options: [
            .value("value", "V", help: "the value rolled out, of the flag's type"),
            .value("percent", "P", help: "a fixed percent of units, 0–100"),
            .value("phased", "PRESET", help: "a preset schedule: apple (1,2,5,10,20,50,100 % over 7 days)"),
            .value("start", "DATE", help: "when the schedule starts (default: now)"),
            .value("steps", "S", help: "steps after the start, e.g. \"0h:1,24h:5,72h:100\""),
        ] + Mutation.options,
        example: "flagctl rollout new-checkout --value true --phased apple")

    private enum Action {
        /// The rollout to write; its `valueText` is `--value`, its `reason` and `allowIncompatible` are added at run.
        case set(RolloutRequest)
        case pause, resume, show
    }

    private let key: String
    private let action: Action
    private let mutation: Mutation

    /// Checks that exactly one of `--percent`, `--phased`, `--steps` goes with `--value`, or an action alone.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positionals[0]
        mutation = try Mutation(arguments)
        let shaping = ["value", "percent", "phased", "start", "steps"].filter { arguments.value($0) != nil }
        if let word = arguments.positional(1) {
            guard shaping.isEmpty else { throw arguments.usageError("'\(word)' takes no --\(shaping[0])") }
            switch word {
            case "pause": action = .pause
            case "resume": action = .resume
            case "show": action = .show
            default: throw arguments.usageError("unknown action '\(word)'; use pause, resume or show")
            }
            if case .show = action,
                let option = ["wait", "force"].first(where: { arguments.value($0) != nil || arguments.flag($0) })
            {
                throw arguments.usageError("'show' changes nothing; it takes no --\(option)")
            }
            return
        }
        guard let value = arguments.value("value") else { throw arguments.usageError("missing --value V") }
        var request = RolloutRequest(valueText: value)
        let forms = ["percent", "phased", "steps"].filter { arguments.value($0) != nil }
        guard forms.count == 1 else {
            throw arguments.usageError("give exactly one of --percent P, --phased apple, --steps S")
        }
        if let text = arguments.value("percent") {
            if arguments.value("start") != nil { throw arguments.usageError("--start goes with --phased or --steps") }
            request.percent = try Typed.percent(text, arguments)
        }
        if let preset = arguments.value("phased") {
            guard preset == "apple" else { throw arguments.usageError("unknown preset '\(preset)'; presets: apple") }
            request.preset = preset
        }
        if let steps = arguments.value("steps") {
            try Self.checkSteps(steps, arguments)
            request.steps = steps
        }
        if let text = arguments.value("start") {
            request.start = try Typed.date(text, option: "start", arguments)
        }
        action = .set(request)
    }

    /// `0h:1,24h:5,72h:100`: each step a duration and a percent.
    private static func checkSteps(_ text: String, _ arguments: ParsedArguments) throws(CLIError) {
        for step in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = step.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                throw arguments.usageError("--steps '\(step)' needs the form OFFSET:PERCENT, e.g. 24h:5")
            }
            _ = try Typed.duration(String(parts[0]), option: "steps", arguments)
            _ = try Typed.percent(String(parts[1]), arguments)
        }
    }

    /// Sets, pauses, resumes or shows the rollout.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let parameters = PathParameters(set: set, key: key)
        let now = context.now()
        switch action {
        case .show:
            let (read, _) = try client.send(API.getFlag, parameters, NoRequest())
            let rollout = try AdminClient.parsed(read.flag, "flag \"\(key)\"")["rollout"]
            if context.globals.json {
                context.console.print(rollout.compactText)
            } else {
                for line in Self.lines(key, rollout, now: now) { context.console.print(line) }
            }
        case .pause, .resume:
            let (verb, endpoint) =
                if case .pause = action { ("pause", API.pauseRollout) } else { ("resume", API.resumeRollout) }
            return try mutation.write(
                endpoint, parameters, mutation.changeRequest, set: set, client: client, context
            ) { result throws(CLIError) in
                [
                    "\(verb)d the rollout of \(key) at "
                        + "\(RolloutView.summary(try AdminClient.flag(of: result)["rollout"], now: now)) "
                        + AdminClient.versionNote(result)
                ]
            }
        case .set(var request):
            // One request: the server reads the value as the flag's type.
            request.reason = mutation.reason
            request.allowIncompatible = mutation.forced
            return try mutation.write(
                API.putRollout, parameters, request, set: set, client: client, context,
                typed: ["valueText": "--value for \(key)"]
            ) { result throws(CLIError) in
                [
                    "rolling out \(key): \(RolloutView.summary(try AdminClient.flag(of: result)["rollout"], now: now)) "
                        + AdminClient.versionNote(result)
                ]
            }
        }
        return .success
    }

    private static func lines(_ key: String, _ rollout: JSONValue, now: Date) -> [String] {
        RolloutView.lines(key, rollout, now: now)
    }
}
