import FlagCore
import Foundation

/// `flagctl lint SET.json`: validates a flag-set file offline, as the server validates a write (SPEC §3).
///
/// Prints every problem as `PATH: MESSAGE` and a summary line, or with `--json` one object
/// `{"file", "ok", "problems": [{"path", "message"}]}`. Exit 0 when clean, 1 when there is any problem
/// (malformed JSON included, reported as `FILE:LINE:COLUMN: message`).
///
/// With `--against SERVER` it also checks the file against the clients that report to the set there
/// (`CompatibilityCheck`): what the server's compatibility gate would refuse is a finding (exit 1), and what it would
/// let pass although some instances cannot evaluate it is a note; `--json` adds
/// `"clients": {"server","set","active","silent","findings":[…]}`.
package struct LintCommand: Command {
    /// `lint SET.json`
    package static let configuration = CommandConfiguration(
        name: "lint", abstract: "Validate a flag-set file offline: each problem with its JSON path; exit 1.",
        synopsis: "SET.json [--against SERVER] [--json]",
        positionals: [Positional("SET.json", help: "the flag-set file to check")],
        options: [
            .value(
                "against", "SERVER",
                help: "also check it against the clients reporting to the set on this server (its URL; the file's "
                    + "set, else --set; --token)")
        ],
        example: "flagctl lint config/flagsets/demo.json")

    /// The file to check.
    package let path: String
    /// The server whose clients to check against.
    let against: String?

    /// Takes the file's path and the server.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        guard let path = arguments.positional(0), !path.isEmpty else {
            throw arguments.usageError("missing SET.json")
        }
        self.path = path
        against = arguments.value("against")
        if let against {
            guard let url = URL(string: against), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
            else {
                throw arguments.usageError(
                    "--against needs the server's http:// or https:// URL, e.g. https://flags.example.com, "
                        + "not '\(against)'")
            }
        }
    }

    /// Checks the file (and against the server's clients) and prints the report; exit 1 when there is any problem
    /// or finding.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let findings: [Finding]
        let summary: String
        var loaded: FlagSetFile?
        switch try FlagSetFile.load(path) {
        case .failure(let error):
            findings = [Finding(path: "", message: error.message, position: (error.line, error.column))]
            summary = "\(path): 1 problem (not a flag-set document)"
        case .success(let file):
            findings = file.compiled.problems.map { Finding(path: $0.path, message: $0.message, position: nil) }
            summary = self.summary(file)
            loaded = file
        }
        // A file that is not a flag-set document has no flags to check against the clients.
        var clients: ClientFindings?
        if let against, let loaded { clients = try againstClients(loaded, server: against, context) }
        if context.globals.json {
            context.console.print(report(findings, clients: clients))
        } else {
            for finding in findings {
                if let (line, column) = finding.position {
                    context.console.print("\(path):\(line):\(column): \(finding.message)")
                } else {
                    context.console.print(Problem(path: finding.path, message: finding.message).description)
                }
            }
            for line in clients?.lines ?? [] { context.console.print(line) }
            context.console.print(summary)
            if let clients { context.console.print(clients.summary) }
        }
        return findings.isEmpty && clients?.refused != true ? .success : .failure
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

    /// `{"file":…,"ok":…,"problems":[{"path","message"}…]}`; a JSON error adds `"line"` and `"column"`, and
    /// `--against` adds `"clients"`.
    private func report(_ findings: [Finding], clients: ClientFindings?) -> String {
        jsonLine { writer in
            writer.beginObject()
            writer.key("file")
            writer.string(path)
            writer.key("ok")
            writer.bool(findings.isEmpty && clients?.refused != true)
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
            if let clients {
                writer.key("clients")
                writer.value(clients.json)
            }
            writer.endObject()
        }
    }
}
