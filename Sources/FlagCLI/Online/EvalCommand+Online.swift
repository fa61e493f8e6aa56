import FlagAPI
import FlagCore
import Foundation

extension EvalCommand {
    /// Asks the server's evaluate route for each unit; prints as the offline form does.
    func runOnline(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        var results: [(EvaluationAnswer, AdminClient.Answer)] = []
        for unit in try unitIDs() {
            let request = EvaluateRequest(key: key, unitID: unit, attributes: attributes, at: at)
            let (evaluation, answer) = try client.send(API.evaluate, PathParameters(set: set), request)
            if evaluation.errorCode == ErrorCode.flagNotFound.rawValue {
                throw .failure("unknown flag '\(key)' in set '\(set)' (see 'flagctl list')")
            }
            results.append((evaluation, answer))
        }
        if context.globals.json {
            for (_, answer) in results {
                var members = answer.json.object ?? [:]
                if !explain { members["steps"] = nil }
                context.console.print(JSONValue.object(members).compactText)
            }
            return .success
        }
        let showsErrors = results.contains { $0.0.errorCode != nil }
        var table = Table(header: ["UNIT", "VALUE", "REASON", "VARIANT"] + (showsErrors ? ["ERROR"] : []))
        for (result, _) in results {
            var row = [
                result.unit, try AdminClient.parsed(result.value, "value").compactText, result.reason,
                result.variant ?? "-",
            ]
            if showsErrors { row.append(result.errorCode ?? "-") }
            table.append(row)
        }
        let widths = table.columnWidths(fitting: Help.width)
        context.console.print(table.line(for: table.header, widths: widths))
        for (row, (result, _)) in zip(table.rows, results) {
            context.console.print(table.line(for: row, widths: widths))
            guard explain else { continue }
            for step in result.steps { context.console.print("    - \(step)") }
        }
        return .success
    }
}
