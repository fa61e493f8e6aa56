import FlagCore
import Foundation
import Testing

@testable import FlagCLI

/// `lint FILE --against SERVER`: the constructs of a file that active clients cannot evaluate, judged as the
/// server's compatibility gate judges a write (docs/telemetry.md): more than 0.1 % of the active instances lacking
/// something the file introduces refuses it.
@Suite("flagctl lint --against: the compatibility check")
struct CompatibilityCheckTests {
    /// A set whose flag `nc` has a rule on `op` (and `country eq`), and a cohort `beta` on `cohortOp`.
    static func set(op: String?, cohortOp: String = "eq") throws -> FlagSet {
        let rules =
            op.map {
                #"[{"name":"r","conditions":[{"attribute":"v","op":"\#($0)","values":["1.0.0"]},"#
                    + #"{"attribute":"country","op":"eq","values":["DE"]}],"value":true}]"#
            } ?? "[]"
        let text = #"""
            {"schema":1,"set":"prod","cohorts":{"beta":{"groups":[[{"attribute":"p","op":"\#(cohortOp)","values":["x"]}]]}},
             "flags":{"nc":{"type":"bool","kind":"ops","default":false,"rules":\#(rules)},
                      "plain":{"type":"bool","kind":"ops","default":false}}}
            """#
        return try FlagSet.decode(Array(text.utf8))
    }

    /// `count` instances of SDK `version` that know every operator but `lacking`.
    static func instances(_ count: Int, sdk version: String, lacking: Set<String> = [], from start: Int = 0)
        -> [ReportingInstance]
    {
        (start..<start + count).map { index in
            ReportingInstance(
                id: "in_\(index)", sdk: .init(name: "FlagClient", version: version), app: nil, version: 1,
                appliedAt: nil, lastSeen: nil,
                capabilities: ClientCapabilities(
                    schema: 1, operators: ClientCapabilities.current.operators.subtracting(lacking)))
        }
    }

    @Test func anOperatorNewToTheFlagAndLackedByMoreThanAThousandthIsRefused() throws {
        let instances =
            Self.instances(997, sdk: "2.0.0") + Self.instances(3, sdk: "1.2.0", lacking: ["semver_gte"], from: 997)
        let outcome = CompatibilityCheck(
            file: try Self.set(op: "semver_gte"), current: try Self.set(op: nil), instances: instances
        )
        .run()
        #expect(outcome.active == 1000)
        #expect(outcome.lackingIntroduced == 3)
        #expect(outcome.refused)
        #expect(
            outcome.findings == [
                .init(
                    path: "flags.nc", construct: .operator("semver_gte"), lacking: 3, active: 1000,
                    sdks: [SDKCount(sdk: .init(name: "FlagClient", version: "1.2.0"), instances: 3)], introduced: true)
            ])
        #expect(
            outcome.findings[0].line(set: "prod", refused: outcome.refused)
                == #"flags.nc: operator "semver_gte" cannot be evaluated by 3 of 1000 active instances of prod (0.3%): "#
                + "FlagClient 1.2.0 (3); they would serve the flag's compiled-in default")
    }

    @Test(
        "the threshold is more than 0.1%: 1 in 1000 passes, 2 in 1000 do not",
        arguments: [(1, false), (2, true)])
    func threshold(_ lacking: Int, _ refused: Bool) throws {
        let instances =
            Self.instances(1000 - lacking, sdk: "2.0.0")
            + Self.instances(lacking, sdk: "1.2.0", lacking: ["semver_gte"], from: 1000 - lacking)
        let outcome = CompatibilityCheck(file: try Self.set(op: "semver_gte"), current: nil, instances: instances).run()
        #expect(outcome.refused == refused)
        let line = outcome.findings[0].line(set: "prod", refused: outcome.refused)
        #expect(line.hasPrefix("note: ") == !refused)
        if !refused { #expect(line.hasSuffix("(0.1% or fewer of the active instances, so the gate lets it pass)")) }
    }

    @Test func whatTheServerAlreadyServesIsANoteNotARefusal() throws {
        let instances = Self.instances(5, sdk: "1.2.0", lacking: ["semver_gte"])
        let current = try Self.set(op: "semver_gte")
        let outcome = CompatibilityCheck(file: current, current: current, instances: instances).run()
        #expect(!outcome.refused)
        #expect(outcome.lackingIntroduced == 0)
        #expect(outcome.findings.map(\.introduced) == [false])
        #expect(
            outcome.findings[0].line(set: "prod", refused: false)
                == #"note: flags.nc: operator "semver_gte" cannot be evaluated by 5 of 5 active instances of prod "#
                + "(100%): FlagClient 1.2.0 (5); they would serve the flag's compiled-in default (prod already serves "
                + "it, so the gate lets it pass)")
    }

    @Test func instancesLackingDifferentNewConstructsAddUpAsTheGateCountsThem() throws {
        // 1 in 1000 lacks semver_gte, another 1 in 1000 lacks the cohort's new operator: 0.2 % lack something new.
        let instances =
            Self.instances(998, sdk: "2.0.0") + Self.instances(1, sdk: "1.2.0", lacking: ["semver_gte"], from: 998)
            + Self.instances(1, sdk: "1.1.0", lacking: ["ends_with"], from: 999)
        let file = try Self.set(op: "semver_gte", cohortOp: "ends_with")
        let outcome = CompatibilityCheck(file: file, current: try Self.set(op: nil), instances: instances).run()
        #expect(outcome.findings.map(\.path) == ["flags.nc", "cohorts.beta"])
        #expect(outcome.findings.map(\.lacking) == [1, 1])
        #expect(outcome.lackingIntroduced == 2)
        #expect(outcome.refused)
    }

    @Test func aNewerSchemaAndAnInstanceThatDeclaredNothingAreLacking() throws {
        let old = ReportingInstance(
            id: "in_old", sdk: .init(name: "FlagClient", version: "0.9.0"), app: nil, version: 1, appliedAt: nil,
            lastSeen: nil, capabilities: ClientCapabilities(schema: 0, operators: ClientCapabilities.current.operators))
        let outcome = CompatibilityCheck(file: try Self.set(op: nil), current: nil, instances: [old]).run()
        #expect(outcome.findings.map(\.construct) == [.schema(1), .schema(1)])
        #expect(outcome.findings.map(\.path) == ["flags.nc", "flags.plain"])
        #expect(outcome.refused)
        #expect(
            CompatibilityCheck.lacks(
                ReportingInstance(
                    id: "x", sdk: .init(name: "F", version: "1"), app: nil, version: nil, appliedAt: nil, lastSeen: nil,
                    capabilities: nil),
                .operator("eq")))
    }

    /// A set whose string flag `theme` serves `served` from a rule (and blue by default).
    static func themed(serving served: String?) throws -> FlagSet {
        let rules = served.map { #"[{"name":"r","conditions":[],"value":"\#($0)"}]"# } ?? "[]"
        let text = #"""
            {"schema":1,"set":"prod","flags":{"theme":{"type":"string","kind":"ops","default":"blue","rules":\#(rules)}}}
            """#
        return try FlagSet.decode(Array(text.utf8))
    }

    /// `count` instances of Shop `app` that read `theme` as an enum of `values` with `fallback` as their default.
    static func enumInstances(
        _ count: Int, app: String, values: [String], default fallback: String? = "blue", from start: Int = 0
    ) -> [ReportingInstance] {
        Self.instances(count, sdk: "2.0.0", from: start).map { instance in
            ReportingInstance(
                id: instance.id, sdk: instance.sdk, app: .init(name: "Shop", version: app), version: 1, appliedAt: nil,
                lastSeen: nil, capabilities: instance.capabilities,
                enums: ["theme": .init(values: values, defaultValue: fallback)])
        }
    }

    /// The server's rule, offline: a value the file makes the flag serve, unknown to instances that read it as an
    /// enum, is a finding naming their app and SDK and what they serve instead; instances that read it as a plain
    /// string do not count.
    @Test func aValueTheFileMakesTheFlagServeThatEnumReadersDoNotKnowIsRefused() throws {
        let instances =
            Self.enumInstances(1, app: "5.2.0", values: ["blue", "green"])
            + Self.enumInstances(1, app: "5.3.0", values: ["blue", "green", "orange"], from: 1)
            + Self.instances(1, sdk: "1.9.0", from: 2)
        let outcome = CompatibilityCheck(
            file: try Self.themed(serving: "orange"), current: try Self.themed(serving: "green"), instances: instances
        ).run()
        #expect(outcome.refused)
        #expect(outcome.lackingIntroduced == 1)
        #expect(outcome.findings.map(\.construct) == [.value("orange", flag: "theme")])
        let finding = try #require(outcome.findings.first)
        #expect(finding.builds == ["Shop 5.2.0 with FlagClient 2.0.0": 1])
        #expect(finding.defaults == ["blue": 1])
        #expect(
            finding.line(set: "prod", refused: true)
                == #"flags.theme: value "orange" is not known to 1 of 3 active instances of prod (33.33%): "#
                + #"Shop 5.2.0 with FlagClient 2.0.0 (1); they would serve their compiled-in default "blue""#)
        #expect(
            finding.json
                == .object([
                    "path": .string("flags.theme"), "value": .string("orange"), "lacking": .int(1), "active": .int(3),
                    "introduced": .bool(true),
                    "sdks": .array([
                        .object(["name": .string("FlagClient"), "version": .string("2.0.0"), "instances": .int(1)])
                    ]),
                    "builds": .object(["Shop 5.2.0 with FlagClient 2.0.0": .int(1)]),
                    "defaults": .array([.object(["default": .string("blue"), "instances": .int(1)])]),
                ]))
    }

    @Test func aValueTheServerAlreadyServesIsANote() throws {
        let instances = Self.enumInstances(2, app: "5.2.0", values: ["blue", "green"], default: nil)
        let current = try Self.themed(serving: "orange")
        let outcome = CompatibilityCheck(file: current, current: current, instances: instances).run()
        #expect(!outcome.refused)
        #expect(outcome.findings.map(\.introduced) == [false])
        #expect(
            outcome.findings[0].line(set: "prod", refused: false)
                == #"note: flags.theme: value "orange" is not known to 2 of 2 active instances of prod (100%): "#
                + "Shop 5.2.0 with FlagClient 2.0.0 (2); they would serve their compiled-in default (prod already "
                + "serves it, so the gate lets it pass)")
    }

    @Test func everyoneCapableMeansNoFinding() throws {
        let outcome = CompatibilityCheck(
            file: try Self.set(op: "semver_gte"), current: nil, instances: Self.instances(10, sdk: "2.0.0")
        ).run()
        #expect(outcome.findings.isEmpty)
        #expect(!outcome.refused)
    }

    @Test(
        "shares read to two decimals, cut",
        arguments: [(3, 850, "0.35%"), (1, 1000, "0.1%"), (1, 3, "33.33%"), (5, 5, "100%"), (1, 10_000, "0.01%")])
    func shares(_ part: Int, _ whole: Int, _ text: String) {
        #expect(CompatibilityCheck.Finding.share(part, of: whole) == text)
    }

    @Test func lintAgainstNeedsAnHTTPURL() {
        let run = runInProcess(["lint", "demo.json", "--against", "flags.example.com"])
        #expect(run.status == 2)
        #expect(
            run.stderrLines.first
                == "error: --against needs the server's http:// or https:// URL, e.g. https://flags.example.com, not "
                + "'flags.example.com'")
    }
}
