import FlagCore
import Foundation

/// `flagctl stale [--fail]`: flag debt. Expired flags (past `expiresAt`, serving their kept value) and overdue
/// ones (expired more than 14 days ago and still not archived: the code path should be gone by now).
public struct StaleCommand: Command {
    /// `stale [--fail]`
    public static let configuration = CommandConfiguration(
        name: "stale", abstract: "List expired and overdue flags; --fail exits 1 if there are any (a CI gate).",
        synopsis: "[--fail]", options: [.flag("fail", help: "exit 1 when any flag is stale")],
        example: "flagctl --set ios-prod stale --fail")

    /// How long after expiry an unarchived flag counts as overdue.
    static let overdueSeconds: Double = 14 * 86_400

    private let fail: Bool

    /// Takes `--fail`.
    public init(parsing arguments: ParsedArguments) throws(CLIError) {
        fail = arguments.flag("fail")
    }

    /// `KEY  STATUS  EXPIRED  OWNER  SERVES`, or `{"set","version","stale":[{"key","status","expiresAt","owner"}]}`.
    public func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let set = try client.requireSet(for: Self.configuration)
        let answer = try client.send("GET", client.setPath(set) + "/flags")
        let now = context.now()
        let flags = answer.json["flags"].object ?? [:]
        var stale: [(key: String, status: String, flag: JSONValue, expires: Date)] = []
        for key in flags.keys.sorted() {
            guard let flag = flags[key], flag["archived"].bool != true, let expires = flag["expiresAt"].date,
                expires <= now
            else { continue }
            let status = now.timeIntervalSince(expires) > Self.overdueSeconds ? "overdue" : "expired"
            stale.append((key, status, flag, expires))
        }
        if context.globals.json {
            let entries = stale.map { entry -> JSONValue in
                var members: [String: JSONValue] = [
                    "key": .string(entry.key), "status": .string(entry.status),
                    "expiresAt": .string(ISO8601.format(entry.expires)),
                ]
                if let owner = entry.flag["owner"].string { members["owner"] = .string(owner) }
                return .object(members)
            }
            let document: JSONValue = .object([
                "set": .string(set), "version": answer.json["version"], "stale": .array(entries),
            ])
            context.console.print(document.compactText)
        } else if stale.isEmpty {
            context.console.print("no stale flags in \(set)")
        } else {
            var table = Table(header: ["KEY", "STATUS", "EXPIRED", "OWNER", "SERVES"])
            for entry in stale {
                table.append([
                    entry.key, entry.status, Shown.relative(entry.expires, now: now), entry.flag["owner"].string ?? "-",
                    entry.flag["expiredValue"] == .null ? "-" : entry.flag["expiredValue"].compactText,
                ])
            }
            context.printTable(table)
            context.console.print("clean up: remove the flag from code, then 'flagctl archive KEY'")
        }
        return fail && !stale.isEmpty ? .failure : .success
    }
}
