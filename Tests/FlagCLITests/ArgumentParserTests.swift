import FlagCLI
import FlagCore
import FlagTestSupport
import Foundation
import Testing

/// The parser on its own: spelling of options, globals, environment defaults, grouped commands.
@Suite("ArgumentParser")
struct ArgumentParserTests {
    let parser = ArgumentParser(commands: FlagCTL.commands + [DecksList.self, DecksCreate.self])

    /// Parses and expects a command to run.
    func parse(_ arguments: [String], environment: [String: String] = [:]) throws
        -> (name: String, arguments: ParsedArguments, globals: GlobalOptions)
    {
        switch try parser.parse(arguments, environment: environment) {
        case .run(let type, let parsed, let globals): return (type.configuration.name, parsed, globals)
        case .help(let configuration):
            Issue.record("expected a command, got help for \(configuration?.name ?? "flagctl")")
            throw CLIError.failure("help")
        }
    }

    /// The usage error a command line produces.
    func usageError(_ arguments: [String], environment: [String: String] = [:]) -> CLIError? {
        do {
            _ = try parser.parse(arguments, environment: environment)
            return nil
        } catch {
            return error
        }
    }

    @Test("--opt=value is the same as --opt value")
    func equalsForm() throws {
        let spaced = try parse(["eval", "k", "--file", "a.json", "--unit", "u-1", "--at", "2026-11-29"])
        let joined = try parse(["eval", "k", "--file=a.json", "--unit=u-1", "--at=2026-11-29"])
        for name in ["file", "unit", "at"] {
            #expect(spaced.arguments.value(name) == joined.arguments.value(name))
        }
        #expect(joined.arguments.value("file") == "a.json")
        // Only the first '=' splits: the value keeps the rest.
        let attr = try parse(["eval", "k", "--unit", "u", "--attr=query=a=b"])
        #expect(attr.arguments.values("attr") == ["query=a=b"])
    }

    @Test("a repeated option keeps every value in order; a single-valued one given twice is an error")
    func repeated() throws {
        let parsed = try parse([
            "eval", "k", "--attr", "country=DE", "--unit", "u", "--attr=platform=ios", "--attr", "x=",
        ])
        #expect(parsed.arguments.values("attr") == ["country=DE", "platform=ios", "x="])
        let error = try #require(usageError(["eval", "k", "--unit", "a", "--unit", "b"]))
        #expect(error.exitCode == .usage)
        #expect(error.message == "--unit is given more than once")
    }

    @Test("-- ends options: what follows is positional, however it is spelled")
    func doubleDash() throws {
        let lint = try parse(["lint", "--", "--json"])
        #expect(lint.arguments.positionals == ["--json"])
        #expect(lint.globals.json == false)
        let eval = try parse(["eval", "--unit", "u-1", "--", "-odd-key"])
        #expect(eval.arguments.positionals == ["-odd-key"])
        #expect(eval.arguments.value("unit") == "u-1")
    }

    @Test("global options are accepted before the command, after it, and between its arguments")
    func globalsAnywhere() throws {
        let lines = [
            ["--json", "--set", "ios-prod", "lint", "a.json"],
            ["lint", "--json", "a.json", "--set=ios-prod"],
            ["lint", "a.json", "--set", "ios-prod", "--json"],
        ]
        for line in lines {
            let parsed = try parse(line)
            #expect(parsed.name == "lint")
            #expect(parsed.arguments.positionals == ["a.json"])
            #expect(parsed.globals == GlobalOptions(set: "ios-prod", json: true))
        }
    }

    @Test("--server, --token, --set default to FLAGCTL_SERVER, FLAGCTL_TOKEN, FLAGCTL_SET; the line wins")
    func environmentDefaults() throws {
        let environment = [
            "FLAGCTL_SERVER": "http://flags.internal:8080", "FLAGCTL_TOKEN": "t0ken", "FLAGCTL_SET": "ios-prod",
        ]
        let fromEnvironment = try parse(["lint", "a.json"], environment: environment).globals
        #expect(fromEnvironment == GlobalOptions(server: "http://flags.internal:8080", token: "t0ken", set: "ios-prod"))
        let fromLine = try parse(
            ["lint", "a.json", "--server", "https://flags.example.com", "--token=other", "--set", "web-prod"],
            environment: environment
        ).globals
        #expect(fromLine == GlobalOptions(server: "https://flags.example.com", token: "other", set: "web-prod"))
        let empty = try parse(["lint", "a.json"], environment: ["FLAGCTL_SET": "", "FLAGCTL_SERVER": ""]).globals
        #expect(empty == GlobalOptions())
    }

    @Test("--server on the line must be an http(s) URL; a stale FLAGCTL_SERVER does not break offline commands")
    func serverForm() throws {
        let error = try #require(usageError(["lint", "a.json", "--server", "flags.internal"]))
        #expect(error.message == "--server needs an http:// or https:// URL, not 'flags.internal'")
        #expect(
            try parse(["lint", "a.json"], environment: ["FLAGCTL_SERVER": "nonsense"]).globals.server == "nonsense")
    }

    @Test(
        "mistakes are usage errors naming what is wrong",
        arguments: [
            (["bogus"], "unknown command 'bogus'"),
            ([], "missing command"),
            (["lint"], "missing SET.json"),
            (["lint", "a.json", "b.json"], "unexpected argument 'b.json'"),
            (["lint", "a.json", "--bogus"], "unknown option '--bogus' for 'lint'"),
            (
                ["--file", "a.json", "eval", "k"],
                "unknown option '--file' before the command; a command's options go after its name"
            ),
            (["eval", "k", "--unit"], "--unit needs a value (ID)"),
            (["eval", "k", "--file", "--unit", "u"], "--file needs a value (SET.json)"),
            (["eval", "k", "--unit", "u", "--explain=yes"], "--explain takes no value"),
            (["eval", "k", "--unit", "u", "-x"], "unknown option '-x'; options are spelled --name"),
            (["--set", "a", "--set", "b", "lint", "f"], "--set is given more than once"),
            (["decks"], "'decks' needs a subcommand: list, create"),
            (["decks", "delete"], "unknown command 'decks delete'; 'decks' has: list, create"),
        ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        let error = try #require(usageError(arguments))
        #expect(error.exitCode == .usage)
        #expect(error.message == message)
        #expect(error.diagnostic.count == 3)
        #expect(error.diagnostic.first == "error: \(message)")
    }

    @Test("a usage error carries the usage line of the command it concerns")
    func usageLine() throws {
        let error = try #require(usageError(["eval", "k", "--unit", "u", "--nope"]))
        #expect(error.diagnostic[1] == "usage: \(EvalCommand.configuration.usage)")
        #expect(error.diagnostic[2] == "See 'flagctl eval --help'.")
        let top = try #require(usageError(["nope"]))
        #expect(top.diagnostic[1] == "usage: \(FlagCTL.usage)")
    }

    @Test("-h and --help win over other mistakes on the line, but not over an unknown command")
    func helpWins() throws {
        guard case .help(let configuration) = try parser.parse(["eval", "--bogus", "-h"], environment: [:]) else {
            Issue.record("expected help")
            return
        }
        #expect(configuration?.name == "eval")
        guard case .help(nil) = try parser.parse(["--help"], environment: [:]) else {
            Issue.record("expected top-level help")
            return
        }
        #expect(usageError(["bogus", "--help"])?.message == "unknown command 'bogus'")
    }

    @Test("a value may start with a single dash, such as a negative number")
    func negativeValues() throws {
        let parsed = try parse(["decks", "create", "-5", "--note", "-0.5"])
        #expect(parsed.name == "decks create")
        #expect(parsed.arguments.positionals == ["-5"])
        #expect(parsed.arguments.value("note") == "-0.5")
    }

    @Test("grouped commands resolve on two words, with options before the second")
    func groupedCommands() throws {
        #expect(try parse(["decks", "list"]).name == "decks list")
        let create = try parse(["--json", "decks", "create", "ios-beta", "--note", "hi"])
        #expect(create.name == "decks create")
        #expect(create.arguments.positionals == ["ios-beta"])
        #expect(create.globals.json)
    }

    @Test("no command declares an option that is also global, and every name is unique")
    func declarations() {
        let globals = Set(["server", "token", "set", "json", "help"])
        var names: Set<String> = []
        for command in FlagCTL.commands {
            let configuration = command.configuration
            #expect(names.insert(configuration.name).inserted, "\(configuration.name) registered twice")
            let options = configuration.options.map(\.name)
            #expect(Set(options).count == options.count, "\(configuration.name) declares an option twice")
            #expect(globals.isDisjoint(with: options), "\(configuration.name) shadows a global option")
        }
    }
}

/// A grouped command made up for the tests; only its parsing and dispatch are exercised here.
struct DecksList: Command {
    static let configuration = CommandConfiguration(
        name: "decks list", abstract: "List flag sets.", synopsis: "", example: "flagctl decks list")
    init(parsing arguments: ParsedArguments) throws(CLIError) {}
    func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        context.console.print("ios-prod")
        return .success
    }
}

/// A grouped command with a positional and an option.
struct DecksCreate: Command {
    static let configuration = CommandConfiguration(
        name: "decks create", abstract: "Create a flag set.", synopsis: "NAME [--note S]",
        positionals: [Positional("NAME", help: "the set's name")],
        options: [.value("note", "S", help: "a note")], example: "flagctl decks create ios-beta")
    let name: String
    init(parsing arguments: ParsedArguments) throws(CLIError) {
        name = arguments.positional(0) ?? ""
    }
    func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        context.console.print("created \(name)")
        return .success
    }
}

/// Dispatch from a command line to a registered command, in-process.
@Suite("FlagCTL.main")
struct DispatchTests {
    @Test("a new command slots in as one type in the registry: it runs, and help lists it")
    func registry() {
        let commands = FlagCTL.commands + [DecksList.self, DecksCreate.self]
        let created = runInProcess(["decks", "create", "ios-beta", "--json"], commands: commands)
        #expect(created.status == 0)
        #expect(created.stdout == "created ios-beta\n")
        let help = runInProcess(["help"], commands: commands)
        #expect(help.stdoutLines.contains { $0.hasPrefix("  decks create ") && $0.hasSuffix("  Create a flag set.") })
        let subcommandHelp = runInProcess(["help", "decks", "list"], commands: commands)
        #expect(subcommandHelp.stdout.hasPrefix("OVERVIEW: List flag sets.\n\nUSAGE: flagctl decks list\n"))
    }

    @Test("the clock is injected: eval without --at evaluates at the time main is given")
    func injectedClock() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent(try directory.copyDemo()).path
        // new-checkout expires at 2027-01-10T00:00:00Z and then serves its expiredValue `true` with STATIC.
        let arguments = ["eval", "new-checkout", "--file", path, "--unit", "u-4", "--json"]
        let before = runInProcess(arguments, now: try #require(ISO8601.parse("2027-01-09T23:59:59Z")))
        let after = runInProcess(arguments, now: try #require(ISO8601.parse("2027-01-10T00:00:00Z")))
        let line =
            #"{"key":"new-checkout","unit":"u-4","value":true,"reason":"REASON","variant":"VARIANT","version":1}"#
        #expect(before.stdout == line.replacing("REASON", with: "SPLIT").replacing("VARIANT", with: "rollout") + "\n")
        #expect(after.stdout == line.replacing("REASON", with: "STATIC").replacing("VARIANT", with: "expired") + "\n")
    }
}
