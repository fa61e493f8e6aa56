import Foundation

/// Reads a command line against the registered commands, in the spirit of swift-argument-parser.
///
/// The first positional word names the command (two words for grouped commands such as `sets list`). Global
/// options are accepted anywhere before `--`; a command's own options after its name. `--opt value` and
/// `--opt=value` are the same; `--` ends options. `-h`/`--help` anywhere asks for help and wins over every other
/// mistake on the line except an unknown command.
///
/// ```swift
/// let parser = ArgumentParser(commands: FlagCTL.commands)
/// let invocation = try parser.parse(["lint", "demo.json", "--json"], environment: [:])
/// ```
package struct ArgumentParser {
    private let commands: [any Command.Type]

    /// Creates a parser for these commands.
    package init(commands: [any Command.Type]) {
        self.commands = commands
    }

    /// Parses `arguments` (without the program name); global options not given default to `environment`.
    package func parse(_ arguments: some Sequence<String>, environment: [String: String]) throws(CLIError)
        -> Invocation
    {
        var state = State(commands: commands)
        var tokens = Array(arguments)[...]
        while let token = tokens.popFirst() {
            state.read(token, rest: &tokens)
        }
        return try state.finish(environment: environment)
    }
}

/// The parser's progress through one command line.
private struct State {
    let commands: [any Command.Type]
    var command: (any Command.Type)?
    /// The first word of a grouped command (`sets`), waiting for its second (`list`).
    var group: String?
    var commandIsUnknown = false
    var optionsEnded = false
    var helpRequested = false
    var globalValues: [String: String] = [:]
    var globalFlags: Set<String> = []
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    /// The first mistake; reported at the end, with the usage of the command as finally resolved.
    var firstError: String?

    init(commands: [any Command.Type]) {
        self.commands = commands
    }

    mutating func fail(_ message: String) {
        if firstError == nil { firstError = message }
    }

    mutating func read(_ token: String, rest: inout ArraySlice<String>) {
        if optionsEnded {
            positional(token)
        } else if token == "--" {
            optionsEnded = true
        } else if token == "-h" || token == "--help" {
            helpRequested = true
        } else if token.hasPrefix("--") {
            option(token, rest: &rest)
        } else if token.count > 1 && token.hasPrefix("-") && !looksNumeric(token.dropFirst()) {
            fail("unknown option '\(token)'; options are spelled --name")
        } else {
            positional(token)
        }
    }

    /// `-5` and `-0.5` are values, not options.
    private func looksNumeric(_ text: Substring) -> Bool {
        guard let first = text.first else { return false }
        return first.isASCII && (first.isNumber || first == ".")
    }

    private mutating func option(_ token: String, rest: inout ArraySlice<String>) {
        // Scalars, not Characters: a value starting with a combining mark would join the `=` and hide it.
        let body = token.dropFirst(2).unicodeScalars
        let name: String
        var inline: String?
        if let equals = body.firstIndex(of: "=") {
            name = String(Substring(body[..<equals]))
            inline = String(Substring(body[body.index(after: equals)...]))
        } else {
            name = String(Substring(body))
        }
        let global = GlobalOptions.options.first { $0.name == name }
        guard let option = global ?? command?.configuration.options.first(where: { $0.name == name }) else {
            if command == nil && commands.contains(where: { $0.configuration.options.contains { $0.name == name } }) {
                fail("unknown option '--\(name)' before the command; a command's options go after its name")
            } else if let command {
                fail("unknown option '--\(name)' for '\(command.configuration.name)'")
            } else {
                fail("unknown option '--\(name)'")
            }
            return
        }
        let value: String
        switch option.kind {
        case .flag:
            if inline != nil { return fail("--\(name) takes no value") }
            if global != nil { globalFlags.insert(name) } else { flags.insert(name) }
            return
        case .value, .repeated:
            // `-h` asks for help anywhere, as `--help` does: neither is taken as the value.
            if let inline {
                value = inline
            } else if let next = rest.first, !next.hasPrefix("--"), next != "-h" {
                value = next
                rest.removeFirst()
            } else {
                return fail("--\(name) needs a value (\(option.valueName))")
            }
        }
        if global != nil {
            if globalValues[name] != nil { return fail("--\(name) is given more than once") }
            globalValues[name] = value
        } else if option.kind == .value && values[name] != nil {
            fail("--\(name) is given more than once")
        } else {
            values[name, default: []].append(value)
        }
    }

    private mutating func positional(_ word: String) {
        if command != nil {
            positionals.append(word)
            return
        }
        if commandIsUnknown { return }
        if let group {
            if let match = commands.first(where: { $0.configuration.words == [group, word] }) {
                command = match
                self.group = nil
            } else {
                commandIsUnknown = true
                fail("unknown command '\(group) \(word)'; '\(group)' has: \(subcommands(of: group))")
            }
            return
        }
        let candidates = commands.filter { $0.configuration.words.first == word }
        if let single = candidates.first(where: { $0.configuration.words.count == 1 }) {
            command = single
        } else if candidates.isEmpty {
            commandIsUnknown = true
            fail("unknown command '\(word)'")
        } else {
            group = word
        }
    }

    private func subcommands(of group: String) -> String {
        commands.compactMap { $0.configuration.words.first == group ? $0.configuration.words.last : nil }
            .joined(separator: ", ")
    }

    mutating func finish(environment: [String: String]) throws(CLIError) -> Invocation {
        let configuration = command?.configuration
        if helpRequested && !commandIsUnknown { return .help(configuration) }
        if let firstError { throw .usage(firstError, of: configuration) }
        if let group { throw .usage("'\(group)' needs a subcommand: \(subcommands(of: group))", of: nil) }
        guard let command, let configuration else { throw .usage("missing command", of: nil) }
        try checkPositionals(configuration)
        var arguments = ParsedArguments(configuration: configuration)
        arguments.values = values
        arguments.flags = flags
        arguments.positionals = positionals
        return .run(command, arguments, try globals(environment, configuration))
    }

    private func checkPositionals(_ configuration: CommandConfiguration) throws(CLIError) {
        let declared = configuration.positionals
        for (index, positional) in declared.enumerated() where !positional.isOptional && index >= positionals.count {
            throw .usage("missing \(positional.name)", of: configuration)
        }
        if positionals.count > declared.count && declared.last?.isRepeating != true {
            throw .usage("unexpected argument '\(positionals[declared.count])'", of: configuration)
        }
    }

    private func globals(_ environment: [String: String], _ configuration: CommandConfiguration) throws(CLIError)
        -> GlobalOptions
    {
        func setting(_ name: String) -> String? {
            if let value = globalValues[name] { return value }
            guard let variable = GlobalOptions.environmentNames[name], let value = environment[variable],
                !value.isEmpty
            else { return nil }
            return value
        }
        // The environment's value is checked by the commands that use it, so that a stale FLAGCTL_SERVER does
        // not break offline commands; a value typed on this command line is checked now.
        if let server = globalValues["server"] {
            guard let url = URL(string: server), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
            else {
                throw .usage("--server needs an http:// or https:// URL, not '\(server)'", of: configuration)
            }
        }
        return GlobalOptions(
            server: setting("server"), token: setting("token"), set: setting("set"), json: globalFlags.contains("json"))
    }
}
