import FlagCore

/// `flagctl refs [PATH]`: where a Swift source tree uses the set's flags (`CodeReferences`), which flags no code
/// uses, and which keys in code the set does not have.
///
/// Prints the unused flags, the unknown keys with their locations and every key's locations, or with `--json`
/// `{"unused":[KEY],"unknown":[{"key","locations":["path:line"]}],"references":{KEY:["path:line"]}}`, where
/// `references` holds every key found in code, known or not. Archived flags are never unused: their code is
/// supposed to be gone. `--fail` exits 1 when a flag is unused or a key unknown.
package struct RefsCommand: Command {
    /// `refs [PATH]`
    package static let configuration = CommandConfiguration(
        name: "refs",
        abstract: "Show where Swift code uses the set's flags; unused flags and unknown keys.",
        synopsis: "[PATH] (--file SET.json | --set NAME) [--version N] [--fail]",
        positionals: [
            Positional("PATH", help: "the Swift sources to scan, a directory or a file (default: .)", isOptional: true)
        ],
        options: FlagSource.options + [.flag("fail", help: "exit 1 when a flag is unused or a key in code is unknown")],
        example: "flagctl refs Sources --file flags/ios-prod.json --fail")

    private let path: String
    private let source: FlagSource
    private let fail: Bool

    /// Takes the path, the source and `--fail`.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        path = arguments.positional(0) ?? "."
        source = try FlagSource(arguments)
        fail = arguments.flag("fail")
    }

    /// What a scan found against a set.
    struct Findings {
        let unused: [String]
        let unknown: [String]
        let references: CodeReferences

        init(_ set: CompiledFlagSet, _ references: CodeReferences) {
            let known = set.readableFlags
            let keys = Set(known.map(\.key)).union(set.flagSet.unreadableFlags.keys)
            // A flag others require is used, through them.
            unused = known.filter {
                !$0.archived && references.references[$0.key] == nil && set.flags(requiring: $0.key).isEmpty
            }.map(\.key)
                .sorted(by: utf8Less)
            unknown = references.references.keys.filter { !keys.contains($0) }.sorted(by: utf8Less)
            self.references = references
        }

        var isClean: Bool { unused.isEmpty && unknown.isEmpty }
    }

    /// Scans and reports.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let set = try source.load(context, for: Self.configuration)
        let findings = Findings(set, try CodeReferences.scan(path))
        let references = findings.references.references
        if context.globals.json {
            let unknown = findings.unknown.map { key -> JSONValue in
                .object([
                    "key": .string(key),
                    "locations": .array((references[key] ?? []).map { .string($0.description) }),
                ])
            }
            let all = references.mapValues { JSONValue.array($0.map { .string($0.description) }) }
            context.console.print(
                JSONValue.object([
                    "unused": .array(findings.unused.map(JSONValue.string)), "unknown": .array(unknown),
                    "references": .object(all),
                ]).compactText)
        } else {
            print(findings, set: set, context)
        }
        return fail && !findings.isClean ? .failure : .success
    }

    private func print(_ findings: Findings, set: CompiledFlagSet, _ context: CommandContext) {
        let references = findings.references.references
        let console = context.console
        console.print(
            "\(path): \(counted(findings.references.fileCount, "Swift file")), \(counted(references.count, "key")) "
                + "used; set \(set.name), version \(set.version): \(findings.unused.count) unused, "
                + "\(findings.unknown.count) unknown")
        if !findings.unused.isEmpty {
            console.print("")
            console.print("unused (in the set, no code reads them):")
            for key in findings.unused { console.print("  \(key)") }
        }
        if !findings.unknown.isEmpty {
            console.print("")
            console.print("unknown (in code, not in the set; they always get their compiled-in default):")
            var table = Table(header: ["KEY", "WHERE"])
            for key in findings.unknown {
                table.append([key, (references[key] ?? []).map(\.description).joined(separator: ", ")])
            }
            for line in table.lines(fitting: Int.max).dropFirst() { console.print("  \(line)") }
        }
        if !references.isEmpty {
            console.print("")
            console.print("references:")
            var table = Table(header: ["KEY", "WHERE"])
            for key in references.keys.sorted(by: utf8Less) {
                table.append([key, (references[key] ?? []).map(\.description).joined(separator: ", ")])
            }
            for line in table.lines(fitting: Int.max).dropFirst() { console.print("  \(line)") }
        }
    }
}
