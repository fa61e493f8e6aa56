// libFuzzer harness for flagctl's command line: `ArgumentParser` over every registered command, then each
// command's own `init(parsing:)` (value conversion and combination checks). Run with `Fuzz/run cli`.
//
// The first input byte picks the environment (empty, or every FLAGCTL_ variable set); the rest is the argument
// vector, NUL-separated as the kernel passes it. Properties checked on every input; a violation traps:
// - parsing ends in help, a run, or a usage error (exit code 2, a message and the usage lines), never anything else;
//   a command's `init(parsing:)` either builds it or throws a usage error;
// - help is given only when `-h` or `--help` was typed before `--`;
// - a run's command was named on the line; its options are declared by it, values and positionals come from the
//   line (whole arguments or the part after `=`), the positionals fit the declaration; global options not typed
//   come from the environment;
// - a run's canonical command line (the command's words, `--name=value` for every value and flag, `--`, the
//   positionals) parses to the same run;
// - what flagctl writes of a usage error or of help, through its Console, holds no control character but the line
//   breaks that end lines, and an error's every diagnostic is one line, whatever the arguments quoted in it.

import FlagCore

@testable import FlagCLI

private let environments: [[String: String]] = [
    [:],
    ["FLAGCTL_SERVER": "not a URL", "FLAGCTL_TOKEN": "env-token", "FLAGCTL_SET": "env-set"],
]

/// A parser over every command (`ArgumentParser` is not Sendable, so not a global constant).
private var parser: ArgumentParser { ArgumentParser(commands: FlagCTL.commands) }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let environment = input.pick(environments)
    let arguments =
        input.bytes.isEmpty
        ? []
        : input.bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
    let beforeEnd = arguments.prefix { $0 != "--" }
    let helpTyped = beforeEnd.contains("-h") || beforeEnd.contains("--help")

    let invocation: Invocation
    do throws(CLIError) {
        invocation = try parser.parse(arguments, environment: environment)
    } catch {
        check(error.exitCode == .usage, "the parser failed with exit code \(error.exitCode): \(error)")
        check(error.diagnostic.count == 3 && error.message.count > 0, "a usage error without its lines: \(error)")
        checkWritten(lines: error.diagnostic.count) { console in
            for line in error.diagnostic { console.printError(line) }
        }
        return 0
    }
    switch invocation {
    case .help(let configuration):
        check(helpTyped, "help without -h or --help: \(arguments)")
        if let configuration { check(named(configuration, in: arguments), "help for an untyped command") }
        checkWritten(lines: nil) { console in
            console.printText(Help.text(for: configuration, commands: FlagCTL.commands))
        }
    case .run(let command, let parsed, let globals):
        check(!helpTyped, "a run although help was asked for: \(arguments)")
        checkRun(command, parsed, globals, arguments: arguments, environment: environment)
        do throws(CLIError) {
            _ = try command.init(parsing: parsed)
        } catch {
            check(error.exitCode == .usage && !error.message.isEmpty, "\(command).init(parsing:) threw \(error)")
        }
    }
    return 0
}

/// Writes through a Console and checks what came out: no control character a terminal would obey, and `lines`
/// lines when given.
private func checkWritten(lines: Int?, _ write: (Console) -> Void) {
    var written: [UInt8] = []
    let console = Console(writeOutput: { written += $0 }, writeError: { written += $0 })
    write(console)
    console.flush()
    let text = String(decoding: written, as: UTF8.self)
    check(
        text.unicodeScalars.allSatisfy { !$0.isControlCharacter || $0 == "\n" },
        "a control character written: \(text.escapingControlCharacters())")
    if let lines {
        check(written.count { $0 == UInt8(ascii: "\n") } == lines, "not \(lines) lines: \(text)")
    }
}

/// Whether the command's words were typed, in order.
private func named(_ configuration: CommandConfiguration, in arguments: [String]) -> Bool {
    var words = configuration.words[...]
    for argument in arguments where argument == words.first {
        words.removeFirst()
        if words.isEmpty { return true }
    }
    return false
}

private func checkRun(
    _ command: any Command.Type, _ parsed: ParsedArguments, _ globals: GlobalOptions, arguments: [String],
    environment: [String: String]
) {
    let configuration = command.configuration
    check(named(configuration, in: arguments), "'\(configuration.name)' runs but was not typed: \(arguments)")
    let typed = Set(arguments)
    // The part after the first `=` (a scalar: a combining mark after it does not hide it).
    let inline = Set(
        arguments.compactMap { argument in
            argument.unicodeScalars.firstIndex(of: "=").map {
                String(Substring(argument.unicodeScalars[argument.unicodeScalars.index(after: $0)...]))
            }
        })
    for (name, values) in parsed.values {
        let option = configuration.options.first { $0.name == name }
        check(option != nil && option?.kind != .flag, "--\(name) is not a valued option of \(configuration.name)")
        check(option?.kind == .repeated || values.count == 1, "--\(name) has \(values.count) values")
        for value in values { check(typed.contains(value) || inline.contains(value), "value '\(value)' not typed") }
    }
    for flag in parsed.flags {
        let option = configuration.options.first { $0.name == flag }
        check(option?.kind == .flag && typed.contains("--\(flag)"), "--\(flag) is not a flag of \(configuration.name)")
    }
    for positional in parsed.positionals { check(typed.contains(positional), "positional '\(positional)' not typed") }
    let declared = configuration.positionals
    check(
        parsed.positionals.count >= declared.prefix { !$0.isOptional }.count
            && (parsed.positionals.count <= declared.count || declared.last?.isRepeating == true),
        "\(parsed.positionals.count) positionals for \(declared.map(\.name))")
    for (name, value) in [("server", globals.server), ("token", globals.token), ("set", globals.set)] {
        guard let value else { continue }
        let fromEnvironment = GlobalOptions.environmentNames[name].flatMap { environment[$0] }
        check(
            typed.contains(value) || inline.contains(value) || value == fromEnvironment,
            "--\(name) '\(value)' is neither typed nor from the environment")
    }
    if globals.json { check(typed.contains("--json"), "--json without --json") }

    // The canonical command line parses to the same run.
    var canonical = configuration.words
    for (name, values) in parsed.values.sorted(by: { $0.key < $1.key }) {
        canonical += values.map { "--\(name)=\($0)" }
    }
    canonical += parsed.flags.sorted().map { "--\($0)" }
    for (name, value) in [("server", globals.server), ("token", globals.token), ("set", globals.set)] {
        if let value, value != GlobalOptions.environmentNames[name].flatMap({ environment[$0] }) {
            canonical.append("--\(name)=\(value)")
        }
    }
    if globals.json { canonical.append("--json") }
    canonical.append("--")
    canonical += parsed.positionals
    do throws(CLIError) {
        guard
            case .run(let again, let reparsed, let againGlobals) = try parser.parse(canonical, environment: environment)
        else { fail("the canonical line \(canonical) asks for help") }
        check(
            again == command && reparsed.values == parsed.values && reparsed.flags == parsed.flags
                && reparsed.positionals == parsed.positionals && againGlobals == globals,
            "the canonical line \(canonical) parses to another run")
    } catch {
        fail("the canonical line \(canonical) fails: \(error)")
    }
}
