/// `flagctl help [COMMAND]`: the same screens as `--help`.
package struct HelpCommand: Command {
    /// `help [COMMAND]`
    package static let configuration = CommandConfiguration(
        name: "help", abstract: "Show the help of flagctl or of one command.", synopsis: "[COMMAND]",
        positionals: [Positional("COMMAND", help: "the command, e.g. eval", isOptional: true, isRepeating: true)],
        example: "flagctl help eval")

    private let words: [String]

    /// Takes the command's words, e.g. `eval`.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        words = arguments.positionals
    }

    /// Prints the help screen; an unknown command is a usage error.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        guard !words.isEmpty else {
            context.console.printText(Help.text(for: nil, commands: context.commands))
            return .success
        }
        for command in context.commands where command.configuration.words == words {
            context.console.printText(Help.text(for: command.configuration, commands: context.commands))
            return .success
        }
        let known = context.commands.map { $0.configuration.name }.joined(separator: ", ")
        throw .usage("no command '\(words.joined(separator: " "))'; commands: \(known)", of: Self.configuration)
    }
}

/// The help screens, wrapped to fit 100 columns.
enum Help {
    static let width = 100

    private static let helpOption = ("-h, --help", "show this help")

    /// The help of one command, or of `flagctl` itself when `configuration` is `nil`.
    static func text(for configuration: CommandConfiguration?, commands: [any Command.Type]) -> String {
        var sections: [String] = []
        let globals = GlobalOptions.options.map { ($0.synopsis, $0.help) } + [helpOption]
        if let configuration {
            sections.append("OVERVIEW: \(configuration.abstract)")
            sections.append(usage(configuration))
            if !configuration.positionals.isEmpty {
                sections.append("ARGUMENTS:\n" + list(configuration.positionals.map { ($0.name, $0.help) }))
            }
            if !configuration.options.isEmpty {
                sections.append("OPTIONS:\n" + list(configuration.options.map { ($0.synopsis, $0.help) }))
            }
            sections.append("GLOBAL OPTIONS:\n" + list(globals))
            sections.append("EXAMPLE:\n  \(configuration.example)")
        } else {
            sections.append("OVERVIEW: flagctl administers Flagstaff feature flags and checks flag-set files.")
            sections.append("USAGE: \(FlagCTL.usage)")
            sections.append("COMMANDS:\n" + list(commands.map { ($0.configuration.name, $0.configuration.abstract) }))
            sections.append("GLOBAL OPTIONS:\n" + list(globals))
            sections.append("EXAMPLE:\n  flagctl lint config/flagsets/demo.json")
            sections.append("See 'flagctl help COMMAND' for the arguments of a command.")
        }
        return sections.joined(separator: "\n\n")
    }

    /// `USAGE: flagctl eval KEY …`, continued under the first argument when longer than the screen.
    static func usage(_ configuration: CommandConfiguration) -> String {
        guard !configuration.synopsis.isEmpty else { return "USAGE: \(configuration.usage)" }
        let lead = "USAGE: flagctl \(configuration.name) "
        let lines = wrap(groups(configuration.synopsis), width: width - lead.count)
        let indent = String(repeating: " ", count: lead.count)
        return lead + lines.joined(separator: "\n" + indent)
    }

    /// Two columns: names indented by 2, descriptions aligned and wrapped at the screen width.
    static func list(_ items: [(String, String)]) -> String {
        let nameWidth = min(items.map(\.0.count).max() ?? 0, 28) + 2
        var lines: [String] = []
        for (name, text) in items {
            var wrapped = wrap(text, width: width - 2 - nameWidth)
            let first = wrapped.isEmpty ? "" : wrapped.removeFirst()
            if name.count + 2 <= nameWidth {
                lines.append("  " + pad(name, nameWidth) + first)
            } else {
                lines.append("  " + name)
                lines.append(String(repeating: " ", count: 2 + nameWidth) + first)
            }
            for line in wrapped { lines.append(String(repeating: " ", count: 2 + nameWidth) + line) }
        }
        return lines.joined(separator: "\n")
    }

    /// The synopsis split at spaces outside brackets, so that `[--at TIME]` stays on one line.
    static func groups(_ synopsis: String) -> [String] {
        var groups: [String] = []
        var group = ""
        var depth = 0
        for character in synopsis {
            if character == "[" || character == "(" { depth += 1 }
            if character == "]" || character == ")" { depth -= 1 }
            if character == " " && depth <= 0 {
                if !group.isEmpty { groups.append(group) }
                group = ""
            } else {
                group.append(character)
            }
        }
        if !group.isEmpty { groups.append(group) }
        return groups
    }

    /// Splits text into lines of at most `width` characters at spaces (a longer word gets a line of its own).
    static func wrap(_ text: String, width: Int) -> [String] {
        wrap(text.split(separator: " ").map(String.init), width: width)
    }

    /// Joins words into lines of at most `width` characters (a longer word gets a line of its own).
    static func wrap(_ words: [String], width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in words {
            if line.isEmpty {
                line = word
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
