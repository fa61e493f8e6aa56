import FlagAPI
import FlagCore
import Foundation
import Testing

@Suite("Mutation response wire format (docs/admin-api.md)")
struct MutationResultTests {
    /// A flag as the server stores it: canonical, as every nested value the decoder keeps.
    static let flag = #"{"default":false,"killed":true,"kind":"release","type":"bool"}"#

    /// Answers in their canonical form (members sorted), as the server writes them.
    static let canonicalAnswers: [(String, MutationResult)] = [
        (
            #"{"changed":true,"flag":\#(flag),"key":"new-checkout","set":"ios-prod","version":43}"#,
            MutationResult(
                set: "ios-prod", version: 43, changed: true, item: .flag(key: "new-checkout", json: Array(flag.utf8)))
        ),
        (
            #"{"changed":false,"cohort":{"include":["u-1"]},"name":"beta","set":"ios-prod","version":7}"#,
            MutationResult(
                set: "ios-prod", version: 7, changed: false,
                item: .cohort(name: "beta", json: Array(#"{"include":["u-1"]}"#.utf8)))
        ),
        (
            #"{"changed":true,"set":"web","version":1,"warnings":["3 clients lack semver_gte"]}"#,
            MutationResult(set: "web", version: 1, changed: true, warnings: ["3 clients lack semver_gte"])
        ),
        (
            #"{"changeRequest":12,"changed":false,"set":"ios-prod","version":43}"#,
            MutationResult(set: "ios-prod", version: 43, changed: false, changeRequest: 12)
        ),
    ]

    /// Answers as servers wrote them before the shapes moved into FlagAPI, members in the order written.
    static let serverAnswers: [(String, MutationResult)] = [
        (
            #"{"set":"ios-prod","version":43,"changed":true,"key":"new-checkout","flag":\#(flag)}"#,
            MutationResult(
                set: "ios-prod", version: 43, changed: true, item: .flag(key: "new-checkout", json: Array(flag.utf8)))
        ),
        (
            #"{"set":"ios-prod","version":7,"changed":false,"name":"beta","cohort":{"include":["u-1"]}}"#,
            MutationResult(
                set: "ios-prod", version: 7, changed: false,
                item: .cohort(name: "beta", json: Array(#"{"include":["u-1"]}"#.utf8)))
        ),
        (#"{"set":"web","version":1,"changed":true}"#, MutationResult(set: "web", version: 1, changed: true)),
    ]

    @Test func theCanonicalBytesDecodeAndEncodeBackUnchanged() throws {
        for (bytes, expected) in Self.canonicalAnswers {
            let decoded = try MutationResult.decode(answer: Array(bytes.utf8))
            #expect(decoded == expected)
            #expect(String(decoding: try decoded.encodedAnswer(), as: UTF8.self) == bytes)
        }
    }

    @Test func olderServersAnswersStillDecode() throws {
        for (bytes, expected) in Self.serverAnswers {
            #expect(try MutationResult.decode(answer: Array(bytes.utf8)) == expected)
        }
    }

    @Test func encodeThenDecodeGivesTheSameResult() throws {
        for (_, result) in Self.serverAnswers + Self.canonicalAnswers {
            #expect(try MutationResult.decode(answer: result.encodedAnswer()) == result)
        }
    }

    @Test func unknownMembersAreIgnored() throws {
        let bytes = #"{"dryRun":false,"set":"s","audit":{"actor":"a"},"version":2,"changed":true}"#
        #expect(
            try MutationResult.decode(answer: Array(bytes.utf8)) == MutationResult(set: "s", version: 2, changed: true))
    }

    @Test(arguments: [
        (#"{"version":2,"changed":true}"#, "set", "is missing"),
        (#"{"set":"s","changed":true}"#, "version", "is missing"),
        (#"{"set":"s","version":2}"#, "changed", "is missing"),
        (#"{"set":"s","version":"2","changed":true}"#, "version", "must be an integer, found a string"),
        (#"{"set":"s","version":2,"changed":"yes"}"#, "changed", "must be true or false, found a string"),
        (#"{"set":"s","version":2,"changed":true,"key":"k"}"#, "flag", "is missing"),
        (#"{"set":"s","version":2,"changed":true,"flag":{}}"#, "key", "is missing"),
        (#"{"set":"s","version":2,"changed":true,"key":"k","flag":[]}"#, "flag", "must be an object"),
        (#"{"set":"s","version":2,"changed":true,"name":"c"}"#, "cohort", "is missing"),
    ])
    func aMalformedAnswerNamesWhatIsWrong(_ json: String, _ field: String, _ message: String) {
        let error = #expect(throws: WireFormatError.self) { try MutationResult.decode(answer: Array(json.utf8)) }
        #expect(error?.field == field)
        #expect(error?.message.contains(message) == true)
        #expect(error?.description.hasPrefix("the mutation response's \"\(field)\" ") == true)
    }

    @Test func bytesThatAreNotJSONSaySo() {
        let error = #expect(throws: WireFormatError.self) { try MutationResult.decode(answer: Array("<html>".utf8)) }
        #expect(error?.field == nil)
        #expect(error?.description.hasPrefix("the mutation response is not valid JSON: line 1, column 1") == true)
    }
}
