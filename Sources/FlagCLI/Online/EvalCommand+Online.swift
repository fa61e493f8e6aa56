import FlagCore
import Foundation

extension EvalCommand {
    /// Asks the server's evaluate route for each unit; prints as the offline form does.
    func runOnline(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let set = try client.requireSet(for: Self.configuration)
        var results: [JSONValue] = []
        for unit in try unitIDs() {
            var body: [String: JSONValue] = [
                "key": .string(key), "unitID": .string(unit),
                "attributes": .object(attributes.mapValues { .string($0) }),
            ]
            if let at { body["at"] = .string(ISO8601.format(at)) }
            let answer = try client.send("POST", client.setPath(set) + "/evaluate", body: .object(body))
            if answer.json["errorCode"].string == ErrorCode.flagNotFound.rawValue {
                throw .failure("unknown flag '\(key)' in set '\(set)' (see 'flagctl list')")
            }
            results.append(answer.json)
        }
        if context.globals.json {
            for result in results {
                var members = result.object ?? [:]
                if !explain { members["steps"] = nil }
                context.console.print(JSONValue.object(members).compactText)
            }
            return .success
        }
        let showsErrors = results.contains { $0["errorCode"] != .null }
        var table = Table(header: ["UNIT", "VALUE", "REASON", "VARIANT"] + (showsErrors ? ["ERROR"] : []))
        for result in results {
            var row = [
                result["unit"].string ?? "?", result["value"].compactText, result["reason"].string ?? "?",
                result["variant"].string ?? "-",
            ]
            if showsErrors { row.append(result["errorCode"].string ?? "-") }
            table.append(row)
        }
        let widths = table.columnWidths(fitting: Help.width)
        context.console.print(table.line(for: table.header, widths: widths))
        for (row, result) in zip(table.rows, results) {
            context.console.print(table.line(for: row, widths: widths))
            guard explain else { continue }
            for step in result["steps"].array ?? [] {
                context.console.print("    - \(step.string ?? step.compactText)")
            }
        }
        return .success
    }
}
