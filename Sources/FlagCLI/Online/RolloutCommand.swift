import FlagCore
import Foundation

/// `flagctl rollout KEY --value V (--percent P | --phased apple [--start DATE] | --steps S)`, and
/// `rollout KEY pause|resume|show`.
public struct RolloutCommand: Command {
    /// `rollout KEY …`
    public static let configuration = CommandConfiguration(
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
        case set(value: String, members: [String: JSONValue])
        case pause, resume, show
    }

    private let key: String
    private let action: Action
    private let mutation: Mutation

    /// Checks that exactly one of `--percent`, `--phased`, `--steps` goes with `--value`, or an action alone.
    public init(parsing arguments: ParsedArguments) throws(CLIError) {
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
        var members: [String: JSONValue] = [:]
        let forms = ["percent", "phased", "steps"].filter { arguments.value($0) != nil }
        guard forms.count == 1 else {
            throw arguments.usageError("give exactly one of --percent P, --phased apple, --steps S")
        }
        if let text = arguments.value("percent") {
            if arguments.value("start") != nil { throw arguments.usageError("--start goes with --phased or --steps") }
            members["percent"] = .double(try Typed.percent(text, arguments))
        }
        if let preset = arguments.value("phased") {
            guard preset == "apple" else { throw arguments.usageError("unknown preset '\(preset)'; presets: apple") }
            members["preset"] = .string(preset)
        }
        if let steps = arguments.value("steps") {
            try Self.checkSteps(steps, arguments)
            members["steps"] = .string(steps)
        }
        if let text = arguments.value("start") {
            members["start"] = .string(ISO8601.format(try Typed.date(text, option: "start", arguments)))
        }
        action = .set(value: value, members: members)
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
    public func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let set = try client.requireSet(for: Self.configuration)
        let path = client.flagPath(set, key) + "/rollout"
        let now = context.now()
        switch action {
        case .show:
            let answer = try client.send("GET", client.flagPath(set, key))
            if context.globals.json {
                context.console.print(answer.json["flag"]["rollout"].compactText)
            } else {
                for line in Self.lines(key, answer.json["flag"]["rollout"], now: now) { context.console.print(line) }
            }
        case .pause, .resume:
            let verb = { if case .pause = action { return "pause" } else { return "resume" } }()
            let answer = try client.send(
                "POST", path + "/" + verb, query: mutation.query(), body: mutation.body(), ifMatch: mutation.ifMatch)
            return try mutation.finish(answer, set: set, client: client, context) { () throws(CLIError) in
                [
                    "\(verb)d the rollout of \(key) at "
                        + "\(RolloutView.summary(answer.json["flag"]["rollout"], now: now)) "
                        + (try AdminClient.versionNote(answer))
                ]
            }
        case .set(let text, var members):
            // One request: the server reads the value as the flag's type.
            members["valueText"] = .string(text)
            let answer = try client.send(
                "PUT", path, query: mutation.query(), body: mutation.body(members), ifMatch: mutation.ifMatch,
                typed: ["valueText": "--value for \(key)"])
            return try mutation.finish(answer, set: set, client: client, context) { () throws(CLIError) in
                [
                    "rolling out \(key): \(RolloutView.summary(answer.json["flag"]["rollout"], now: now)) "
                        + (try AdminClient.versionNote(answer))
                ]
            }
        }
        return .success
    }

    private static func lines(_ key: String, _ rollout: JSONValue, now: Date) -> [String] {
        RolloutView.lines(key, rollout, now: now)
    }
}
