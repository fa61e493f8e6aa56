import FlagCore
import Foundation

/// `flagctl stale [--unused-days N] [--fail]`: flag debt. Expired flags (past `expiresAt`, serving their kept value)
/// and overdue ones (expired more than 14 days ago and still not archived: the code path should be gone by now);
/// with `--unused-days N` also flags no client evaluated in the last N days.
public struct StaleCommand: Command {
    /// `stale [--unused-days N] [--fail]`
    public static let configuration = CommandConfiguration(
        name: "stale", abstract: "List expired and overdue flags; --fail exits 1 if there are any (a CI gate).",
        synopsis: "[--unused-days N] [--fail]",
        options: [
            .flag("fail", help: "exit 1 when any flag is stale"),
            .value(
                "unused-days", "N",
                help: "also list flags not evaluated for N days, 1–\(UsageCommand.maximumDays) "
                    + "(and count them for --fail)"),
        ],
        example: "flagctl --set ios-prod stale --unused-days 30 --fail")

    /// How long after expiry an unarchived flag counts as overdue.
    static let overdueSeconds: Double = 14 * 86_400

    private let fail: Bool
    private let unusedDays: Int?

    /// Takes `--fail` and `--unused-days`.
    public init(parsing arguments: ParsedArguments) throws(CLIError) {
        fail = arguments.flag("fail")
        unusedDays = try arguments.value("unused-days").map { text throws(CLIError) in
            try UsageCommand.days(text, option: "unused-days", arguments)
        }
    }

    /// One stale flag: why, and what the tables show of it.
    struct Entry {
        let key: String
        let flag: JSONValue
        /// `expired` or `overdue` when past its expiry.
        let expiry: String?
        let expires: Date?
        /// Whether no client evaluated it for `--unused-days` (always false without it).
        let unused: Bool
        let lastEvaluated: Date?

        /// `expired`, `overdue`, `unused`, `expired, unused`.
        var status: String { [expiry, unused ? "unused" : nil].compactMap { $0 }.joined(separator: ", ") }
    }

    /// `KEY  STATUS  EXPIRED  OWNER  SERVES` (and `LAST EVALUATED` with `--unused-days`), or
    /// `{"set","version","stale":[{"key","status","expiresAt","owner"}]}` (with `"unusedDays"` and each entry's
    /// `"lastEvaluated"` with `--unused-days`).
    public func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let set = try client.requireSet(for: Self.configuration)
        let answer = try client.send("GET", client.setPath(set) + "/flags")
        let now = context.now()
        let flags = answer.json["flags"].object ?? [:]
        var lastEvaluated: [String: Date?] = [:]
        if let unusedDays {
            let (_, usage) = try UsageCommand.fetch(client, set: set, key: nil, days: unusedDays)
            for flag in usage.flags { lastEvaluated[flag.key] = flag.lastEvaluated }
        }
        let stale = Self.entries(flags, lastEvaluated: lastEvaluated, unusedDays: unusedDays, now: now)
        if context.globals.json {
            context.console.print(json(set: set, version: answer.json["version"], stale))
        } else if stale.isEmpty {
            context.console.print("no stale flags in \(set)")
        } else {
            var header = ["KEY", "STATUS", "EXPIRED", "OWNER", "SERVES"]
            if unusedDays != nil { header.append("LAST EVALUATED") }
            var table = Table(header: header)
            for entry in stale {
                let expired = entry.expiry == nil ? nil : entry.expires.map { Shown.relative($0, now: now) }
                var row = [
                    entry.key, entry.status, expired ?? "-", entry.flag["owner"].string ?? "-",
                    entry.flag["expiredValue"] == .null ? "-" : entry.flag["expiredValue"].compactText,
                ]
                if unusedDays != nil { row.append(entry.lastEvaluated.map { Shown.relative($0, now: now) } ?? "never") }
                table.append(row)
            }
            context.printTable(table)
            context.console.print("clean up: remove the flag from code, then 'flagctl archive KEY'")
        }
        return fail && !stale.isEmpty ? .failure : .success
    }

    /// The stale flags in key order: unarchived, and expired, or (with `unusedDays`) not evaluated since
    /// `now - unusedDays` (never, or only before). A flag the usage answer does not list counts as never evaluated.
    static func entries(
        _ flags: [String: JSONValue], lastEvaluated: [String: Date?], unusedDays: Int?, now: Date
    ) -> [Entry] {
        var stale: [Entry] = []
        for key in flags.keys.sorted() {
            guard let flag = flags[key], flag["archived"].bool != true else { continue }
            var expiry: String?
            let expires = flag["expiresAt"].date
            if let expires, expires <= now {
                expiry = now.timeIntervalSince(expires) > overdueSeconds ? "overdue" : "expired"
            }
            var unused = false
            let last = lastEvaluated[key] ?? nil
            if let unusedDays {
                let since = now.addingTimeInterval(-Double(unusedDays) * 86_400)
                unused = last.map { $0 < since } ?? true
            }
            guard expiry != nil || unused else { continue }
            stale.append(
                Entry(key: key, flag: flag, expiry: expiry, expires: expires, unused: unused, lastEvaluated: last))
        }
        return stale
    }

    private func json(set: String, version: JSONValue, _ stale: [Entry]) -> String {
        let entries = stale.map { entry -> JSONValue in
            var members: [String: JSONValue] = ["key": .string(entry.key), "status": .string(entry.status)]
            if let expires = entry.expires { members["expiresAt"] = .string(ISO8601.format(expires)) }
            if let owner = entry.flag["owner"].string { members["owner"] = .string(owner) }
            if unusedDays != nil {
                members["lastEvaluated"] = entry.lastEvaluated.map { .string(ISO8601.format($0)) } ?? .null
            }
            return .object(members)
        }
        var document: [String: JSONValue] = ["set": .string(set), "version": version, "stale": .array(entries)]
        if let unusedDays { document["unusedDays"] = .int(Int64(unusedDays)) }
        return JSONValue.object(document).compactText
    }
}
