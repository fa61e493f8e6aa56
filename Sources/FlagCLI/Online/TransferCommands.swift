import FlagAPI
import FlagCore
import Foundation

/// `flagctl export [FILE] [--version N]`: the current document, or version N, pretty and canonical (members
/// sorted), to a file or stdout. `--signed FILE` writes instead the exact bytes clients are served, and `FILE.sig`
/// with their signature. A build step exports the bootstrap and generates Swift (`generate swift --version N`) from
/// one version.
package struct ExportCommand: Command {
    /// `export [FILE] | --signed FILE`, with `[--version N]`
    package static let configuration = CommandConfiguration(
        name: "export", abstract: "Write the set's current document (or version N) as a file (or to stdout).",
        synopsis: "([FILE] | --signed FILE) [--version N]",
        positionals: [Positional("FILE", help: "where to write it (default: stdout)", isOptional: true)],
        options: [
            .value(
                "signed", "FILE",
                help: "write the exact signed bytes clients get (a bootstrap document) and FILE.sig, its signature"),
            .value("version", "N", help: "that version of the set instead of the current one"),
        ],
        example: "flagctl --set ios-prod export --signed Flags/bootstrap.json --version 42")

    private let file: String?
    private let signedFile: String?
    private let version: Int?

    /// Takes the file, or the signed file, and the version.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        file = arguments.positional(0)
        signedFile = arguments.value("signed")
        if file != nil && signedFile != nil {
            throw arguments.usageError("give FILE or --signed FILE, not both")
        }
        version = try FlagSource.version(arguments)
    }

    /// GETs the document and writes it.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        if let signedFile { return try exportSigned(set, to: signedFile, client, context) }
        let document = try client.document(of: set, version: version).0.json
        var writer = JSONWriter(pretty: true)
        writer.value(document)
        guard let file else {
            // Pretty JSON's line breaks are its own: JSON escapes those inside strings.
            context.console.printText(String(decoding: writer.bytes, as: UTF8.self))
            return .success
        }
        do {
            try Data(writer.bytes + [UInt8(ascii: "\n")]).write(to: URL(fileURLWithPath: file))
        } catch {
            throw .failure("cannot write '\(file)': \(error.localizedDescription)")
        }
        if !context.globals.json {
            let flags = document["flags"].object?.count ?? 0
            let cohorts = document["cohorts"].object?.count ?? 0
            context.console.print(
                "wrote \(set) version \(document["version"].compactText) to \(file) "
                    + "(\(counted(flags, "flag")), \(counted(cohorts, "cohort")))")
        }
        return .success
    }
}

extension ExportCommand {
    /// GETs the document as clients get it and writes its bytes untouched, and its signature to `FILE.sig`.
    private func exportSigned(
        _ set: String, to file: String, _ client: AdminClient, _ context: CommandContext
    ) throws(CLIError) -> ExitCode {
        // The client routes: what clients are served, with the signature header (`versions/{n}` for an old one).
        let (answer, _) = try client.document(of: set, version: version, asServed: true)
        let document = answer.json
        guard let signature = answer.header("Flagstaff-Signature") else {
            throw .failure(
                "set \(set) is not signed, so there is nothing to export --signed; "
                    + "flagctl --set \(set) signing-key rotate starts signing it")
        }
        do {
            try Data(answer.body).write(to: URL(fileURLWithPath: file))
            try Data(signature.utf8).write(to: URL(fileURLWithPath: file + ".sig"))
        } catch {
            throw .failure("cannot write '\(file)' and '\(file).sig': \(error.localizedDescription)")
        }
        if !context.globals.json {
            context.console.print(
                "wrote \(set) version \(document["version"].compactText) to \(file) (\(answer.body.count) bytes, "
                    + "as served) and its signature to \(file).sig")
        }
        return .success
    }
}

/// `flagctl import FILE [--dry-run]`: replaces the set's flags and cohorts with a file's, showing the diff first.
package struct ImportCommand: Command {
    /// `import FILE [--dry-run]`
    package static let configuration = CommandConfiguration(
        name: "import", abstract: "Replace the set's flags and cohorts with a file's; shows what changes.",
        synopsis: "FILE [--dry-run] [--reason S]", positionals: [Positional("FILE", help: "a flag-set document")],
        options: [.flag("dry-run", help: "only show what would change; apply nothing")] + Mutation.options,
        example: "flagctl --set ios-prod import ios-prod.json --dry-run")

    private let file: String
    private let dryRun: Bool
    private let mutation: Mutation

    /// Takes the file and `--dry-run`.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        file = arguments.positionals[0]
        dryRun = arguments.flag("dry-run")
        mutation = try Mutation(arguments)
        if dryRun && mutation.wait != nil {
            throw arguments.usageError("--dry-run writes nothing, so there is nothing to --wait for")
        }
    }

    /// Sends the document once: the server validates it and applies it (or, with `--dry-run`, only validates), and
    /// its answer lists every change, each item before and after, which is printed as the diff.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let bytes = try FileInput.contents(of: file)
        let document: JSONValue
        do {
            document = try JSONReader.parse(bytes)
        } catch {
            throw .failure("\(file) is not JSON: \(error)")
        }
        guard document.object != nil else { throw .failure("\(file) is not a flag-set document (not an object)") }
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let request = ImportRequest(
            document: RawJSON(document), dryRun: dryRun ? true : nil, reason: mutation.reason,
            allowIncompatible: mutation.forced)
        let (imported, answer) = try client.send(
            API.importSet, PathParameters(set: set), request, ifMatch: mutation.ifMatch, review: mutation.review)
        // A dry run writes nothing, and `--dry-run` refuses `--wait`: `changed` is read only after a write.
        let result = MutationResult(
            set: imported.set, version: imported.version, changed: imported.changed ?? false,
            warnings: imported.warnings ?? [], changeRequest: imported.changeRequest)
        return try mutation.finish(result, answer, set: set, client: client, context) { () throws(CLIError) in
            var lines = try Self.changes(imported.changes)
            if dryRun {
                lines.append(lines.isEmpty ? "no changes; nothing applied (--dry-run)" : "nothing applied (--dry-run)")
            } else {
                lines.append("imported \(file) into \(set) \(AdminClient.versionNote(result))")
            }
            return lines
        }
    }

    /// `+ flag x`, `- cohort z`, and `~ flag y` with a `    member: before → after` line per changed member, from
    /// the answer's `changes`.
    static func changes(_ changes: ItemChanges) throws(CLIError) -> [String] {
        func items(_ changes: [String: ItemChange]) -> [ItemDiff] {
            changes.keys.sorted().map { key in
                ItemDiff(key: key, before: changes[key]?.before, after: changes[key]?.after)
            }
        }
        return try DiffText.lines(flags: items(changes.flags), cohorts: items(changes.cohorts))
    }
}
