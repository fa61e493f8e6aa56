import FlagAPI
import FlagCore
import Foundation

/// `flagctl stale [--unused-days N] [--refs PATH] [--fail]`: flag debt. Expired flags (past `expiresAt`, serving
/// their kept value) and overdue ones (expired more than 14 days ago and still not archived: the code path should be
/// gone by now); with `--unused-days N` also flags no client evaluated in the last N days, and with `--refs PATH`
/// flags no Swift code under PATH references (`CodeReferences`), with each stale flag's count of references.
package struct StaleCommand: Command {
    /// `stale [--unused-days N] [--refs PATH] [--fail]`
    package static let configuration = CommandConfiguration(
        name: "stale", abstract: "List expired and overdue flags; --fail exits 1 if there are any (CI).",
        synopsis: "[--unused-days N] [--refs PATH] [--fail]",
        options: [
            .flag("fail", help: "exit 1 when any flag is stale"),
            .value(
                "unused-days", "N",
                help: "also list flags not evaluated for N days, 1–\(UsageCommand.maximumDays) "
                    + "(and count them for --fail)"),
            .value(
                "refs", "PATH",
                help: "also list flags no Swift code under PATH references (and count them for --fail); see "
                    + "'flagctl refs'"),
        ],
        example: "flagctl --set ios-prod stale --unused-days 30 --fail")

    /// How long after expiry an unarchived flag counts as overdue.
    static let overdueSeconds: Double = 14 * 86_400

    private let fail: Bool
    private let unusedDays: Int?
    private let refs: String?

    /// Takes `--fail` and `--unused-days`.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        fail = arguments.flag("fail")
        unusedDays = try arguments.value("unused-days").map { text throws(CLIError) in
            try UsageCommand.days(text, option: "unused-days", arguments)
        }
        refs = arguments.value("refs")
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
        /// Where code references it (`--refs`); `nil` without `--refs`.
        let references: [CodeReferences.Location]?
        /// Whether no code references it (`--refs`) and no other flag requires it.
        let unreferenced: Bool

        /// `expired`, `overdue`, `unused`, `unreferenced`, `expired, unused`.
        var status: String {
            [expiry, unused ? "unused" : nil, unreferenced ? "unreferenced" : nil].compactMap { $0 }
                .joined(separator: ", ")
        }
    }

    /// `KEY  STATUS  EXPIRED  OWNER  SERVES` (and `LAST EVALUATED` with `--unused-days`, `CODE` with `--refs`), or
    /// `{"set","version","stale":[{"key","status","expiresAt","owner"}]}` (with `"unusedDays"` and each entry's
    /// `"lastEvaluated"` with `--unused-days`, and each entry's `"references":["path:line"]` with `--refs`).
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (list, _) = try client.send(API.listFlags, PathParameters(set: set), FlagListQuery())
        let now = context.now()
        let flags = try AdminClient.parsed(list.flags, each: "flag")
        var lastEvaluated: [String: Date?] = [:]
        if let unusedDays {
            let (_, usage) = try UsageCommand.fetch(client, set: set, key: nil, days: unusedDays)
            for flag in usage.flags { lastEvaluated[flag.key] = flag.lastEvaluated }
        }
        let references = try refs.map { path throws(CLIError) in try CodeReferences.scan(path).references }
        let stale = Self.entries(
            flags, lastEvaluated: lastEvaluated, unusedDays: unusedDays, references: references, now: now)
        if context.globals.json {
            context.console.print(json(set: set, version: .int(Int64(list.version)), stale))
        } else if stale.isEmpty {
            context.console.print("no stale flags in \(set)")
        } else {
            var header = ["KEY", "STATUS", "EXPIRED", "OWNER", "SERVES"]
            if unusedDays != nil { header.append("LAST EVALUATED") }
            if refs != nil { header.append("CODE") }
            var table = Table(header: header)
            for entry in stale {
                let expired = entry.expiry == nil ? nil : entry.expires.map { Shown.relative($0, now: now) }
                var row = [
                    entry.key, entry.status, expired ?? "-", entry.flag["owner"].string ?? "-",
                    entry.flag["expiredValue"] == .null ? "-" : entry.flag["expiredValue"].compactText,
                ]
                if unusedDays != nil { row.append(entry.lastEvaluated.map { Shown.relative($0, now: now) } ?? "never") }
                if let count = entry.references?.count { row.append(count == 0 ? "none" : counted(count, "reference")) }
                table.append(row)
            }
            context.printTable(table)
            context.console.print("clean up: remove the flag from code, then 'flagctl archive KEY'")
        }
        return fail && !stale.isEmpty ? .failure : .success
    }

    /// The stale flags in key order: unarchived, and expired, or (with `unusedDays`) not evaluated since
    /// `now - unusedDays` (never, or only before), or (with `references`) referenced nowhere in code. A flag the
    /// usage answer does not list counts as never evaluated; a flag another flag requires counts as used.
    static func entries(
        _ flags: [String: JSONValue], lastEvaluated: [String: Date?], unusedDays: Int?,
        references: [String: [CodeReferences.Location]]? = nil, now: Date
    ) -> [Entry] {
        var stale: [Entry] = []
        // A flag others require is in use, whatever code or clients say: they evaluate it.
        let required = Set(flags.values.flatMap(PrerequisiteText.requiredKeys))
        for key in flags.keys.sorted() {
            guard let flag = flags[key], flag["archived"].bool != true else { continue }
            var expiry: String?
            let expires = flag["expiresAt"].date
            if let expires, expires <= now {
                expiry = now.timeIntervalSince(expires) > overdueSeconds ? "overdue" : "expired"
            }
            var unused = false
            let last = lastEvaluated[key] ?? nil
            if let unusedDays, !required.contains(key) {
                let since = now.addingTimeInterval(-Double(unusedDays) * 86_400)
                unused = last.map { $0 < since } ?? true
            }
            let found = references.map { $0[key] ?? [] }
            let unreferenced = found?.isEmpty == true && !required.contains(key)
            guard expiry != nil || unused || unreferenced else { continue }
            stale.append(
                Entry(
                    key: key, flag: flag, expiry: expiry, expires: expires, unused: unused, lastEvaluated: last,
                    references: found, unreferenced: unreferenced))
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
            if let references = entry.references {
                members["references"] = .array(references.map { .string($0.description) })
            }
            return .object(members)
        }
        var document: [String: JSONValue] = ["set": .string(set), "version": version, "stale": .array(entries)]
        if let unusedDays { document["unusedDays"] = .int(Int64(unusedDays)) }
        return JSONValue.object(document).compactText
    }
}
