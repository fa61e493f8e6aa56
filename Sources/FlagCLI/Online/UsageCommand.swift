import FlagAPI
import FlagCore
import Foundation

/// `flagctl usage [KEY] [--days N]`: how often the flags of a set were evaluated, by day and variant, and by which
/// clients.
package struct UsageCommand: Command {
    /// `usage [KEY] [--days N]`
    package static let configuration = CommandConfiguration(
        name: "usage", abstract: "Show how often each flag was evaluated, by day and variant, and when last.",
        synopsis: "[KEY] [--days N]",
        positionals: [Positional("KEY", help: "one flag, day by day (default: every flag)", isOptional: true)],
        options: [.value("days", "N", help: "the last N days, 1–\(maximumDays) (default 30)")],
        example: "flagctl --set ios-prod usage new-checkout --days 7")

    /// The server keeps counts for 90 days.
    static let maximumDays = 90

    private let key: String?
    private let days: Int?

    /// Takes the key and the window.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positional(0)
        days = try arguments.value("days").map { text throws(CLIError) in
            try Self.days(text, option: "days", arguments)
        }
    }

    /// A number of days from 1 to 90, for `--days` and `stale --unused-days`.
    static func days(_ text: String, option: String, _ arguments: ParsedArguments) throws(CLIError) -> Int {
        guard let days = Int(text), (1...maximumDays).contains(days) else {
            throw arguments.usageError(
                "--\(option) needs a number of days from 1 to \(maximumDays) (the counts kept), not '\(text)'")
        }
        return days
    }

    /// Tables for people, or `{"set","days","flags":[{"key","lastEvaluated","days":[…]}],"sdks":[…]}`.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (answer, usage) = try Self.fetch(client, set: set, key: key, days: days)
        if let key, !usage.flags.contains(where: { $0.key == key }) {
            throw .failure("no flag \"\(key)\" in the usage of set \"\(set)\" (see 'flagctl list')")
        }
        return context.show(answer) {
            key == nil ? UsageText.summary(usage, now: context.now()) : UsageText.days(usage, now: context.now())
        }
    }

    /// `GET /v1/admin/sets/{set}/usage?key=&days=`, read.
    static func fetch(_ client: AdminClient, set: String, key: String?, days: Int?) throws(CLIError)
        -> (AdminClient.Answer, UsageReport)
    {
        let (usage, answer) = try client.send(API.usage, PathParameters(set: set), UsageQuery(key: key, days: days))
        return (answer, UsageReport(usage))
    }
}

/// How `usage` reads for people.
enum UsageText {
    /// Every flag: `KEY EVALUATIONS PER DAY LAST EVALUATED VARIANTS`, then the clients by SDK version.
    static func summary(_ usage: UsageReport, now: Date) -> [String] {
        var lines = ["\(usage.set), the last \(counted(usage.days, "day")) (UTC):"]
        var table = Table(header: ["KEY", "EVALUATIONS", "PER DAY", "LAST EVALUATED", "VARIANTS"])
        for flag in usage.flags.sorted(by: { utf8Less($0.key, $1.key) }) {
            let perDay = usage.days > 0 ? flag.evaluations / usage.days : 0
            table.append([
                flag.key, String(flag.evaluations), String(perDay), last(flag, days: usage.days, now: now),
                variants(flag.variants),
            ])
        }
        lines += table.lines(fitting: Help.width)
        lines += sdks(usage)
        return lines
    }

    /// One flag: a summary line and `DAY EVALUATIONS VARIANTS`, newest first, then the clients by SDK version.
    static func days(_ usage: UsageReport, now: Date) -> [String] {
        guard let flag = usage.flags.first else { return [] }
        let window = "\(flag.key) in \(usage.set), the last \(counted(usage.days, "day")) (UTC): "
        var lines = [
            flag.lastEvaluated == nil
                ? window + "not evaluated"
                : window + "\(counted(flag.evaluations, "evaluation")), last evaluated "
                    + last(flag, days: usage.days, now: now)
        ]
        if !flag.days.isEmpty {
            var table = Table(header: ["DAY", "EVALUATIONS", "VARIANTS"])
            for day in flag.days.sorted(by: { $0.day > $1.day }) {
                table.append([day.day, String(day.evaluations), variants(day.variants.map { ($0.name, $0.count) })])
            }
            lines += table.lines(fitting: Help.width)
        }
        lines += sdks(usage)
        return lines
    }

    /// `2026-12-02 10:00 UTC (2 hours ago)`, or `never in these 30 days`.
    static func last(_ flag: UsageReport.FlagUsage, days: Int, now: Date) -> String {
        guard let date = flag.lastEvaluated else { return "never in these \(counted(days, "day"))" }
        return "\(Shown.date(date)) (\(Shown.relative(date, now: now)))"
    }

    /// `on 1000, off 234`; `(none) 12` for a flag without variants; `-` when never served.
    static func variants(_ counts: [(name: String, count: Int)]) -> String {
        counts.isEmpty
            ? "-" : counts.map { "\($0.name.isEmpty ? "(none)" : $0.name) \($0.count)" }.joined(separator: ", ")
    }

    /// A blank line and `SDK INSTANCES`, the active instances by SDK version; nothing without any.
    static func sdks(_ usage: UsageReport) -> [String] {
        guard !usage.sdks.isEmpty else { return ["", "no active client instance"] }
        var table = Table(header: ["SDK", "INSTANCES"])
        let sorted = SDKCount.ordered(usage.sdks)
        for sdk in sorted { table.append(["\(sdk.sdk.name) \(sdk.sdk.version)", String(sdk.instances)]) }
        return [""] + table.lines(fitting: Help.width)
    }
}
