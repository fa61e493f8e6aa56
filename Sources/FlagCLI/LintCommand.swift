import FlagCore

/// `flagctl lint SET.json`: validates a flag-set file offline, as the server validates a write (SPEC §3).
///
/// Prints every problem as `PATH: MESSAGE` and a summary line, or with `--json` one object
/// `{"file", "ok", "problems": [{"path", "message"}]}`. Exit 0 when clean, 1 when there is any problem
/// (malformed JSON included, reported as `FILE:LINE:COLUMN: message`).
public struct LintCommand: Command {
    /// `lint SET.json`
    public static let configuration = CommandConfiguration(
        name: "lint", abstract: "Validate a flag-set file offline; every problem with its JSON path, exit 1 if any.",
        synopsis: "SET.json [--json]",
        positionals: [Positional("SET.json", help: "the flag-set file to check")],
        example: "flagctl lint config/flagsets/demo.json")

    /// The file to check.
    public let path: String

    /// Takes the file's path.
    public init(parsing arguments: ParsedArguments) throws(CLIError) {
        guard let path = arguments.positional(0), !path.isEmpty else {
            throw arguments.usageError("missing SET.json")
        }
        self.path = path
    }

    /// Checks the file and prints the report; exit 1 when there is any problem.
    public func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let findings: [Finding]
        let summary: String
        switch try FlagSetFile.load(path) {
        case .failure(let error):
            findings = [Finding(path: "", message: error.message, position: (error.line, error.column))]
            summary = "\(path): 1 problem (not a flag-set document)"
        case .success(let file):
            findings = file.compiled.problems.map { Finding(path: $0.path, message: $0.message, position: nil) }
            summary = self.summary(file)
        }
        if context.globals.json {
            context.console.print(report(findings))
        } else {
            for finding in findings {
                if let (line, column) = finding.position {
                    context.console.print("\(path):\(line):\(column): \(finding.message)")
                } else {
                    context.console.print(Problem(path: finding.path, message: finding.message).description)
                }
            }
            context.console.print(summary)
        }
        return findings.isEmpty ? .success : .failure
    }

    /// A problem of the set, or the JSON error that kept it from being read (with its line and column).
    private struct Finding {
        let path: String
        let message: String
        let position: (line: Int, column: Int)?
    }

    /// `demo.json: ok, 7 flags, 4 cohorts, version 1` or `demo.json: 3 problems`.
    private func summary(_ file: FlagSetFile) -> String {
        let problems = file.compiled.problems
        guard problems.isEmpty else { return "\(path): \(counted(problems.count, "problem"))" }
        let set = file.compiled.flagSet
        return "\(path): ok, \(counted(set.flags.count, "flag")), \(counted(set.cohorts.count, "cohort")), "
            + "version \(set.version)"
    }

    /// `{"file":…,"ok":…,"problems":[{"path","message"}…]}`; a JSON error adds `"line"` and `"column"`.
    private func report(_ findings: [Finding]) -> String {
        jsonLine { writer in
            writer.beginObject()
            writer.key("file")
            writer.string(path)
            writer.key("ok")
            writer.bool(findings.isEmpty)
            writer.key("problems")
            writer.beginArray()
            for finding in findings {
                writer.beginObject()
                writer.key("path")
                writer.string(finding.path)
                writer.key("message")
                writer.string(finding.message)
                if let (line, column) = finding.position {
                    writer.key("line")
                    writer.int(line)
                    writer.key("column")
                    writer.int(column)
                }
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
        }
    }
}
