import Foundation
import Testing

@testable import FlagCore

/// String flags with a fixed set of values (docs/core.md, "Enum flags"): every value the flag can serve is one of
/// them, checked at its path; the list itself is bounded; it travels as a plain member.
@Suite("Enum flags")
struct EnumFlagTests {
    static func problems(_ flag: String, others: String = "") throws -> [String] {
        try Fixtures.compile(#"{"schema":1,"set":"s","version":1,"flags":{"f":"# + flag + others + "}}").problems
            .map(\.description)
    }

    static let theme = #"{"type":"string","default":"blue","values":["blue","green","orange"]"#

    @Test func everyValueTheFlagCanServeIsOneOfItsValues() throws {
        #expect(try Self.problems(Self.theme + "}").isEmpty)
        let everywhere =
            Self.theme + #","killValue":"red","expiredValue":"teal","overrides":[{"unit":"u","value":"pink"}],"#
            + #""rules":[{"name":"a","conditions":[],"value":"gray"},"#
            + #"{"name":"b","conditions":[],"split":[{"value":"blue","weight":50},{"value":"black","weight":50}]}],"#
            + #""rollout":{"value":"white","percent":5}}"#
        let listed = "(blue, green, orange)"
        #expect(
            try Self.problems(everywhere) == [
                "flags.f.killValue: \"red\" is not one of the flag's values \(listed)",
                "flags.f.expiredValue: \"teal\" is not one of the flag's values \(listed)",
                "flags.f.overrides[0].value: \"pink\" is not one of the flag's values \(listed)",
                "flags.f.rules[0].value: \"gray\" is not one of the flag's values \(listed)",
                "flags.f.rules[1].split[1].value: \"black\" is not one of the flag's values \(listed)",
                "flags.f.rollout.value: \"white\" is not one of the flag's values \(listed)",
            ])
    }

    @Test func theListIsBoundedDistinctAndOnlyForStringFlags() throws {
        #expect(
            try Self.problems(#"{"type":"bool","default":true,"values":["true"]}"#)
                == ["flags.f.values: only a string flag lists its values; this is a bool flag"])
        #expect(
            try Self.problems(#"{"type":"string","default":"a","values":["a","a",""]}"#) == [
                "flags.f.values[1]: \"a\" is listed twice",
                "flags.f.values[2]: a value has 1 to 64 characters, not 0",
            ])
        let many = (0...64).map { "\"v\($0)\"" }.joined(separator: ",")
        #expect(
            try Self.problems(#"{"type":"string","default":"v0","values":[\#(many)]}"#)
                == ["flags.f.values: list 1 to 64 values, not 65"])
        #expect(
            try Self.problems(#"{"type":"string","default":"a","values":[]}"#).first
                == "flags.f.values: list 1 to 64 values, not 0")
    }

    @Test func aPrerequisiteOnAnEnumListsOnlyItsValues() throws {
        let express = #","e":{"type":"bool","default":false,"prerequisites":[{"flag":"f","values":["green","red"]}]}"#
        #expect(
            try Self.problems(Self.theme + "}", others: express)
                == [#"flags.e.prerequisites[0].values[1]: "red" is not one of the values of 'f' (blue, green, orange)"#]
        )
    }

    @Test func valuesTravelAsAMemberAfterTheKind() throws {
        let set = try Fixtures.decode(#"{"schema":1,"set":"s","version":1,"flags":{"f":"# + Self.theme + "}}}")
        let flag = try #require(set.flags["f"])
        #expect(flag.values == ["blue", "green", "orange"])
        #expect(
            String(decoding: flag.encoded(), as: UTF8.self)
                == #"{"type":"string","kind":"release","values":["blue","green","orange"],"default":"blue","killed":false}"#
        )
        #expect(try FlagSet.decode(set.encoded()) == set)
    }
}
