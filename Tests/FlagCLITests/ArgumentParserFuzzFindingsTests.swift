import FlagCLI
import Testing

/// Command lines found by `Fuzz/ArgumentParserFuzz.swift`, minimized.
@Suite struct ArgumentParserFuzzFindingsTests {
    /// The `=` of `--name=value` was searched Character by Character, and a value starting with a combining mark
    /// joins the `=` into one Character: the `=` was missed and the option's name taken to run on.
    @Test func aValueStartingWithACombiningMarkStaysTheValue() throws {
        let parser = ArgumentParser(commands: FlagCTL.commands)
        let invocation = try parser.parse(["eval", "k", "--unit=\u{301}u", "--attr=\u{7EE}a=b"], environment: [:])
        guard case .run(_, let arguments, _) = invocation else {
            Issue.record("expected a run, got \(invocation)")
            return
        }
        #expect(arguments.value("unit") == "\u{301}u")
        #expect(arguments.values("attr") == ["\u{7EE}a=b"])
    }
}

/// `-h` right after an option that takes a value was taken as the value, while `--help` there asked for help.
@Suite struct ArgumentParserHelpFuzzFindingsTests {
    @Test(arguments: ["-h", "--help"])
    func helpAfterAValuedOptionAsksForHelp(_ help: String) throws {
        let parser = ArgumentParser(commands: FlagCTL.commands)
        let invocation = try parser.parse(["rollout", "cut", "--steps", help, "1h"], environment: [:])
        guard case .help(let configuration) = invocation else {
            Issue.record("expected help, got \(invocation)")
            return
        }
        #expect(configuration?.name == "rollout")
    }
}
