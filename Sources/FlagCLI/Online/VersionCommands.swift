import FlagAPI
import FlagCore
import Foundation

/// `flagctl history [KEY]`: the versions of a set, newest first, with who did what and why.
package struct HistoryCommand: Command {
    /// `history [KEY]`
    package static let configuration = CommandConfiguration(
        name: "history", abstract: "Show the versions of a set (or those that changed one flag).",
        synopsis: "[KEY] [--limit N]",
        positionals: [Positional("KEY", help: "only versions that changed this flag", isOptional: true)],
        options: [.value("limit", "N", help: "at most N versions (default 100, max 1000)")],
        example: "flagctl history new-checkout")

    private let key: String?
    private let limit: Int?

    /// Takes the key and the limit.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positional(0)
        if let text = arguments.value("limit") {
            guard let limit = Int(text), (1...1000).contains(limit) else {
                throw arguments.usageError("--limit needs a number from 1 to 1000, not '\(text)'")
            }
            self.limit = limit
        } else {
            limit = nil
        }
    }

    /// `VERSION  TIME  ACTOR  ACTION  SUBJECT  REASON`
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (history, answer) = try client.send(
            API.history, PathParameters(set: set), HistoryQuery(key: key, limit: limit))
        return context.showTable(answer) {
            var table = Table(header: ["VERSION", "TIME", "ACTOR", "ACTION", "SUBJECT", "REASON"])
            for version in history.versions {
                table.append([
                    String(version.version), Shown.date(version.createdAt), version.actor, version.action,
                    version.subject ?? "-", version.reason ?? "",
                ])
            }
            return table
        }
    }
}

/// `flagctl diff V1 V2`: what changed between two versions, field by field.
package struct DiffCommand: Command {
    /// `diff V1 V2`
    package static let configuration = CommandConfiguration(
        name: "diff", abstract: "Show what changed between two versions of a set.", synopsis: "V1 V2",
        positionals: [Positional("V1", help: "the older version"), Positional("V2", help: "the newer version")],
        example: "flagctl diff 41 43")

    private let from: Int
    private let to: Int

    /// Takes two version numbers.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        guard let from = Int(arguments.positionals[0]), let to = Int(arguments.positionals[1]), from >= 1, to >= 1
        else { throw arguments.usageError("V1 and V2 are version numbers, e.g. 'flagctl diff 41 43'") }
        self.from = from
        self.to = to
    }

    /// `~ flag new-checkout` then `    killed: false → true` per changed member.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (diff, answer) = try client.send(API.diff, PathParameters(set: set), DiffQuery(from: from, to: to))
        return try context.show(answer) { () throws(CLIError) in
            let lines = try DiffText.lines(flags: diff.flags, cohorts: diff.cohorts)
            return lines.isEmpty ? ["versions \(from) and \(to) have the same flags and cohorts"] : lines
        }
    }
}

/// How a diff reads for people.
enum DiffText {
    /// `+ flag x`, `- cohort y`, `~ flag z` with `    member: before → after` lines.
    static func lines(flags: [ItemDiff], cohorts: [ItemDiff]) throws(CLIError) -> [String] {
        var lines: [String] = []
        for (kind, items) in [("flag", flags), ("cohort", cohorts)] {
            for item in items {
                let key = item.key
                let before =
                    try item.before.map { raw throws(CLIError) in try AdminClient.parsed(raw, "\(kind) \"\(key)\"") }
                    ?? .null
                let after =
                    try item.after.map { raw throws(CLIError) in try AdminClient.parsed(raw, "\(kind) \"\(key)\"") }
                    ?? .null
                if before == .null {
                    lines.append("+ \(kind) \(key)")
                } else if after == .null {
                    lines.append("- \(kind) \(key)")
                } else {
                    lines.append("~ \(kind) \(key)")
                    let names = Set((before.object ?? [:]).keys).union((after.object ?? [:]).keys).sorted()
                    for name in names where before[name] != after[name] {
                        lines.append("    \(name): \(shown(before[name])) → \(shown(after[name]))")
                    }
                }
            }
        }
        return lines
    }

    private static func shown(_ value: JSONValue) -> String {
        let text = value == .null ? "-" : value.compactText
        return text.count > 60 ? String(text.prefix(59)) + "…" : text
    }
}

/// `flagctl rollback VERSION`: a new version with the flags and cohorts of an old one.
package struct RollbackCommand: Command {
    /// `rollback VERSION`
    package static let configuration = CommandConfiguration(
        name: "rollback", abstract: "Make a new version whose flags and cohorts are those of an older one.",
        synopsis: "VERSION [--reason S]", positionals: [Positional("VERSION", help: "the version to go back to")],
        options: Mutation.options, example: "flagctl rollback 41 --reason 'bad rule'")

    private let version: Int
    private let mutation: Mutation

    /// Takes the version.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        guard let version = Int(arguments.positionals[0]), version >= 1 else {
            throw arguments.usageError("VERSION is a version number, not '\(arguments.positionals[0])'")
        }
        self.version = version
        mutation = try Mutation(arguments)
    }

    /// POSTs the rollback.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let request = RollbackRequest(version: version, reason: mutation.reason, allowIncompatible: mutation.forced)
        return try mutation.write(
            API.rollback, PathParameters(set: set), request, set: set, client: client, context
        ) { result in
            ["rolled \(set) back to version \(version) \(AdminClient.versionNote(result))"]
        }
    }
}
