import FlagAPI
import FlagCore
import Foundation

/// `flagctl clients`: the client instances that reported to a set in the last 10 minutes, by the version they
/// applied and by what they can evaluate.
package struct ClientsCommand: Command {
    /// `clients`
    package static let configuration = CommandConfiguration(
        name: "clients", abstract: "Show a set's clients: by applied version, by SDK and what it evaluates.",
        synopsis: "", example: "flagctl --set ios-prod clients")

    /// Takes no arguments.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {}

    /// Tables for people, or the server's `{"set","instances":[…],"silent"}`.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        // Read even for --json: an answer that is not the contract's shape fails here, not in a script.
        let (wire, answer) = try client.send(API.clients, PathParameters(set: set), ClientsQuery())
        let clients = try ClientsReport(wire, route: API.clients.info.label)
        return context.show(answer) { ClientsText.lines(clients) }
    }
}

/// How `clients` reads for people.
enum ClientsText {
    /// A summary line, a table by version, a table by SDK and capabilities, and the connections that do not report.
    static func lines(_ answer: ClientsReport) -> [String] {
        let instances = answer.instances
        var lines: [String] = []
        if instances.isEmpty {
            lines.append("no instance of \(answer.set) reported in the last 10 minutes")
        } else {
            lines.append("\(counted(instances.count, "instance")) of \(answer.set) reported in the last 10 minutes")
            lines.append("")
            var byVersion = Table(header: ["VERSION", "INSTANCES", "SHARE"])
            for (version, count) in tally(instances.map(\.version)).sorted(by: { ($0.0 ?? 0) > ($1.0 ?? 0) }) {
                byVersion.append([
                    version.map { "v\($0)" } ?? "none yet", String(count),
                    PropagationText.share(count, of: instances.count),
                ])
            }
            lines += byVersion.lines(fitting: Help.width)
            lines.append("")
            var bySDK = Table(header: ["SDK", "INSTANCES", "SCHEMA", "OPERATORS"])
            let groups = tally(instances.map { Capable(sdk: $0.sdk, capabilities: $0.capabilities) })
            for (group, count) in groups.sorted(by: { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0.sortKey < $1.0.sortKey }) {
                bySDK.append([
                    "\(group.sdk.name) \(group.sdk.version)", String(count),
                    group.capabilities.map { String($0.schema) } ?? "?", operators(group.capabilities),
                ])
            }
            lines += bySDK.lines(fitting: Help.width)
        }
        if answer.silent > 0 { lines.append(PropagationText.silent(answer.silent)) }
        return lines
    }

    /// An SDK version with what it declared.
    private struct Capable: Hashable {
        let sdk: TelemetryReport.Software
        let capabilities: ClientCapabilities?
        var sortKey: String { "\(sdk.name) \(sdk.version)" }
    }

    /// `all 22`, `lacks semver_lt, semver_gte`, or, when it lacks most, `only eq, in (2 of 22)`: measured against
    /// the operators this flagctl knows, so that the shorter list is shown.
    static func operators(_ capabilities: ClientCapabilities?) -> String {
        guard let capabilities else { return "?" }
        let known = Operator.known.map(\.name)
        let (present, missing) = (
            known.filter { capabilities.operators.contains($0) }, known.filter { !capabilities.operators.contains($0) }
        )
        if missing.isEmpty { return "all \(known.count)" }
        if missing.count <= present.count { return "lacks " + missing.joined(separator: ", ") }
        if present.isEmpty { return "none of \(known.count)" }
        return "only \(present.joined(separator: ", ")) (\(present.count) of \(known.count))"
    }

    /// How often each value occurs.
    private static func tally<Value: Hashable>(_ values: [Value]) -> [(Value, Int)] {
        var counts: [Value: Int] = [:]
        for value in values { counts[value, default: 0] += 1 }
        return counts.map { ($0.key, $0.value) }
    }
}
