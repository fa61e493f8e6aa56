import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagCLI

/// What a terminal would obey in flagctl's output: every control character but the line feed that ends a line.
func obeyedControls(_ text: String) -> [Unicode.Scalar] {
    text.unicodeScalars.filter { $0.isControlCharacter && $0 != "\n" }
}

/// Strings that drive a terminal: a window title set (OSC … BEL), a screen cleared with the one-character CSI, and a
/// line break that would forge a line of its own, with how flagctl shows each.
enum Hostile {
    static let title = "\u{1B}]0;pwned\u{7}"
    static let shownTitle = #"\e]0;pwned\u0007"#
    static let clear = "\u{9B}2J"
    static let shownClear = #"\u009b2J"#
    static let text = "Checkout\(title)\(clear)\nforged: line"
    static let shownText = #"Checkout\e]0;pwned\u0007\u009b2J\nforged: line"#

    /// Records an issue for any control character a terminal would obey in the run's output, or a forged line.
    static func expectSafe(_ run: Run, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(obeyedControls(run.stdout).isEmpty, "stdout: \(run)", sourceLocation: sourceLocation)
        #expect(obeyedControls(run.stderr).isEmpty, "stderr: \(run)", sourceLocation: sourceLocation)
        let lines = run.stdoutLines + run.stderrLines
        #expect(!lines.contains { $0.hasPrefix("forged") }, "a forged line: \(run)", sourceLocation: sourceLocation)
    }
}

/// The console and the table show control characters from a server or a file as escapes (docs/flagctl.md,
/// "Control characters"); these tests write through them in-process.
@Suite("flagctl output: control characters")
struct ConsoleEscapingTests {
    /// A console writing into two byte buffers, and what each holds.
    final class Captured {
        var out: [UInt8] = []
        var err: [UInt8] = []
        lazy var console = Console(
            writeOutput: { [unowned self] in out += $0 }, writeError: { [unowned self] in err += $0 }, isTerminal: true)
        var stdout: String { String(decoding: out, as: UTF8.self) }
        var stderr: String { String(decoding: err, as: UTF8.self) }
    }

    @Test func aPrintedLineShowsItsControlCharactersAndStaysOneLine() {
        let captured = Captured()
        captured.console.print("description: \(Hostile.text)")
        captured.console.flush()
        #expect(captured.stdout == "description: \(Hostile.shownText)\n")
    }

    @Test func anErrorLineFromAServerStaysOneVisibleLine() {
        let captured = Captured()
        captured.console.printError("error: no flag 'x\(Hostile.title)'\nerror: forged")
        #expect(captured.stderr == #"error: no flag 'x\e]0;pwned\u0007'\nerror: forged"# + "\n")
    }

    @Test func flagctlsOwnTextKeepsItsLinesAndNothingElse() {
        let captured = Captured()
        captured.console.printText("USAGE: flagctl\n\nOPTIONS:\n  --x\(Hostile.clear)")
        captured.console.flush()
        #expect(captured.stdout == "USAGE: flagctl\n\nOPTIONS:\n  --x\(Hostile.shownClear)\n")
    }

    /// The console's own erase sequence still clears a status line; the status line's text is escaped.
    @Test func aStatusLineIsEscapedButTheConsolesOwnEraseIsKept() {
        let captured = Captured()
        captured.console.status("waiting on \(Hostile.title)")
        captured.console.print("done")
        captured.console.flush()
        #expect(captured.stdout == "waiting on \(Hostile.shownTitle)\r\u{1B}[2Kdone\n")
    }

    /// Widths measure the escapes, as the terminal shows them, so the columns after a hostile cell still line up.
    @Test func aTableCellIsEscapedWhenAddedSoItsColumnsStillAlign() {
        var table = Table(header: ["KEY", "DESCRIPTION", "OWNER"])
        table.append(["k", "a\u{1B}b\nc", "ops"])
        table.append(["long-key", "plain", "ops"])
        #expect(table.rows[0] == ["k", #"a\eb\nc"#, "ops"])
        #expect(
            table.lines() == [
                "KEY       DESCRIPTION  OWNER",
                #"k         a\eb\nc      ops"#,
                "long-key  plain        ops",
            ])
    }

    @Test func ordinaryUnicodeAndEmojiArePrintedAsTheyAre() {
        let captured = Captured()
        captured.console.print("Grüße 日本語 שלום 😀 👩‍👩‍👧 e\u{301}\u{A0}©")
        captured.console.flush()
        #expect(captured.stdout == "Grüße 日本語 שלום 😀 👩‍👩‍👧 e\u{301}\u{A0}©\n")
    }
}

/// `lint`, `eval --file` and `verify` quote a file's content; a hostile file reaches the terminal only as escapes.
@Suite("flagctl file commands: control characters", .live)
struct FileControlCharacterTests {
    /// A set whose flag key, rule name, cohort reference and string value carry control characters; JSON escapes
    /// C0 and DEL, and carries C1 as is.
    static let hostileSet = #"""
        {"schema": 1, "set": "s", "version": 1,
         "cohorts": {"beta": {"include": ["u-1"]}},
         "flags": {
           "k": {"type": "bool", "kind": "ops", "default": false, "description": "d\u001b]0;pwned\u0007\nforged",
                 "rules": [{"name": "rule\u001b]0;pwned\u0007\#u{9B}2J", "cohort": "beta", "value": true}]},
           "bad\u001b[2Jkey": {"type": "bool", "kind": "ops", "default": false},
           "m": {"type": "string", "kind": "ops", "default": "x\u001b[31m\nforged",
                 "rules": [{"name": "r", "cohort": "nope\#u{9B}", "value": "y"}]}}}
        """#

    @Test func lintQuotesAHostileFileAsEscapes() throws {
        let directory = try TemporaryDirectory()
        try directory.write("set.json", Data(Self.hostileSet.utf8))
        let run = try Flagctl.run(["lint", "set.json"], in: directory)
        #expect(run.status == 1, "\(run)")
        Hostile.expectSafe(run)
        #expect(
            run.stdoutLines.contains(
                #"flags.bad\e[2Jkey: 'bad\e[2Jkey' is not a valid flag key: 1–128 characters of a-z, 0-9, '.', '_' "#
                    + "or '-', starting with a letter or digit"), "\(run)")
        #expect(run.stdoutLines.contains(#"flags.m.rules[0].cohort: unknown cohort 'nope\u009b'"#), "\(run)")
    }

    @Test func evalFromAFileShowsAHostileVariantAsEscapesInTablesAndJSON() throws {
        let directory = try TemporaryDirectory()
        try directory.write("set.json", Data(Self.hostileSet.utf8))
        let run = try Flagctl.run(["eval", "k", "--file", "set.json", "--unit", "u-1"], in: directory)
        #expect(run.status == 0, "\(run)")
        Hostile.expectSafe(run)
        #expect(run.stdoutLines.last == #"u-1   true   TARGETING_MATCH  rule\e]0;pwned\u0007\u009b2J"#, "\(run)")

        let explained = try Flagctl.run(
            ["eval", "m", "--file", "set.json", "--unit", "u-1", "--explain"], in: directory)
        Hostile.expectSafe(explained)
        #expect(explained.stdout.contains(#""x\u001b[31m\nforged""#), "\(explained)")

        // JSON escapes C0 itself; the C1 character gets JSON's `\u` form, so the line reads back to the exact name.
        let json = try Flagctl.run(["--json", "eval", "k", "--file", "set.json", "--unit", "u-1"], in: directory)
        Hostile.expectSafe(json)
        let object = try #require(try Flagctl.jsonObjects(json).first)
        #expect(object["variant"] as? String == "rule\u{1B}]0;pwned\u{7}\u{9B}2J")
    }

    @Test func verifyQuotesAHostileSignatureFileAsEscapes() throws {
        let directory = try TemporaryDirectory()
        try directory.write("set.json", Data(#"{"set":"s","version":1}"#.utf8))
        try directory.write("set.json.sig", Data("\(Hostile.title)\(Hostile.clear)\n".utf8))
        let key = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
        let run = try Flagctl.run(["verify", "set.json", "--key", key], in: directory)
        #expect(run.status == 1, "\(run)")
        Hostile.expectSafe(run)
        #expect(run.stderrLines.count == 1, "\(run)")
        #expect(run.stderr.contains(#"it starts with '\e]0'"#), "\(run)")
    }
}
