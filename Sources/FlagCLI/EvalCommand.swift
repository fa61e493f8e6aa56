import FlagCore
import Foundation

/// `flagctl eval KEY --file SET.json (--unit ID | --units-file FILE)`: evaluates a flag offline as a client would.
///
/// The flag is asked for with its own type, and its own default stands in for the compiled-in default a client
/// would pass. Unlike a client, an unknown key is an error: it is almost always a typo. Without `--file` the
/// server evaluates (its evaluate route), with the same output.
package struct EvalCommand: Command {
    /// `eval KEY --file SET.json (--unit ID | --units-file FILE) …`
    package static let configuration = CommandConfiguration(
        name: "eval", abstract: "Evaluate a flag as clients do: value, reason, variant (offline: --file).",
        synopsis:
            "KEY [--file SET.json] (--unit ID | --units-file FILE) [--attr NAME=VALUE]... [--at TIME] [--explain]",
        positionals: [Positional("KEY", help: "the flag's key")],
        options: [
            .value("file", "SET.json", help: "evaluate against this flag-set file, offline (no server)"),
            .value("unit", "ID", help: "the unit (user, device, account id) to evaluate for"),
            .value("units-file", "FILE", help: "one unit id per line (blank lines and # comments skipped)"),
            .repeated("attr", "NAME=VALUE", help: "an attribute of the context, e.g. country=DE; repeatable"),
            .value("at", "TIME", help: "evaluate at this ISO-8601 time, e.g. 2026-11-29T12:00:00Z (default: now)"),
            .flag("explain", help: "also print each step of the evaluation"),
        ],
        example: "flagctl eval new-checkout --file config/flagsets/demo.json --unit u-1 --attr country=DE")

    /// Who to evaluate for.
    package enum Units: Sendable, Equatable {
        /// One unit id (`--unit`).
        case one(String)
        /// A file of unit ids (`--units-file`).
        case file(String)
    }

    /// The flag's key.
    package let key: String
    /// The flag-set file; `nil` asks for the online form.
    package let file: String?
    /// Who to evaluate for.
    package let units: Units
    /// The context's attributes.
    package let attributes: [String: String]
    /// The time to evaluate at; `nil` is now.
    package let at: Date?
    /// Whether to print the steps.
    package let explain: Bool

    /// Checks the key, exactly one of `--unit`/`--units-file`, each `--attr NAME=VALUE` and `--at`.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        guard let key = arguments.positional(0), !key.isEmpty else { throw arguments.usageError("missing KEY") }
        self.key = key
        if let file = arguments.value("file"), file.isEmpty { throw arguments.usageError("--file needs a path") }
        file = arguments.value("file")
        switch (arguments.value("unit"), arguments.value("units-file")) {
        case (nil, nil): throw arguments.usageError("missing --unit ID or --units-file FILE")
        case (.some, .some): throw arguments.usageError("--unit and --units-file cannot be used together")
        case (let unit?, nil):
            guard !unit.isEmpty else { throw arguments.usageError("--unit needs a unit id, not an empty string") }
            units = .one(unit)
        case (nil, let path?):
            guard !path.isEmpty else { throw arguments.usageError("--units-file needs a path") }
            units = .file(path)
        }
        attributes = try Self.attributes(arguments)
        if let text = arguments.value("at") {
            do {
                at = try ISO8601.date(from: text)
            } catch {
                throw arguments.usageError("--at '\(text)' is not an ISO-8601 time: \(error.message)")
            }
        } else {
            at = nil
        }
        explain = arguments.flag("explain")
    }

    /// `--attr NAME=VALUE`, each split at its first `=`.
    private static func attributes(_ arguments: ParsedArguments) throws(CLIError) -> [String: String] {
        var attributes: [String: String] = [:]
        for pair in arguments.values("attr") {
            guard let equals = pair.firstIndex(of: "=") else {
                throw arguments.usageError("--attr '\(pair)' needs the form NAME=VALUE, e.g. country=DE")
            }
            let name = String(pair[..<equals])
            guard !name.isEmpty else { throw arguments.usageError("--attr '\(pair)' has no attribute name") }
            guard name != "unitID" else {
                throw arguments.usageError("the unit id is given with --unit, not --attr unitID=…")
            }
            guard attributes[name] == nil else { throw arguments.usageError("--attr \(name) is given twice") }
            attributes[name] = String(pair[pair.index(after: equals)...])
        }
        return attributes
    }

    /// Evaluates for every unit and prints a table, or one JSON object per unit with `--json`.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        guard let file else { return try runOnline(in: context) }
        let setFile: FlagSetFile
        switch try FlagSetFile.load(file) {
        case .failure(let error): throw .failure(FlagSetFile.describe(error, in: file))
        case .success(let loaded): setFile = loaded
        }
        let keys = setFile.keys
        guard keys.contains(key) else { throw .failure(unknownKey(keys, in: file)) }
        let unitIDs = try self.unitIDs()
        let problems = setFile.compiled.problems.count
        if problems > 0 {
            context.console.printError(
                "warning: \(file) has \(counted(problems, "problem")); the flags they touch evaluate with "
                    + "\(ErrorCode.parseError) (run 'flagctl lint \(file)')")
        }
        let results = evaluate(setFile.compiled, for: unitIDs, at: at ?? context.now())
        if context.globals.json {
            for result in results { context.console.print(result.jsonLine(key: key)) }
        } else {
            for line in Evaluation.table(results) { context.console.print(line) }
        }
        return .success
    }

    private func unknownKey(_ keys: [String], in file: String) -> String {
        guard !keys.isEmpty else { return "unknown flag '\(key)' in \(file) (the file has no flags)" }
        let shown = keys.prefix(12).joined(separator: ", ")
        return "unknown flag '\(key)' in \(file) (known: \(shown)\(keys.count > 12 ? ", …" : ""))"
    }

    func unitIDs() throws(CLIError) -> [String] {
        switch units {
        case .one(let unit): return [unit]
        case .file(let path):
            let ids = FileInput.unitIDs(try FileInput.contents(of: path))
            guard !ids.isEmpty else { throw .failure("no unit ids in '\(path)': write one id per line") }
            return ids
        }
    }

    /// Evaluates with the flag's own type and default. An unreadable flag is asked for as `json`, and a default
    /// that is not of the flag's type is not passed off as one: both fall back to `null` (with `PARSE_ERROR`).
    private func evaluate(_ compiled: CompiledFlagSet, for unitIDs: [String], at now: Date) -> [Evaluation] {
        let flag = compiled.flagSet.flags[key]
        let type = flag?.type ?? .json
        let fallback = flag.flatMap { $0.defaultValue.conforms(to: type) ? $0.defaultValue : nil } ?? .null
        return unitIDs.map { unit in
            let context = EvaluationContext(unitID: unit, attributes: attributes)
            if explain {
                let (detail, steps) = compiled.explain(key, type: type, default: fallback, context: context, at: now)
                return Evaluation(unit: unit, detail: detail, steps: steps)
            }
            let detail = compiled.evaluate(key, type: type, default: fallback, context: context, at: now)
            return Evaluation(unit: unit, detail: detail, steps: nil)
        }
    }
}
