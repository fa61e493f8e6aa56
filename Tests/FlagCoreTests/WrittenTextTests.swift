import Testing

@testable import FlagCore

/// Text people write into flags and cohorts (descriptions, rule names, …) refused with a control character, which
/// the server checks on the items a request writes.
@Suite("Written text")
struct WrittenTextTests {
    @Test func oneLineTextRefusesEveryControlCharacterNamingItAndItsPosition() {
        #expect("ship it".controlCharacterRefusal() == nil)
        #expect(
            "ship\u{1B}[2J".controlCharacterRefusal()
                == "contains the control character U+001B at position 5; write printable text on one line")
        #expect(
            "a\nb".controlCharacterRefusal()?.hasPrefix("contains the control character U+000A at position 2") == true)
        #expect(
            "\tb".controlCharacterRefusal()?.hasPrefix("contains the control character U+0009 at position 1") == true)
        #expect(
            "é\u{9B}2J".controlCharacterRefusal()?.hasPrefix("contains the control character U+009B at position 2")
                == true)
        #expect("\u{7F}".controlCharacterRefusal() != nil)
        #expect("\u{A0}© Grüße 😀 \u{2028}".controlCharacterRefusal() == nil)
    }

    @Test func multilineTextKeepsLineBreaksAndTabsOnly() {
        #expect("Turns the new checkout on.\n\tOwned by growth.\n".controlCharacterRefusal(multiline: true) == nil)
        #expect(
            "two lines\nthen \u{1B}]0;pwned\u{7}".controlCharacterRefusal(multiline: true)
                == "contains the control character U+001B at position 16; write printable text; line breaks and tabs "
                + "may stay")
        #expect("a\r\nb".controlCharacterRefusal(multiline: true)?.contains("U+000D at position 2") == true)
    }

    @Test func aFlagsProblemsNameEachMemberAtItsPath() {
        let split = Rule.Serve.split([
            Variant(name: "control", value: .bool(false), weight: 50),
            Variant(name: "treat\u{1B}", value: .bool(true), weight: 50),
        ])
        let flag = Flag(
            key: "checkout", type: .string, defaultValue: .string("a"), description: "Line one\n\tline two\u{7}",
            owner: "growth\nteam",
            rules: [
                Rule(name: "beta", target: .cohort("beta"), serve: .value(.string("b"))),
                Rule(name: "qa\n", target: .conditions([]), serve: split),
            ],
            values: ["a", "b\u{9B}"])
        #expect(
            flag.writtenTextProblems.map(\.path) == [
                "description", "owner", "values[1]", "rules[1].name", "rules[1].split[1].name",
            ])
        #expect(flag.writtenTextProblems.first?.message.contains("U+0007 at position 19") == true)
        #expect(
            Flag(key: "x", type: .bool, defaultValue: .bool(false), description: "a\nb\tc").writtenTextProblems.isEmpty)
    }

    @Test func aCohortsDescriptionMayHoldLineBreaksButNoOtherControlCharacter() {
        #expect(Cohort(description: "QA devices\n\tand staff").writtenTextProblems.isEmpty)
        #expect(Cohort(description: "QA\u{1B}[31m").writtenTextProblems.map(\.path) == ["description"])
    }
}
