import FlagAPI
import FlagCore
import Foundation

/// `flagctl list [--expired] [--kind K]`: the flags of a set.
package struct ListCommand: Command {
    /// `list [--expired] [--kind K]`
    package static let configuration = CommandConfiguration(
        name: "list", abstract: "List the flags of a set.", synopsis: "[--expired] [--kind K]",
        options: [
            .flag("expired", help: "only flags past their expiry"),
            .value("kind", "K", help: "only flags of this kind: " + Vocabulary.choices(FlagKind.known.map(\.name))),
        ],
        example: "flagctl --set ios-prod list --kind release")

    private let expired: Bool
    private let kind: FlagKind?

    /// Takes the filters.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        expired = arguments.flag("expired")
        kind = try arguments.value("kind").map { name throws(CLIError) in
            try Vocabulary.kind(name, option: "kind", arguments)
        }
    }

    /// `KEY  TYPE  KIND  DEFAULT  STATE  EXPIRES`
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let query = FlagListQuery(kind: kind?.name, expired: expired ? true : nil)
        let (list, answer) = try client.send(API.listFlags, PathParameters(set: set), query)
        return try context.showTable(answer) { () throws(CLIError) in
            let flags = try AdminClient.parsed(list.flags, each: "flag")
            let now = context.now()
            let header = ["KEY", "TYPE", "KIND", "DEFAULT", "STATE", "EXPIRES"]
            return Table(header: header, rows: flags.sorted { $0.key < $1.key }) { key, flag in
                [
                    key, flag["type"].string ?? "?", flag["kind"].string ?? "?", flag["default"].compactText,
                    FlagState.summary(flag, now: now),
                    flag["expiresAt"].date.map { Shown.relative($0, now: now) } ?? "-",
                ]
            }
        }
    }
}

/// `flagctl get KEY`: one flag, every field.
package struct GetCommand: Command {
    /// `get KEY`
    package static let configuration = CommandConfiguration(
        name: "get", abstract: "Show one flag: values, rules, overrides, rollout, expiry.", synopsis: "KEY",
        positionals: [Positional("KEY", help: "the flag's key")], example: "flagctl --set ios-prod get new-checkout")

    private let key: String

    /// Takes the key.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positionals[0]
    }

    /// Prints `field: value` lines, or the server's `{"set","version","key","flag"}` with `--json`.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (read, answer) = try client.send(API.getFlag, PathParameters(set: set, key: key), NoRequest())
        return try context.show(answer) { () throws(CLIError) in
            FlagState.describe(key, try AdminClient.parsed(read.flag, "flag \"\(key)\""), now: context.now())
        }
    }
}

/// How a flag reads for people.
enum FlagState {
    /// `killed`, `archived`, `expired`, `rollout 5%`, `paused 5%`, `3 rules`, or `default`.
    static func summary(_ flag: JSONValue, now: Date) -> String {
        if flag["archived"].bool == true { return "archived" }
        if flag["killed"].bool == true { return "killed" }
        if let expires = flag["expiresAt"].date, expires <= now { return "expired" }
        var parts: [String] = []
        if flag["rollout"] != .null, let percent = RolloutView.percent(flag["rollout"], now: now) {
            let paused = flag["rollout"]["pausedAt"] != .null
            parts.append("\(paused ? "paused" : "rollout") \(Shown.percent(percent))")
        }
        let (prerequisites, ruleList) = PrerequisiteText.split(flag)
        if !prerequisites.isEmpty { parts.append(counted(prerequisites.count, "prerequisite")) }
        let rules = ruleList.count
        if rules > 0 { parts.append(counted(rules, "rule")) }
        let overrides = flag["overrides"].array?.count ?? 0
        if overrides > 0 { parts.append(counted(overrides, "override")) }
        return parts.isEmpty ? "default" : parts.joined(separator: ", ")
    }

    /// The lines of `get`.
    static func describe(_ key: String, _ flag: JSONValue, now: Date) -> [String] {
        var lines = [
            "key:         \(key)",
            "type:        \(flag["type"].string ?? "?")",
            "kind:        \(flag["kind"].string ?? "?")",
        ]
        if let values = flag["values"].array {
            lines.append("values:      \(values.map(\.compactText).joined(separator: ", "))")
        }
        if let text = flag["description"].string { lines.append("description: \(text)") }
        if let text = flag["owner"].string { lines.append("owner:       \(text)") }
        lines.append("default:     \(flag["default"].compactText)")
        if flag["killValue"] != .null { lines.append("kill value:  \(flag["killValue"].compactText)") }
        lines.append("state:       \(summary(flag, now: now))")
        if flag["expiresAt"] != .null {
            let kept = flag["expiredValue"] == .null ? "" : ", then serves \(flag["expiredValue"].compactText)"
            lines.append("expires:     \(Shown.when(flag["expiresAt"], now: now))\(kept)")
        }
        let (prerequisites, rules) = PrerequisiteText.split(flag)
        for prerequisite in prerequisites { lines.append("requires:    \(prerequisite)") }
        for rule in rules {
            lines.append("rule:        \(rule["name"].string ?? "?"): \(RuleText.describe(rule))")
        }
        for override in flag["overrides"].array ?? [] {
            let who = override["unit"].string.map { "unit \($0)" } ?? "cohort \(override["cohort"].string ?? "?")"
            let until = override["until"] == .null ? "" : " until \(Shown.when(override["until"], now: now))"
            lines.append("override:    \(who) → \(override["value"].compactText)\(until)")
        }
        if flag["rollout"] != .null {
            lines.append("rollout:     \(RolloutView.summary(flag["rollout"], now: now))")
        }
        return lines
    }
}

/// How a rule reads: `cohort beta → true`, `country in DE,AT → 50% of true`.
enum RuleText {
    static func describe(_ rule: JSONValue) -> String {
        let who: String
        if let cohort = rule["cohort"].string {
            who = "cohort \(cohort)"
        } else {
            who = (rule["conditions"].array ?? []).map { condition in
                let values = (condition["values"].array ?? []).map { $0.string ?? $0.compactText }
                return "\(condition["attribute"].string ?? "?") \(condition["op"].string ?? "?") "
                    + values.joined(separator: ",")
            }.joined(separator: " and ")
        }
        if rule["value"] != .null { return "\(who) → \(rule["value"].compactText)" }
        if rule["rollout"] != .null {
            let percent = rule["rollout"]["percent"].double.map(Shown.percent) ?? "scheduled"
            return "\(who) → \(percent) of \(rule["rollout"]["value"].compactText)"
        }
        return "\(who) → split"
    }
}
