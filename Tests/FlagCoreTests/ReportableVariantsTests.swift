import Foundation
import Testing

@testable import FlagCore

/// `Flag.reportableVariants` is what the server keeps client telemetry of: every variant an evaluation
/// reports must be in it, or a real client's counts would be dropped.
@Suite("the variants a flag can report")
struct ReportableVariantsTests {
    static let document = """
        {"schema":1,"set":"v","cohorts":{"qa":{"include":["qa-1"]},"de":{"groups":[[{"attribute":"country","op":"eq","values":["DE"]}]]}},
         "flags":{"f":{"type":"string","default":"d","killValue":"k","expiresAt":"2030-01-01T00:00:00Z","expiredValue":"e",
           "overrides":[{"unit":"u-0","value":"o"},{"cohort":"qa","value":"q"}],
           "rules":[{"name":"germany","cohort":"de","value":"g"},
                    {"name":"half","conditions":[{"attribute":"plan","op":"eq","values":["pro"]}],
                     "rollout":{"percent":50,"value":"h"}},
                    {"name":"test","conditions":[{"attribute":"plan","op":"eq","values":["free"]}],
                     "split":[{"name":"a","value":"a","weight":50},{"value":"b","weight":50}]}],
           "rollout":{"percent":30,"value":"r"}}}}
        """

    @Test func everyVariantAnEvaluationReportsIsAmongThem() throws {
        let set = try FlagSet.decode(Array(Self.document.utf8))
        let flag = try #require(set.flags["f"])
        let reportable = flag.reportableVariants
        #expect(
            reportable == [
                "kill", "expired", "override", "rollout", "default", "override:qa", "germany", "half", "a",
                "variant-1",
            ])
        var killed = set
        killed.flags["f"]?.killed = true
        let now = try #require(ISO8601.parse("2027-01-01T00:00:00Z"))
        let later = try #require(ISO8601.parse("2031-01-01T00:00:00Z"))
        var seen: Set<String> = []
        for (variant, time) in [(set, now), (killed, now), (set, later)] {
            let compiled = CompiledFlagSet(variant)
            for index in 0..<400 {
                for attributes in [[:], ["country": "DE"], ["plan": "pro"], ["plan": "free"]] {
                    for unit in ["u-\(index)", "qa-1"] {
                        let detail = compiled.evaluate(
                            "f", type: .string, default: .string("x"),
                            context: EvaluationContext(unitID: unit, attributes: attributes), at: time)
                        if let name = detail.variant { seen.insert(name) }
                    }
                }
            }
        }
        #expect(seen.isSubset(of: reportable), "reported but not reportable: \(seen.subtracting(reportable))")
        #expect(seen == reportable, "never reported: \(reportable.subtracting(seen))")
    }
}
