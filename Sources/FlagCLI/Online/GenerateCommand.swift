import FlagCore
import Foundation

/// `flagctl generate swift`: typed `FlagKey`s for every flag of a set (`SwiftFlagFile`), written to a file or
/// stdout, or with `--check FILE` the CI drift check (`Drift`): exit 1 with the differences when FILE is out of date.
///
/// Names that could not be given as is and flags left out are reported on stderr as warnings.
package struct GenerateCommand: Command {
    /// `generate swift`
    package static let configuration = CommandConfiguration(
        name: "generate swift",
        abstract: "Generate typed Swift FlagKeys from a set; --check FILE checks for drift.",
        synopsis:
            "(--file SET.json | --set NAME) [--version N] [--output FILE | --check FILE [--strict]] "
            + "[--access public|internal] [--namespace NAME]",
        options: FlagSource.options + [
            .value(
                "output", "FILE",
                help: "write the Swift file here (default: stdout); unchanged content is not rewritten"),
            .value(
                "check", "FILE",
                help: "write nothing; exit 1 with the differences when FILE is not what would be generated"),
            .flag("strict", help: "with --check, a new version alone or a changed doc comment is drift too"),
            .value("access", "LEVEL", help: "public (default) or internal"),
            .value(
                "namespace", "NAME",
                help: "declare the keys as static members of 'enum NAME' instead of extensions of FlagKey"),
        ],
        example: "flagctl generate swift --file flags/ios-prod.json --output Sources/App/Flags.swift")

    private let source: FlagSource
    private let output: String?
    private let check: String?
    private let strict: Bool
    private let options: SwiftFlagFile.Options

    /// Takes the source, the destination and the layout.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        source = try FlagSource(arguments)
        output = arguments.value("output")
        check = arguments.value("check")
        strict = arguments.flag("strict")
        if output != nil && check != nil {
            throw arguments.usageError("--output writes the file and --check only compares it; give one of them")
        }
        if strict && check == nil { throw arguments.usageError("--strict only applies to --check FILE") }
        var options = SwiftFlagFile.Options()
        if let access = arguments.value("access") {
            guard let level = SwiftFlagFile.Access(rawValue: access) else {
                throw arguments.usageError("--access is public or internal, not '\(access)'")
            }
            options.access = level
        }
        if let namespace = arguments.value("namespace") {
            guard Self.isTypeName(namespace) else {
                throw arguments.usageError(
                    "--namespace needs a Swift type name such as Flags (letters, digits and _, not a keyword), "
                        + "not '\(namespace)'")
            }
            options.namespace = namespace
        }
        self.options = options
    }

    /// Whether `name` can be declared as `enum name` without backticks.
    static func isTypeName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        let valid = name.unicodeScalars.allSatisfy(SwiftSource.isIdentifierScalar)
        return valid && !SwiftNames.keywords.contains(name) && !["Self", "Any", "Type", "Protocol"].contains(name)
    }

    /// Generates, then writes, prints or compares.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let set = try source.load(context, for: Self.configuration)
        let file = SwiftFlagFile(set, options: options, now: context.now())
        for warning in file.warnings { context.console.printError("warning: \(warning)") }
        let text = file.text
        if let check { return try self.check(check, against: file, text: text, context) }
        guard let output else {
            // Its own lines: SwiftFlagFile writes every value from the set as an escaped literal or comment text.
            context.console.printText(String(text.dropLast()))
            return .success
        }
        let existing = FileManager.default.fileExists(atPath: output) ? try FileInput.contents(of: output) : nil
        let unchanged = existing == Array(text.utf8)
        if !unchanged {
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw .failure("cannot write '\(output)': \(error.localizedDescription)")
            }
        }
        let summary =
            "\(unchanged ? "unchanged" : "wrote") \(output): \(counted(file.declarations.count, "flag")) from set "
            + "\(set.name), version \(set.version)"
        if context.globals.json {
            context.console.print(
                jsonLine { writer in
                    Self.begin(&writer, file: output, set: set.name, version: set.version)
                    writer.key("flags")
                    writer.int(file.declarations.count)
                    writer.key("changed")
                    writer.bool(!unchanged)
                    writer.endObject()
                })
        } else {
            context.console.print(summary)
        }
        return .success
    }

    /// Opens the object of a `--json` line with the members both outputs start with: `{"file","set","version"`.
    private static func begin(_ writer: inout JSONWriter, file: String, set: String, version: Int) {
        writer.beginObject()
        writer.key("file")
        writer.string(file)
        writer.key("set")
        writer.string(set)
        writer.key("version")
        writer.int(version)
    }

    /// `--check FILE`: exit 0 when FILE is current, else 1 with one line per difference and the command that
    /// updates it.
    private func check(_ path: String, against file: SwiftFlagFile, text: String, _ context: CommandContext)
        throws(CLIError) -> ExitCode
    {
        guard FileManager.default.fileExists(atPath: path) else {
            throw .failure("\(path) does not exist; generate it with '\(updateCommand(path, context))'")
        }
        let existing = String(decoding: try FileInput.contents(of: path), as: UTF8.self)
        let old = GeneratedSwiftFile(existing)
        let new = GeneratedSwiftFile(text)
        var changes = Drift.changes(from: old, to: new, strict: strict)
        if strict && changes.isEmpty && existing != text {
            changes.append(Drift(kind: .code, key: "", detail: "comments or blank lines differ"))
        }
        if context.globals.json {
            context.console.print(
                jsonLine { writer in
                    Self.begin(&writer, file: path, set: file.setName, version: file.version)
                    writer.key("fileVersion")
                    if let version = old.version { writer.int(version) } else { writer.null() }
                    writer.key("upToDate")
                    writer.bool(changes.isEmpty)
                    writer.key("changes")
                    writer.beginArray()
                    for change in changes {
                        writer.beginObject()
                        writer.key("kind")
                        writer.string(change.kind.rawValue)
                        if !change.key.isEmpty {
                            writer.key("key")
                            writer.string(change.key)
                        }
                        writer.key("detail")
                        writer.string(change.detail)
                        writer.endObject()
                    }
                    writer.endArray()
                    writer.endObject()
                })
            return changes.isEmpty ? .success : .failure
        }
        let generated = old.version.map { "version \($0)" } ?? "an unknown version"
        guard !changes.isEmpty else {
            let note = old.version == file.version ? "" : " (generated from \(generated); no change that matters)"
            context.console.print(
                "\(path) is up to date with set \(file.setName), version \(file.version)\(note)")
            return .success
        }
        context.console.print(
            "\(path) is out of date with set \(file.setName), version \(file.version) (generated from \(generated)):")
        for change in changes { context.console.print("  \(change.line)") }
        context.console.print("update it: \(updateCommand(path, context))")
        return .failure
    }

    /// The command line that writes `path` as this check expects it.
    private func updateCommand(_ path: String, _ context: CommandContext) -> String {
        var words = ["flagctl generate swift", source.arguments(context), "--output", path]
        if options.access != .public { words += ["--access", options.access.rawValue] }
        if let namespace = options.namespace { words += ["--namespace", namespace] }
        return words.joined(separator: " ")
    }
}
