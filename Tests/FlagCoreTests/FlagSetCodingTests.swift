import Foundation
import Testing

@testable import FlagCore

@Suite("Flag-set wire format")
struct FlagSetCodingTests {
    @Test func demoSetReadsWithoutProblems() throws {
        let set = try FlagSet.decode(try Fixtures.demoBytes)
        #expect(set.name == "demo")
        #expect(set.version == 1)
        #expect(set.flags.count == 7)
        #expect(set.cohorts.count == 4)
        #expect(CompiledFlagSet(set).problems == [])
    }

    @Test func canonicalEncodingRoundTripsAndIsStable() throws {
        let set = try FlagSet.decode(try Fixtures.demoBytes)
        let bytes = set.encoded()
        #expect(try FlagSet.decode(bytes) == set)
        #expect(try FlagSet.decode(bytes).encoded() == bytes)
        #expect(try FlagSet.decode(set.encoded(pretty: true)) == set)
    }

    @Test func canonicalEncodingIgnoresInputOrderAndWhitespace() throws {
        let a = try Fixtures.decode(
            #"{"schema":1,"set":"s","version":2,"flags":{"b":{"type":"bool","default":true},"a":{"default":1,"type":"int","kind":"ops"}}}"#
        )
        let b = try Fixtures.decode(
            """
            { "flags": { "a": { "kind": "ops", "type": "int", "default": 1 },
                         "b": { "default": true, "type": "bool" } },
              "version": 2, "set": "s", "schema": 1 }
            """)
        #expect(a.encoded() == b.encoded())
        #expect(
            String(decoding: a.encoded(), as: UTF8.self)
                == #"{"schema":1,"set":"s","version":2,"cohorts":{},"flags":{"a":{"type":"int","kind":"ops","default":1,"killed":false},"b":{"type":"bool","kind":"release","default":true,"killed":false}}}"#
        )
    }

    @Test func assembleFromStoredItemsGivesTheSameBytes() throws {
        let set = try FlagSet.decode(try Fixtures.demoBytes)
        let assembled = FlagSet.assemble(
            name: set.name, version: set.version, updatedAt: set.updatedAt,
            cohorts: set.cohorts.mapValues { $0.encoded() }, flags: set.flags.mapValues { $0.encoded() })
        #expect(assembled == set.encoded())
    }

    @Test func datesAreWholeSecondUTC() throws {
        let set = try Fixtures.decode(
            #"{"schema":1,"set":"s","version":1,"updatedAt":"2026-11-29T11:00:00.750+01:00","flags":{}}"#)
        #expect(String(decoding: set.encoded(), as: UTF8.self).contains(#""updatedAt":"2026-11-29T10:00:00Z""#))
    }

    @Test func unknownFieldsAreIgnoredAndUnknownNamesKept() throws {
        let set = try Fixtures.decode(
            Fixtures.set(
                flag: #"""
                    {"type":"bool","kind":"sunset","default":false,"futureField":{"x":[1,2]},
                     "rules":[{"name":"r","conditions":[{"attribute":"a","op":"similar_to","values":["x"]}],"value":true}]}
                    """#))
        let flag = try #require(set.flags["f"])
        #expect(flag.kind == .unknown("sunset"))
        guard case .conditions(let conditions) = flag.rules.first?.target else {
            Issue.record("expected inline conditions")
            return
        }
        #expect(conditions.first?.op == .unknown("similar_to"))
    }

    @Test func aWrongShapeMakesOnlyThatFlagUnreadable() throws {
        let set = try Fixtures.decode(
            #"""
            {"schema":1,"set":"s","version":1,"flags":{
              "good":{"type":"bool","default":true},
              "bad":{"type":"bool","default":true,"rollout":{"value":true,"percent":"fifty"}}}}
            """#)
        #expect(set.flags["good"] != nil)
        #expect(set.flags["bad"] == nil)
        #expect(set.unreadableFlags["bad"]?.first?.path == "flags.bad.rollout.percent")
        #expect(set.readProblems.map(\.path) == ["flags.bad.rollout.percent"])
    }

    @Test func anItemDefinedTwiceIsUnreadableNotSilentlyReplaced() throws {
        let set = try Fixtures.decode(
            #"{"schema":1,"set":"s","version":1,"flags":{"a":{"type":"bool","default":true},"a":{"type":"bool","default":false}}}"#
        )
        #expect(set.flags["a"] == nil)
        #expect(set.readProblems.map(\.description) == ["flags.a: flag 'a' is defined twice"])
        let result = CompiledFlagSet(set).evaluate(
            "a", default: true, context: EvaluationContext(unitID: "u"), at: Date())
        #expect(result.errorCode == .parseError)
    }

    @Test func notAnObjectIsAnErrorWithLineAndColumn() {
        #expect(throws: JSONError.self) { try Fixtures.decode("[1, 2]") }
        do {
            _ = try Fixtures.decode("{\n  \"schema\": 1,\n  \"flags\": {\n    \"a\": }\n}")
            Issue.record("expected a JSON error")
        } catch let error as JSONError {
            #expect(error.line == 4)
            #expect(error.column == 10)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func doubleFlagsReadIntegersAsDoubles() throws {
        let set = try Fixtures.decode(Fixtures.set(flag: #"{"type":"double","default":1,"killValue":0.5}"#))
        #expect(set.flags["f"]?.defaultValue == .double(1))
        #expect(try FlagSet.decode(set.encoded()) == set)
    }

    @Test func singleItemsDecodeForTheAdminAPI() throws {
        let (flag, problems) = try Flag.decode(Array(#"{"type":"int","default":3}"#.utf8), key: "limit")
        #expect(problems.isEmpty)
        #expect(flag?.defaultValue == .int(3))
        let (cohort, _) = try Cohort.decode(Array(#"{"include":["u-1"]}"#.utf8))
        #expect(cohort?.include == ["u-1"])
        let (missing, missingProblems) = try Flag.decode(Array(#"{"default":3}"#.utf8), key: "limit")
        #expect(missing == nil)
        #expect(missingProblems.map(\.path) == ["type"])
    }

    @Test func keysAreOrderedByTheirUTF8Bytes() {
        // "é" (C3 A9) sorts after "z" (7A) by bytes, and U+FF5A (EF BD 9A) before U+1F600 (F0 9F 98 80); keys of
        // up to 15 bytes are small strings, longer ones native.
        let keys = ["b", "", "é", "a", "ab", "z", "\u{1F600}", "\u{FF5A}", "a-longer-key-than-fifteen-bytes", "A"]
        #expect(
            keys.sorted(by: utf8Less) == [
                "", "A", "a", "a-longer-key-than-fifteen-bytes", "ab", "b", "z", "é", "\u{FF5A}", "\u{1F600}",
            ])
        #expect(!utf8Less("same", "same"))
    }
}
