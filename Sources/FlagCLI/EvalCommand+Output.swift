import FlagCore

/// One unit's result of `eval`, and how it prints.
struct Evaluation {
    let unit: String
    let detail: EvaluationDetail<JSONValue>
    /// The steps, with `--explain`.
    let steps: [String]?

    /// `{"key","unit","value","reason","variant","errorCode","version"}` (absent fields omitted), plus `"steps"`
    /// with `--explain` (SPEC §5).
    func jsonLine(key: String) -> String {
        FlagCLI.jsonLine { writer in
            writer.beginObject()
            writer.key("key")
            writer.string(key)
            writer.key("unit")
            writer.string(unit)
            writer.key("value")
            writer.value(detail.value)
            writer.key("reason")
            writer.string(detail.reason.rawValue)
            if let variant = detail.variant {
                writer.key("variant")
                writer.string(variant)
            }
            if let errorCode = detail.errorCode {
                writer.key("errorCode")
                writer.string(errorCode.rawValue)
            }
            if let version = detail.version {
                writer.key("version")
                writer.int(version)
            }
            if let steps {
                writer.key("steps")
                writer.beginArray()
                for step in steps { writer.string(step) }
                writer.endArray()
            }
            writer.endObject()
        }
    }

    /// `UNIT  VALUE  REASON  VARIANT`, with an `ERROR` column when any result has an error code, and each
    /// result's steps indented under it with `--explain`.
    static func table(_ results: [Evaluation]) -> [String] {
        let showsErrors = results.contains { $0.detail.errorCode != nil }
        var table = Table(header: ["UNIT", "VALUE", "REASON", "VARIANT"] + (showsErrors ? ["ERROR"] : []))
        for result in results {
            let detail = result.detail
            var row = [result.unit, detail.value.compactText, detail.reason.rawValue, detail.variant ?? "-"]
            if showsErrors { row.append(detail.errorCode?.rawValue ?? "-") }
            table.append(row)
        }
        let widths = table.columnWidths(fitting: Help.width)
        var lines = [table.line(for: table.header, widths: widths)]
        for (row, result) in zip(table.rows, results) {
            lines.append(table.line(for: row, widths: widths))
            for step in result.steps ?? [] { lines.append("    - \(step)") }
        }
        return lines
    }
}
