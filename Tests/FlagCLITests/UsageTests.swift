import FlagCLI
import FlagTestSupport
import Foundation
import Testing

/// Usage errors and help screens, run as a process.
@Suite("flagctl usage and help", .live)
struct UsageTests {
    static let evalUsage =
        "usage: flagctl eval KEY [--file SET.json] (--unit ID | --units-file FILE) "
        + "[--attr NAME=VALUE]... [--at TIME] [--explain]"

    @Test(
        "a wrong eval command line exits 2 with one error line and the usage",
        arguments: [
            (["--bogus"], "error: unknown option '--bogus' for 'eval'"),
            ([], "error: missing --unit ID or --units-file FILE"),
            (["--unit", "u-1", "--units-file", "u.txt"], "error: --unit and --units-file cannot be used together"),
            (
                ["--unit", "u-1", "--attr", "country"],
                "error: --attr 'country' needs the form NAME=VALUE, e.g. country=DE"
            ),
            (["--unit", "u-1", "--attr", "=DE"], "error: --attr '=DE' has no attribute name"),
            (["--unit", "u-1", "--attr", "a=1", "--attr", "a=2"], "error: --attr a is given twice"),
            (
                ["--unit", "u-1", "--at", "2026-11-29T12:00:00"],
                "error: --at '2026-11-29T12:00:00' is not an ISO-8601 time: a date-time needs a zone: append Z for UTC "
                    + "or an offset like +01:00"
            ),
            (
                ["--unit", "u-1", "--at", "2026-02-30"],
                "error: --at '2026-02-30' is not an ISO-8601 time: day 30 does not exist in month 2 of year 2026"
            ),
        ])
    func evalUsageErrors(_ extra: [String], _ message: String) throws {
        let directory = try TemporaryDirectory()
        try directory.copyDemo()
        let run = try Flagctl.run(["eval", "new-checkout", "--file", "demo.json"] + extra, in: directory)
        #expect(run.status == 2, "\(run)")
        #expect(run.stdout == "")
        #expect(run.stderrLines == [message, Self.evalUsage, "See 'flagctl eval --help'."])
    }

    @Test(
        "a wrong command line exits 2 naming what is wrong, with the usage",
        arguments: [
            (["frobnicate"], "error: unknown command 'frobnicate'", "usage: flagctl [--server URL]"),
            ([], "error: missing command", "usage: flagctl [--server URL]"),
            (["lint"], "error: missing SET.json", "usage: flagctl lint SET.json"),
            (
                ["lint", "a.json", "--strict"], "error: unknown option '--strict' for 'lint'",
                "usage: flagctl lint SET.json"
            ),
            (["eval", "--file", "demo.json", "--unit", "u"], "error: missing KEY", "usage: flagctl eval KEY"),
            (["lint", "demo.json", "--json=yes"], "error: --json takes no value", "usage: flagctl lint SET.json"),
            (
                ["help", "frob"],
                "error: no command 'frob'; commands: sets list, sets create, sets settings, list, get, create, "
                    + "set, rule add, rule remove, requires, values add, values remove, values clear, rollout, "
                    + "override, kill, restore, expire, archive, stale, usage, "
                    + "clients, cohort create, cohort list, cohort show, eval, lint, generate swift, refs, history, diff, "
                    + "rollback, changes list, changes show, changes approve, changes reject, changes schedule, "
                    + "changes apply, "
                    + "changes withdraw, export, import, "
                    + "promote, keys create, keys list, keys revoke, tokens create, tokens list, tokens revoke, "
                    + "signing-key show, signing-key rotate, signing-key activate, signing-key retire, verify, "
                    + "webhooks create, webhooks list, webhooks show, webhooks delete, webhooks test, "
                    + "webhooks rotate-secret, help",
                "usage: flagctl help [COMMAND]"
            ),
        ])
    func usageErrors(_ arguments: [String], _ message: String, _ usage: String) throws {
        let directory = try TemporaryDirectory()
        let run = try Flagctl.run(arguments, in: directory)
        #expect(run.status == 2, "\(run)")
        #expect(run.stdout == "")
        #expect(run.stderrLines.count == 3)
        #expect(run.stderrLines.first == message)
        #expect(run.stderrLines.dropFirst().first?.hasPrefix(usage) == true)
    }

    @Test(
        "--help, -h and help COMMAND print the usage and an example on stdout; exit 0",
        arguments: [
            (["--help"], "flagctl [--server URL]"), (["-h"], "flagctl [--server URL]"),
            (["help"], "flagctl [--server URL]"), (["lint", "--help"], "flagctl lint SET.json"),
            (["lint", "-h"], "flagctl lint SET.json"), (["help", "lint"], "flagctl lint SET.json"),
            (["eval", "--help"], "flagctl eval KEY [--file SET.json]"), (["help", "eval"], "flagctl eval KEY [--file"),
            (["eval", "new-checkout", "--unit", "u", "--nonsense", "-h"], "flagctl eval KEY"),
            (["help", "--help"], "flagctl help [COMMAND]"), (["help", "help"], "flagctl help [COMMAND]"),
        ])
    func help(_ arguments: [String], _ usage: String) throws {
        let directory = try TemporaryDirectory()
        let run = try Flagctl.run(arguments, in: directory)
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr == "")
        #expect(run.stdout.contains("USAGE: \(usage)"))
        #expect(run.stdout.contains("EXAMPLE:\n  flagctl "))
        #expect(run.stdout.contains("--json"))
        #expect(run.stdoutLines.allSatisfy { $0.count <= 100 })
    }

    @Test("the top-level help lists every command with its summary")
    func topLevelHelp() throws {
        let directory = try TemporaryDirectory()
        let run = try Flagctl.run(["--help"], in: directory)
        for command in FlagCTL.commands {
            #expect(run.stdout.contains("  \(command.configuration.name) "))
            #expect(run.stdout.contains(command.configuration.abstract))
        }
    }
}
