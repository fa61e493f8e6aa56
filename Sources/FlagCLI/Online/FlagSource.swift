import FlagCore
import Foundation

/// Where `generate swift` and `refs` read the set: a flag-set file (`--file`, offline) or the server (`--set`,
/// with `--server` and `--token`), at its current version or at `--version N`.
///
/// With `--file`, `--version N` is a check: the file must hold version N. So a build step that exports version N and
/// generates from the export, or generates with `--version N` from the server, gets the same file either way.
struct FlagSource {
    /// `--file SET.json` and `--version N`.
    static let options: [Option] = [
        .value(
            "file", "SET.json", help: "read the set from this flag-set file (offline) instead of the server's --set"),
        .value(
            "version", "N",
            help: "use version N of the set (from the server); with --file, check that the file holds version N"),
    ]

    /// The file to read, if any.
    let file: String?
    /// The version asked for, if any.
    let version: Int?

    /// Reads `--file` and `--version`.
    init(_ arguments: ParsedArguments) throws(CLIError) {
        file = arguments.value("file")
        version = try Self.version(arguments)
    }

    /// `--version N`: a version number from 1.
    static func version(_ arguments: ParsedArguments) throws(CLIError) -> Int? {
        guard let text = arguments.value("version") else { return nil }
        guard let version = Int(text), version >= 1 else {
            throw arguments.usageError("--version needs a version number from 1, not '\(text)'")
        }
        return version
    }

    /// `--file demo.json` or `--set demo`, for a message telling how to run the command again.
    func arguments(_ context: CommandContext) -> String {
        var words = file.map { ["--file", $0] } ?? ["--set", context.globals.set ?? "NAME"]
        if let version { words += ["--version", String(version)] }
        return words.joined(separator: " ")
    }

    /// The set, compiled; a set with problems is refused, naming the first.
    func load(_ context: CommandContext, for configuration: CommandConfiguration) throws(CLIError) -> CompiledFlagSet {
        let compiled: CompiledFlagSet
        let origin: String
        if let file {
            switch try FlagSetFile.load(file) {
            case .failure(let error):
                throw .failure("\(FlagSetFile.describe(error, in: file)) (not a flag-set document)")
            case .success(let loaded):
                compiled = loaded.compiled
            }
            origin = file
            if let version, compiled.version != version {
                throw .failure(
                    "\(file) holds version \(compiled.version) of set \(compiled.name), not version \(version) "
                        + "(--version); export that version with 'flagctl export --version \(version) FILE'")
            }
        } else {
            let client = try AdminClient(context, for: configuration)
            let set = try client.requireSet(for: configuration)
            let (answer, route) = try client.document(of: set, version: version)
            do {
                compiled = CompiledFlagSet(try FlagSet.decode(answer.body))
            } catch {
                throw .failure("\(client.server) answered \(route) with something that is not a flag set: \(error)")
            }
            origin = "set \(set) on \(client.server)"
        }
        if let problem = compiled.problems.first {
            let more = compiled.problems.count > 1 ? " and \(compiled.problems.count - 1) more" : ""
            throw .failure("\(origin) has problems (\(problem)\(more)); 'flagctl lint' lists them")
        }
        return compiled
    }
}
