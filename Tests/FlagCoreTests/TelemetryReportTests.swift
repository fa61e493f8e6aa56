import Foundation
import Testing

@testable import FlagCore

/// The telemetry report's wire format (docs/telemetry.md): what `encoded()` writes, and how `decode` refuses what a
/// holder of a public SDK key may send, naming the member and the bound.
@Suite("Telemetry report wire format")
struct TelemetryReportTests {
    static let sdk = #""sdk":{"name":"FlagClient","version":"2.0.0"}"#
    static let capabilities = #""capabilities":{"schema":1,"operators":["eq","in"]}"#
    static let required = #""instance":"in_1",\#(sdk),\#(capabilities)"#

    /// A report with the required members and `extra` (members, comma-separated) after them.
    static func body(_ extra: String = "") -> [UInt8] {
        Array("{\(required)\(extra.isEmpty ? "" : ",")\(extra)}".utf8)
    }

    /// The refusal of `bytes`; records an issue when they decode.
    static func refusal(_ bytes: [UInt8], limits: TelemetryReport.Limits = .init()) -> WireFormatError? {
        #expect(throws: WireFormatError.self) { try TelemetryReport.decode(bytes, limits: limits) }
    }

    static let full = TelemetryReport(
        instance: "in_3q2x", sdk: .init(name: "FlagClient", version: "2.0.0"),
        app: .init(name: "Shop", version: "5.3.0"), version: 41, appliedAt: Fixtures.date("2026-12-02T10:00:00Z"),
        capabilities: ClientCapabilities(schema: 1, operators: ["semver_gte", "eq", "in"]),
        counts: [
            "new-checkout": ["on": ["TARGETING_MATCH": 12, "SPLIT": 3], "": ["ERROR": 1]],
            "beta": ["off": ["DEFAULT": 1_000_000_000_000]],
        ])

    // MARK: - Encoding and reading back

    /// The bytes a privacy review reads: exactly the documented members, in their order, names sorted by UTF-8.
    @Test func aFullReportWritesTheDocumentedMembersAndReadsBackEqual() throws {
        let bytes = Self.full.encoded()
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"instance":"in_3q2x","sdk":{"name":"FlagClient","version":"2.0.0"},"#
                + #""app":{"name":"Shop","version":"5.3.0"},"version":41,"appliedAt":"2026-12-02T10:00:00Z","#
                + #""capabilities":{"schema":1,"operators":["eq","in","semver_gte"]},"#
                + #""counts":{"beta":{"off":{"DEFAULT":1000000000000}},"#
                + #""new-checkout":{"":{"ERROR":1},"on":{"SPLIT":3,"TARGETING_MATCH":12}}}}"#)
        #expect(try TelemetryReport.decode(bytes) == Self.full)
    }

    @Test func aReportWithoutTheOptionalMembersLeavesThemOut() throws {
        let report = TelemetryReport(
            instance: "in_1", sdk: .init(name: "FlagClient", version: "2.0.0"),
            capabilities: ClientCapabilities(schema: 1, operators: []))
        let bytes = report.encoded()
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"instance":"in_1","sdk":{"name":"FlagClient","version":"2.0.0"},"#
                + #""capabilities":{"schema":1,"operators":[]},"counts":{}}"#)
        let read = try TelemetryReport.decode(bytes)
        #expect(read == report)
        #expect(read.app == nil && read.version == nil && read.appliedAt == nil)
    }

    @Test func thisBuildsCapabilitiesAreSchemaOneAndEveryKnownOperator() throws {
        #expect(ClientCapabilities.current.schema == FlagSet.currentSchema)
        #expect(ClientCapabilities.current.operators.contains("semver_gte"))
        #expect(ClientCapabilities.current.operators.count == Operator.known.count)
        let report = TelemetryReport(instance: "in_1", sdk: .init(name: "FlagClient", version: "2.0.0"))
        #expect(try TelemetryReport.decode(report.encoded()).capabilities == .current)
    }

    @Test func namesAndStringsSurviveEscapingAndNonASCII() throws {
        let report = TelemetryReport(
            instance: "in_\"\\/", sdk: .init(name: "Flag Client", version: "2.0.0-β"),
            app: .init(name: "Shöp\u{A0}😀", version: "שלום"),
            capabilities: ClientCapabilities(schema: 1, operators: ["eq"]),
            counts: ["flag.with-dots": ["é": ["R": 0]], "😀": [:]])
        #expect(try TelemetryReport.decode(report.encoded()) == report)
    }

    /// The device's clock is shown, never judged; written as whole seconds, so read as the whole second too, or a
    /// report would not equal itself written and read back.
    @Test func appliedAtIsReadAsTheWholeSecondItWillBeWrittenAs() throws {
        let report = try TelemetryReport.decode(Self.body(#""appliedAt":"2026-12-02T11:00:00.75+01:00""#))
        #expect(report.appliedAt == Fixtures.date("2026-12-02T10:00:00Z"))
        #expect(try TelemetryReport.decode(report.encoded()) == report)
    }

    @Test func unknownMembersAreIgnoredAtEveryLevel() throws {
        let bytes = Array(
            #"""
            {"future":{"x":[1,{"y":null}]},"instance":"in_1","sdk":{"name":"FlagClient","version":"2.0.0","build":7},
             "app":{"name":"Shop","version":"5.3.0","bundle":"com.example"},
             "capabilities":{"schema":1,"operators":["eq"],"features":["x"]},"counts":{},"note":"hi"}
            """#.utf8)
        let report = try TelemetryReport.decode(bytes)
        #expect(report.instance == "in_1")
        #expect(report.app == .init(name: "Shop", version: "5.3.0"))
        #expect(report.capabilities == ClientCapabilities(schema: 1, operators: ["eq"]))
    }

    @Test func theExampleInTheDocumentationReads() throws {
        let bytes = Array(
            #"""
            {"instance":"in_4f","sdk":{"name":"FlagClient","version":"2.0.0"},"app":{"name":"Shop","version":"5.3.0"},
             "version":41,"appliedAt":"2026-12-02T10:00:00Z","capabilities":{"schema":1,"operators":["eq","in"]},
             "counts":{"new-checkout":{"on":{"TARGETING_MATCH":12},"":{"ERROR":1}}}}
            """#.utf8)
        let report = try TelemetryReport.decode(bytes)
        #expect(report.version == 41)
        #expect(report.counts == ["new-checkout": ["on": ["TARGETING_MATCH": 12], "": ["ERROR": 1]]])
    }

    // MARK: - Known values of enum flags

    /// The member sits between `capabilities` and `counts`, flags sorted, values in the order the app declares them.
    @Test func knownValuesAreWrittenAfterTheCapabilitiesAndReadBackEqual() throws {
        var report = Self.full
        report.enums = [
            "checkout-theme": .init(values: ["blue", "green", "orange"], defaultValue: "blue"),
            "banner-size": .init(values: ["small", "large"]),
        ]
        let bytes = report.encoded()
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"instance":"in_3q2x","sdk":{"name":"FlagClient","version":"2.0.0"},"#
                + #""app":{"name":"Shop","version":"5.3.0"},"version":41,"appliedAt":"2026-12-02T10:00:00Z","#
                + #""capabilities":{"schema":1,"operators":["eq","in","semver_gte"]},"#
                + #""enums":{"banner-size":{"values":["small","large"]},"#
                + #""checkout-theme":{"values":["blue","green","orange"],"default":"blue"}},"#
                + #""counts":{"beta":{"off":{"DEFAULT":1000000000000}},"#
                + #""new-checkout":{"":{"ERROR":1},"on":{"SPLIT":3,"TARGETING_MATCH":12}}}}"#)
        #expect(try TelemetryReport.decode(bytes) == report)
    }

    @Test func theDocumentedKnownValuesRead() throws {
        let report = try TelemetryReport.decode(
            Self.body(#""enums":{"checkout-theme":{"values":["blue","green"],"default":"blue"}}"#))
        #expect(report.enums == ["checkout-theme": .init(values: ["blue", "green"], defaultValue: "blue")])
    }

    /// 64 values of 64 characters (counted as an enum flag's values are, in characters) for each of 200 flags.
    @Test func knownValuesAtTheirBoundsAreAccepted() throws {
        let longest = String(repeating: "é", count: 64)
        let values = (0..<63).map { #""v\#($0)""# }.joined(separator: ",") + #","\#(longest)""#
        let flags = (0..<200).map { #""f\#($0)":{"values":[\#(values)],"default":"\#(longest)"}"# }
        var limits = TelemetryReport.Limits()
        limits.maxBytes = .max  // 200 × 64 values do not fit 256 KiB; the other bounds are the ones under test
        let report = try TelemetryReport.decode(
            Self.body(#""enums":{\#(flags.joined(separator: ","))}"#), limits: limits)
        #expect(report.enums.count == 200)
        #expect(report.enums["f7"]?.values.count == 64)
        #expect(report.enums["f7"]?.defaultValue == longest)
    }

    /// Each bound of `enums` is named in its refusal, at the member over it.
    @Test(arguments: [
        (
            #""enums":{\#((0..<201).map { #""f\#($0)":{"values":["a"]}"# }.joined(separator: ","))}"#, "enums",
            "has more than 200 flags"
        ),
        (
            #""enums":{"f":{"values":[\#((0..<65).map { #""v\#($0)""# }.joined(separator: ","))]}}"#,
            "enums.f.values", "has more than 64 values"
        ),
        (
            #""enums":{"f":{"values":["\#(String(repeating: "x", count: 65))"]}}"#, "enums.f.values[0]",
            "must have 1 to 64 characters, found 65"
        ),
        (#""enums":{"f":{"values":["a",""]}}"#, "enums.f.values[1]", "must have 1 to 64 characters, found 0"),
        (
            #""enums":{"f":{"values":["a"],"default":"\#(String(repeating: "x", count: 65))"}}"#, "enums.f.default",
            "must have 1 to 64 characters, found 65"
        ),
        (
            #""enums":{"f":{"values":["blue","green","blue"]}}"#, "enums.f.values[2]",
            #"is "blue" again; list each value once"#
        ),
        (#""enums":{"f":{"values":[]}}"#, "enums.f.values", "must list at least one value"),
        (#""enums":{"f":{"default":"a"}}"#, "enums.f.values", "is missing"),
        (#""enums":{"":{"values":["a"]}}"#, "enums", "has an empty flag key"),
        (#""enums":[]"#, "enums", "must be an object, found an array"),
        (#""enums":{"f":["a"]}"#, "enums.f", #"must be an object with "values", found an array"#),
        (#""enums":{"f":{"values":"a"}}"#, "enums.f.values", "must be an array of strings, found a string"),
        (#""enums":{"f":{"values":[1]}}"#, "enums.f.values[0]", "must be a string, found a number"),
        (#""enums":{"f":{"values":["a"],"default":1}}"#, "enums.f.default", "must be a string, found a number"),
        (
            #""enums":{"f":{"values":["a\u001b[2J"]}}"#, "enums.f.values[0]",
            "contains the control character U+001B at position 2; send printable text"
        ),
        (#""enums":{"f":{"values":["a"]},"f":{"values":["b"]}}"#, "enums.f", "is given twice"),
    ])
    func knownValuesOverABoundOrOfTheWrongShapeAreRefused(_ members: String, _ field: String, _ message: String) {
        let error = Self.refusal(Self.body(members))
        #expect(error == WireFormatError(format: "telemetry report", field: field, message: message))
    }

    @Test func theDocumentedMessageForTooManyValues() {
        let values = (0..<65).map { #""v\#($0)""# }.joined(separator: ",")
        let error = Self.refusal(Self.body(#""enums":{"checkout-theme":{"values":[\#(values)]}}"#))
        #expect(
            error?.description == #"the telemetry report's "enums.checkout-theme.values" has more than 64 values"#)
    }

    // MARK: - Missing members

    @Test(arguments: [
        (#"{\#(sdk),\#(capabilities)}"#, "instance", "is missing; send the id from the stream's answer"),
        (#"{"instance":"in_1",\#(capabilities)}"#, "sdk", "is missing"),
        (#"{"instance":"in_1",\#(sdk)}"#, "capabilities", "is missing"),
        (#"{"instance":"in_1","sdk":{"version":"2"},\#(capabilities)}"#, "sdk.name", "is missing"),
        (#"{"instance":"in_1","sdk":{"name":"F"},\#(capabilities)}"#, "sdk.version", "is missing"),
        (#"{\#(required),"app":{"version":"5"}}"#, "app.name", "is missing"),
        (#"{\#(required),"app":{"name":"Shop"}}"#, "app.version", "is missing"),
        (#"{"instance":"in_1",\#(sdk),"capabilities":{"operators":[]}}"#, "capabilities.schema", "is missing"),
        (#"{"instance":"in_1",\#(sdk),"capabilities":{"schema":1}}"#, "capabilities.operators", "is missing"),
    ])
    func everyRequiredMemberMissingIsNamed(_ json: String, _ field: String, _ message: String) {
        let error = Self.refusal(Array(json.utf8))
        #expect(error == WireFormatError(format: "telemetry report", field: field, message: message))
    }

    @Test func theOptionalMembersMayBeLeftOut() throws {
        let report = try TelemetryReport.decode(Self.body())
        #expect(report.app == nil && report.version == nil && report.appliedAt == nil && report.counts.isEmpty)
    }

    /// `null` is absence, as the admin API writes `"app": null`: a client copying that shape is not refused.
    @Test func theOptionalMembersMayBeNull() throws {
        let report = try TelemetryReport.decode(Self.body(#""app":null,"version":null,"appliedAt":null"#))
        #expect(try report == TelemetryReport.decode(Self.body()))
        let schema = Self.refusal(
            Array(#"{"instance":"in_1",\#(Self.sdk),"capabilities":{"schema":null,"operators":[]}}"#.utf8))
        #expect(schema?.field == "capabilities.schema")
    }

    // MARK: - Counts and integers

    /// `counts.f.on.R` with each value; every refusal names the member and the bound the docs give.
    @Test(arguments: [
        ("-1", "must be from 0 to 1000000000000, found -1"),
        ("1000000000001", "must be from 0 to 1000000000000, found 1000000000001"),
        ("9223372036854775807", "must be from 0 to 1000000000000, found 9223372036854775807"),
        ("-9223372036854775808", "must be from 0 to 1000000000000, found -9223372036854775808"),
        ("99999999999999999999", "must be an integer, from 0 to 1000000000000, found 1e+20"),
        ("1e400", "must be an integer, from 0 to 1000000000000: the number is out of range"),
        ("-1e400", "must be an integer, from 0 to 1000000000000: the number is out of range"),
        ("1.5", "must be an integer, from 0 to 1000000000000, found 1.5"),
        ("1e3", "must be an integer, from 0 to 1000000000000, found 1000.0"),
        ("12.0", "must be an integer, from 0 to 1000000000000, found 12.0"),
        ("\"12\"", "must be an integer, from 0 to 1000000000000, found a string"),
        ("null", "must be an integer, from 0 to 1000000000000, found null"),
        ("true", "must be an integer, from 0 to 1000000000000, found a boolean"),
        ("[1]", "must be an integer, from 0 to 1000000000000, found an array"),
        ("{}", "must be an integer, from 0 to 1000000000000, found an object"),
        ("01", "must be an integer, from 0 to 1000000000000: a number must not start with a leading zero"),
    ])
    func aCountOutsideItsBoundIsRefusedWithTheBound(_ value: String, _ message: String) {
        let error = Self.refusal(Self.body(#""counts":{"f":{"on":{"R":\#(value)}}}"#))
        #expect(error == WireFormatError(format: "telemetry report", field: "counts.f.on.R", message: message))
    }

    @Test func countsAtTheirBoundsAreAccepted() throws {
        let report = try TelemetryReport.decode(Self.body(#""counts":{"f":{"on":{"A":0,"B":1000000000000}}}"#))
        #expect(report.counts == ["f": ["on": ["A": 0, "B": 1_000_000_000_000]]])
    }

    @Test func theDocumentedMessageForANegativeCount() {
        let error = Self.refusal(Self.body(#""counts":{"checkout":{"on":{"TARGETING_MATCH":-1}}}"#))
        #expect(
            error?.description
                == #"the telemetry report's "counts.checkout.on.TARGETING_MATCH" must be from 0 to 1000000000000, "#
                + "found -1")
    }

    @Test(arguments: [
        ("0", "must be 1 or more, found 0"),
        ("-5", "must be 1 or more, found -5"),
        ("1.5", "must be an integer, 1 or more, found 1.5"),
        ("1e400", "must be an integer, 1 or more: the number is out of range"),
        ("\"41\"", "must be an integer, 1 or more, found a string"),
    ])
    func theVersionAndTheSchemaAreIntegersOfOneOrMore(_ value: String, _ message: String) {
        let version = Self.refusal(Self.body(#""version":\#(value)"#))
        #expect(version == WireFormatError(format: "telemetry report", field: "version", message: message))
        let schema = Self.refusal(
            Array(#"{"instance":"in_1",\#(Self.sdk),"capabilities":{"schema":\#(value),"operators":[]}}"#.utf8))
        #expect(schema == WireFormatError(format: "telemetry report", field: "capabilities.schema", message: message))
    }

    // MARK: - Wrong types

    @Test(arguments: [
        (#"{"instance":5,\#(sdk),\#(capabilities)}"#, "instance", "must be a string, found a number"),
        (#"{"instance":null,\#(sdk),\#(capabilities)}"#, "instance", "must be a string, found null"),
        (
            #"{"instance":"in_1","sdk":"FlagClient 2",\#(capabilities)}"#, "sdk",
            #"must be an object with "name" and "version", found a string"#
        ),
        (
            #"{"instance":"in_1","sdk":{"name":2,"version":"2"},\#(capabilities)}"#, "sdk.name",
            "must be a string, found a number"
        ),
        (
            #"{"instance":"in_1","sdk":{"name":"F","version":[2]},\#(capabilities)}"#, "sdk.version",
            "must be a string, found an array"
        ),
        (#"{\#(required),"app":[]}"#, "app", #"must be an object with "name" and "version", found an array"#),
        (#"{\#(required),"appliedAt":1764669600}"#, "appliedAt", "must be a string, found a number"),
        (
            #"{\#(required),"appliedAt":"yesterday"}"#, "appliedAt",
            "must be an RFC 3339 time such as 2026-12-02T10:00:00Z"
        ),
        (
            #"{"instance":"in_1",\#(sdk),"capabilities":[1]}"#, "capabilities",
            #"must be an object with "schema" and "operators", found an array"#
        ),
        (
            #"{"instance":"in_1",\#(sdk),"capabilities":{"schema":1,"operators":"eq"}}"#, "capabilities.operators",
            "must be an array of strings, found a string"
        ),
        (
            #"{"instance":"in_1",\#(sdk),"capabilities":{"schema":1,"operators":["eq",3]}}"#,
            "capabilities.operators[1]", "must be a string, found a number"
        ),
        (#"{\#(required),"counts":[]}"#, "counts", "must be an object, found an array"),
        (#"{\#(required),"counts":{"":{"on":{"R":1}}}}"#, "counts", "has an empty flag key"),
        (#"{\#(required),"counts":{"f":"on"}}"#, "counts.f", "must be an object, found a string"),
        (#"{\#(required),"counts":{"f":{"on":12}}}"#, "counts.f.on", "must be an object, found a number"),
    ])
    func aMemberOfTheWrongTypeIsNamed(_ json: String, _ field: String, _ message: String) {
        let error = Self.refusal(Array(json.utf8))
        #expect(error == WireFormatError(format: "telemetry report", field: field, message: message))
    }

    @Test(arguments: [
        ("[]", "must be a JSON object, found an array"),
        ("\"report\"", "must be a JSON object, found a string"),
        ("", "is not valid JSON: line 1, column 1: unexpected end of input, expected a value"),
        (#"{"instance":"in_1""#, "is not valid JSON: line 1, column 19: unexpected end of input inside an object"),
        ("{} {}", "is not valid JSON: line 1, column 4: unexpected '{' after the end of the document"),
    ])
    func aBodyThatIsNotAnObjectIsRefusedAsAWhole(_ json: String, _ message: String) {
        let error = Self.refusal(Array(json.utf8))
        #expect(error == WireFormatError(format: "telemetry report", field: nil, message: message))
    }

    // MARK: - Strings and names

    @Test func stringsMayHaveOneTo256BytesCountedInUTF8() throws {
        let longest = String(repeating: "a", count: 256)
        let report = try TelemetryReport.decode(Self.body(#""app":{"name":"\#(longest)","version":"1"}"#))
        #expect(report.app?.name == longest)
    }

    @Test(arguments: [
        (#"{"instance":"\#(String(repeating: "a", count: 257))",\#(sdk),\#(capabilities)}"#, "instance", 257),
        (#"{"instance":"",\#(sdk),\#(capabilities)}"#, "instance", 0),
        // 129 two-byte characters: 258 bytes, though only 129 characters.
        (#"{\#(required),"app":{"name":"\#(String(repeating: "é", count: 129))","version":"1"}}"#, "app.name", 258),
        (#"{\#(required),"app":{"name":"Shop","version":""}}"#, "app.version", 0),
        (
            #"{"instance":"in_1",\#(sdk),"capabilities":{"schema":1,"operators":"#
                + #"["eq","\#(String(repeating: "x", count: 300))"]}}"#,
            "capabilities.operators[1]", 300
        ),
    ])
    func aStringOutsideOneTo256BytesIsRefused(_ json: String, _ field: String, _ bytes: Int) {
        let error = Self.refusal(Array(json.utf8))
        let message = "must have 1 to 256 bytes, found \(bytes)"
        #expect(error == WireFormatError(format: "telemetry report", field: field, message: message))
    }

    @Test(arguments: [
        (#""counts":{"\#(String(repeating: "f", count: 257))":{}}"#, "counts"),
        (#""counts":{"f":{"\#(String(repeating: "v", count: 257))":{}}}"#, "counts.f"),
        (#""counts":{"f":{"on":{"\#(String(repeating: "R", count: 257))":1}}}"#, "counts.f.on"),
    ])
    func aNameInCountsOver256BytesIsRefusedAtItsObject(_ members: String, _ field: String) {
        let error = Self.refusal(Self.body(members))
        #expect(error?.field == field)
        #expect(error?.message.hasPrefix("has a name of 25") == true)
        #expect(error?.message.hasSuffix("bytes, over 256") == true)
    }

    @Test func theVariantOfAFlagWithoutVariantsIsTheEmptyName() throws {
        let report = try TelemetryReport.decode(Self.body(#""counts":{"f":{"":{"STATIC":3}}}"#))
        #expect(report.counts == ["f": ["": ["STATIC": 3]]])
    }

    // MARK: - Control characters

    /// A report's strings reach admins' terminals and the dashboard: a control character in any of them is refused,
    /// naming the member and the character, whether JSON escaped it (C0 must be), or sent it raw (DEL and C1 may be).
    @Test(arguments: [
        (#"{"instance":"in_\u001b]0;x",\#(sdk),\#(capabilities)}"#, "instance", "U+001B", 4),
        (#"{"instance":"in_1","sdk":{"name":"Flag\nClient","version":"2"},\#(capabilities)}"#, "sdk.name", "U+000A", 5),
        (#"{"instance":"in_1","sdk":{"name":"F","version":"2\u0000"},\#(capabilities)}"#, "sdk.version", "U+0000", 2),
        (#"{\#(required),"app":{"name":"Sh\u001bop","version":"5"}}"#, "app.name", "U+001B", 3),
        (#"{\#(required),"app":{"name":"Shop","version":"5\#u{9B}2J"}}"#, "app.version", "U+009B", 2),
        (#"{\#(required),"app":{"name":"\t","version":"5"}}"#, "app.name", "U+0009", 1),
        (
            #"{"instance":"in_1",\#(sdk),"capabilities":{"schema":1,"operators":["eq","in\#u{7F}"]}}"#,
            "capabilities.operators[1]", "U+007F", 3
        ),
    ])
    func aStringWithAControlCharacterIsRefusedNamingTheMember(
        _ json: String, _ field: String, _ character: String, _ position: Int
    ) {
        let error = Self.refusal(Array(json.utf8))
        let message = "contains the control character \(character) at position \(position); send printable text"
        #expect(error == WireFormatError(format: "telemetry report", field: field, message: message))
    }

    /// A name with one is refused at the object it names a member of, as a name over 256 bytes is: the path never
    /// carries the character itself. Unknown members too: the reader names them in its errors.
    @Test(arguments: [
        (#""counts":{"k\u001b[2J":{}}"#, "counts", "U+001B", 2),
        (#""counts":{"k":{"beta\#u{9B}":{}}}"#, "counts.k", "U+009B", 5),
        (#""counts":{"k":{"on":{"\u0007":1}}}"#, "counts.k.on", "U+0007", 1),
        (#""app":{"name":"Shop","version":"5","x\ry":1}"#, "app", "U+000D", 2),
    ])
    func aMemberNameWithAControlCharacterIsRefusedAtItsObject(
        _ members: String, _ field: String, _ character: String, _ position: Int
    ) {
        let error = Self.refusal(Self.body(members))
        let message = "has a name with the control character \(character) at position \(position); send printable text"
        #expect(error == WireFormatError(format: "telemetry report", field: field, message: message))
    }

    @Test func anUnknownMemberOfTheReportWithAControlCharacterInItsNameIsRefusedAsAWhole() {
        let error = Self.refusal(Self.body(#""fu\u0085ture":1"#))
        #expect(
            error?.description
                == "the telemetry report has a name with the control character U+0085 at position 3; send printable text"
        )
    }

    @Test func theDocumentedMessageForAControlCharacter() {
        let error = Self.refusal(Self.body(#""app":{"name":"Sh\u001bop","version":"5.3.0"}"#))
        #expect(
            error?.description
                == #"the telemetry report's "app.name" contains the control character U+001B at position 3; "#
                + "send printable text")
    }

    /// What a report's writer puts in, its reader refuses: a client must leave control characters out (FlagClient
    /// escapes them, see `TelemetryBacklog`).
    @Test func aReportEncodedWithAControlCharacterDoesNotReadBack() {
        let report = TelemetryReport(
            instance: "in_1", sdk: .init(name: "FlagClient", version: "2.0.0"),
            counts: ["k": ["beta\u{1B}]0;pwned\u{7}": ["TARGETING_MATCH": 1]]])
        #expect(Self.refusal(report.encoded())?.field == "counts.k")
    }

    // MARK: - Too many

    /// `count` members `"<prefix><i>":<value>` joined by commas.
    static func members(_ count: Int, _ prefix: String, _ value: String) -> String {
        (0..<count).map { #""\#(prefix)\#($0)":\#(value)"# }.joined(separator: ",")
    }

    @Test(arguments: [
        (2_000, true), (2_001, false),
    ])
    func atMost2000Flags(_ count: Int, _ accepted: Bool) throws {
        let bytes = Self.body(#""counts":{\#(Self.members(count, "f", "{}"))}"#)
        if accepted {
            #expect(try TelemetryReport.decode(bytes).counts.count == count)
        } else {
            #expect(Self.refusal(bytes)?.description == #"the telemetry report's "counts" has more than 2000 flags"#)
        }
    }

    @Test func atMost64VariantsPerFlag() throws {
        let ok = Self.body(#""counts":{"f":{\#(Self.members(64, "v", "{}"))}}"#)
        #expect(try TelemetryReport.decode(ok).counts["f"]?.count == 64)
        let error = Self.refusal(Self.body(#""counts":{"f":{\#(Self.members(65, "v", "{}"))}}"#))
        #expect(error?.description == #"the telemetry report's "counts.f" has more than 64 variants"#)
    }

    @Test func atMost16ReasonsPerVariant() throws {
        let ok = Self.body(#""counts":{"f":{"on":{\#(Self.members(16, "R", "1"))}}}"#)
        #expect(try TelemetryReport.decode(ok).counts["f"]?["on"]?.count == 16)
        let error = Self.refusal(Self.body(#""counts":{"f":{"on":{\#(Self.members(17, "R", "1"))}}}"#))
        #expect(error?.description == #"the telemetry report's "counts.f.on" has more than 16 reasons"#)
    }

    @Test func atMost256Operators() throws {
        func body(_ count: Int) -> [UInt8] {
            let names = (0..<count).map { #""op\#($0)""# }.joined(separator: ",")
            return Array(#"{"instance":"in_1",\#(Self.sdk),"capabilities":{"schema":1,"operators":[\#(names)]}}"#.utf8)
        }
        #expect(try TelemetryReport.decode(body(256)).capabilities.operators.count == 256)
        let error = Self.refusal(body(257))
        #expect(error?.description == #"the telemetry report's "capabilities.operators" has more than 256 operators"#)
    }

    @Test func theBodyMayHave256KiB() throws {
        let limit = 256 * 1024
        var bytes = Self.body()
        bytes.insert(contentsOf: repeatElement(UInt8(ascii: " "), count: limit - bytes.count), at: 1)
        #expect(bytes.count == limit)
        #expect(try TelemetryReport.decode(bytes).instance == "in_1")
        bytes.insert(UInt8(ascii: " "), at: 1)
        let error = Self.refusal(bytes)
        #expect(error?.description == "the telemetry report is 262145 bytes, over the limit of 262144")
    }

    // MARK: - A million flag names

    /// `{"instance":…,"counts":{"f0":{},"f1":{},…` with `count` flags and no end: a reader that went through all of
    /// them would fail on the missing end, so a refusal for a limit shows that it stopped at the limit.
    static func unterminated(flags count: Int) -> [UInt8] {
        var bytes = Self.body()
        bytes.removeLast()
        bytes.append(contentsOf: #","counts":{"#.utf8)
        bytes.reserveCapacity(bytes.count + count * 14)
        var digits: [UInt8] = []
        for index in 0..<count {
            bytes.append(contentsOf: #""f"#.utf8)
            digits.removeAll(keepingCapacity: true)
            var rest = index
            repeat {
                digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: digits.reversed())
            bytes.append(contentsOf: #"":{},"#.utf8)
        }
        return bytes
    }

    @Test func aMillionFlagNamesAreRefusedForTheirSizeBeforeAnyIsRead() {
        let bytes = Self.unterminated(flags: 1_000_000)
        let error = Self.refusal(bytes)
        #expect(
            error
                == WireFormatError(
                    format: "telemetry report", field: nil,
                    message: "is \(bytes.count) bytes, over the limit of 262144"))
    }

    @Test func withoutTheByteLimitAMillionFlagNamesStopAtTheFlagLimit() {
        var limits = TelemetryReport.Limits()
        limits.maxBytes = .max
        let error = Self.refusal(Self.unterminated(flags: 1_000_000), limits: limits)
        #expect(error?.description == #"the telemetry report's "counts" has more than 2000 flags"#)
    }

    // MARK: - Deep nesting

    /// `depth` arrays nested in one another.
    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    /// The reader refuses nesting past `JSONReader.maximumDepth`, counting the report itself as the first level;
    /// the refusal names the member it is in.
    @Test(arguments: [
        (#""future":\#(nested(100_000))"#, "future"),
        (#""future":{"a":\#(nested(100_000))}"#, "future"),
        (#""app":{"name":"Shop","version":"1","x":\#(nested(100_000))}"#, "app.x"),
    ])
    func deepNestingIsRefusedAtTheReadersDepthLimitNamingItsMember(_ members: String, _ field: String) {
        let error = Self.refusal(Self.body(members))
        #expect(error?.field == field)
        #expect(error?.message.hasPrefix("is not valid JSON: line 1, column ") == true)
        #expect(error?.message.hasSuffix("nesting deeper than 512 levels") == true)
    }

    @Test func theDeepestNestingTheReaderAcceptsIsIgnoredInAnUnknownMember() throws {
        #expect(try TelemetryReport.decode(Self.body(#""future":\#(Self.nested(511))"#)).instance == "in_1")
        #expect(Self.refusal(Self.body(#""future":\#(Self.nested(512))"#))?.field == "future")
    }

    /// `counts` has three levels of objects and then numbers, so nesting there fails at the first level that is not
    /// the expected kind, without descending.
    @Test(arguments: [
        (#""counts":\#(nested(100_000))"#, "counts", "must be an object, found an array"),
        (#""counts":{"f":\#(nested(100_000))}"#, "counts.f", "must be an object, found an array"),
        (
            #""counts":{"f":{"on":{"R":\#(nested(100_000))}}}"#, "counts.f.on.R",
            "must be an integer, from 0 to 1000000000000, found an array"
        ),
        (#""version":\#(nested(100_000))"#, "version", "must be an integer, 1 or more, found an array"),
    ])
    func deepNestingWhereAKnownMemberIsExpectedFailsOnItsType(_ members: String, _ field: String, _ message: String) {
        let error = Self.refusal(Self.body(members))
        #expect(error == WireFormatError(format: "telemetry report", field: field, message: message))
    }

    /// The deepest document the reader accepts is read on a thread with a quarter of the stack the server's loop
    /// threads get (the system's default, 8 MiB on Linux), in the debug build and under Thread Sanitizer, which
    /// need the most: a deeper limit in JSONReader, or much larger frames on its path, would show here first.
    @Test func theDeepestAcceptedNestingFitsASmallThreadStack() throws {
        let bytes = Self.body(#""future":{"a":\#(Self.nested(510))}"#)
        let outcome = Outcome()
        let thread = Thread {
            outcome.set(Result { () throws(WireFormatError) in try TelemetryReport.decode(bytes).instance })
        }
        thread.stackSize = 2 << 20
        thread.start()
        #expect(try outcome.wait().get() == "in_1")
    }

    /// What the small-stack thread decoded, handed to the test.
    final class Outcome: @unchecked Sendable {  // `lock` guards `result`; `done` orders the set before the wait
        private let lock = NSLock()
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<String, WireFormatError>?

        func set(_ result: Result<String, WireFormatError>) {
            lock.withLock { self.result = result }
            done.signal()
        }

        func wait() -> Result<String, WireFormatError> {
            done.wait()
            return lock.withLock { result! }
        }
    }

    // MARK: - Names given twice

    @Test(arguments: [
        (#"{"instance":"in_1","instance":"in_2",\#(sdk),\#(capabilities)}"#, "instance"),
        (#"{\#(required),"sdk":{"name":"Other","version":"1"}}"#, "sdk"),
        (#"{"instance":"in_1","sdk":{"name":"F","name":"G","version":"1"},\#(capabilities)}"#, "sdk.name"),
        (
            #"{"instance":"in_1",\#(sdk),"capabilities":{"schema":1,"schema":2,"operators":[]}}"#,
            "capabilities.schema"
        ),
        (#"{\#(required),"version":4,"version":5}"#, "version"),
        (#"{\#(required),"counts":{"f":{}},"counts":{"g":{}}}"#, "counts"),
        (#"{\#(required),"counts":{"f":{"on":{"R":1}},"f":{"on":{"R":2}}}}"#, "counts.f"),
        (#"{\#(required),"counts":{"f":{"on":{"R":1},"on":{"R":2}}}}"#, "counts.f.on"),
        (#"{\#(required),"counts":{"f":{"on":{"R":1,"R":2}}}}"#, "counts.f.on.R"),
        (#"{\#(required),"future":1,"future":2}"#, "future"),
    ])
    func aNameGivenTwiceInOneObjectIsRefused(_ json: String, _ field: String) {
        let error = Self.refusal(Array(json.utf8))
        #expect(error == WireFormatError(format: "telemetry report", field: field, message: "is given twice"))
    }

    /// A second `counts` would otherwise add its own 2,000 flags to the first's.
    @Test func aSecondCountsCannotDoubleTheFlagLimit() {
        let first = Self.members(2_000, "f", "{}")
        let second = Self.members(2_000, "g", "{}")
        let error = Self.refusal(Self.body(#""counts":{\#(first)},"counts":{\#(second)}"#))
        #expect(error?.field == "counts")
        #expect(error?.message == "is given twice")
    }

    @Test func anOperatorListedTwiceIsOneOperator() throws {
        let bytes = Array(#"{"instance":"in_1",\#(Self.sdk),"capabilities":{"schema":1,"operators":["eq","eq"]}}"#.utf8)
        #expect(try TelemetryReport.decode(bytes).capabilities.operators == ["eq"])
    }
}
