import FlagCore
import Testing

@testable import FlagClient

@Suite struct OverridesParserTests {
    @Test func eachLineForm() {
        let text = """
            # local overrides
            new-checkout=true

            FLAG_MAX_ITEMS = 5
            export checkout-title="Pay now"
              dark.mode=false   
            banner={"title": "Hi", "n": [1, 2]}
            new-checkout=false
            """
        let (overrides, problems) = OverridesParser.parseFile(text, name: "flags.env")
        #expect(problems.isEmpty)
        #expect(overrides["new-checkout"] == RawOverride(text: "false", source: "flags.env:8"))
        #expect(overrides["max-items"] == RawOverride(text: "5", source: "flags.env:4"))
        #expect(overrides["checkout-title"]?.text == "\"Pay now\"")
        #expect(overrides["dark.mode"]?.text == "false")
        #expect(overrides["banner"]?.text == "{\"title\": \"Hi\", \"n\": [1, 2]}")
        #expect(overrides.count == 5)
    }

    @Test func badLinesAreReportedWithTheirLineAndIgnored() {
        let text = "ok=1\nno equals sign\nBad Key=1\n=3\nFLAG_=x\nalso-ok=2\r\n"
        let (overrides, problems) = OverridesParser.parseFile(text, name: "f.env")
        #expect(overrides.keys.sorted() == ["also-ok", "ok"])
        #expect(problems.map(\.source) == ["f.env:2", "f.env:3", "f.env:4", "f.env:5"])
        #expect(problems[0].message == "expected KEY=VALUE, found no '='")
    }

    @Test(arguments: [
        ("FLAG_NEW_CHECKOUT", "new-checkout"), ("FLAG_A", "a"), ("FLAG_V2_UI", "v2-ui"), ("FLAG_X1", "x1"),
    ])
    func environmentNames(_ variable: String, _ key: String) {
        #expect(OverridesParser.flagKey(forVariable: variable) == key)
    }

    @Test func environmentTakesOnlyFlagVariables() {
        let (overrides, problems) = OverridesParser.parseEnvironment([
            "FLAG_NEW_CHECKOUT": " true ", "FLAGS_OVERRIDE_FILE": "/tmp/x", "HOME": "/root", "FLAG_%": "1",
        ])
        #expect(overrides == ["new-checkout": RawOverride(text: "true", source: "environment FLAG_NEW_CHECKOUT")])
        #expect(problems.map(\.source) == ["environment FLAG_%"])
    }

    @Test func valuesAreTypedByTheFlag() throws {
        #expect(try OverridesParser.value("TRUE", as: .bool).get() == .bool(true))
        #expect(try OverridesParser.value("0", as: .bool).get() == .bool(false))
        #expect(try OverridesParser.value("-42", as: .int).get() == .int(-42))
        #expect(try OverridesParser.value("9223372036854775807", as: .int).get() == .int(Int64.max))
        #expect(try OverridesParser.value("2.5", as: .double).get() == .double(2.5))
        #expect(try OverridesParser.value("\"Pay now\"", as: .string).get() == .string("Pay now"))
        #expect(try OverridesParser.value("plain", as: .string).get() == .string("plain"))
        #expect(
            try OverridesParser.value("{\"a\":[1,true]}", as: .json).get()
                == .object(["a": .array([.int(1), .bool(true)])]))
    }

    @Test(arguments: [
        ("maybe", FlagType.bool), ("1.5", .int), ("9223372036854775808", .int), ("nan", .double),
        ("inf", .double), ("{broken", .json),
    ])
    func badValuesFail(_ text: String, _ type: FlagType) {
        if case .success = OverridesParser.value(text, as: type) { Issue.record("'\(text)' read as \(type)") }
    }
}
