import Foundation
import Testing

@testable import FlagCore

@Suite("Patch wire format (SPEC §4)")
struct SetPatchTests {
    static let killed = #"{"type":"bool","kind":"release","default":false,"killed":true}"#
    static let beta = #"{"include":["u-1"]}"#

    /// A patch as the server wrote it before the format moved into the core (the bytes other clients read).
    static let serverBytes =
        #"{"version":2,"base":1,"flags":{"new-checkout":\#(killed)},"cohorts":{"beta":\#(beta)},"#
        + #""removed":{"flags":["old-a","old-b"],"cohorts":["de"]}}"#

    @Test func theServersBytesDecodeAndEncodeBackUnchanged() throws {
        let patch = try SetPatch.decode(Array(Self.serverBytes.utf8))
        #expect(patch.version == 2)
        #expect(patch.base == 1)
        #expect(patch.flags == ["new-checkout": Array(Self.killed.utf8)])
        #expect(patch.cohorts == ["beta": Array(Self.beta.utf8)])
        #expect(patch.removedFlags == ["old-a", "old-b"])
        #expect(patch.removedCohorts == ["de"])
        #expect(String(decoding: patch.encoded(), as: UTF8.self) == Self.serverBytes)
    }

    @Test func anEmptyPatchStillWritesEveryMember() {
        let patch = SetPatch(version: 5, base: 4)
        #expect(
            String(decoding: patch.encoded(), as: UTF8.self)
                == #"{"version":5,"base":4,"flags":{},"cohorts":{},"removed":{"flags":[],"cohorts":[]}}"#)
    }

    @Test func encodeThenDecodeGivesTheSamePatch() throws {
        let set = try FlagSet.decode(try Fixtures.demoBytes)
        let patch = SetPatch(
            version: 9, base: 8, flags: set.flags.mapValues { $0.encoded() },
            cohorts: set.cohorts.mapValues { $0.encoded() }, removedFlags: ["gone", "also-gone"],
            removedCohorts: ["z"])
        #expect(try SetPatch.decode(patch.encoded()) == patch)
    }

    @Test func itemsAndRemovedNamesAreWrittenInUTF8Order() {
        let patch = SetPatch(
            version: 2, base: 1, flags: ["b": Array("{}".utf8), "a.b": Array("{}".utf8), "a": Array("{}".utf8)],
            removedFlags: ["z", "c-1", "c"])
        #expect(
            String(decoding: patch.encoded(), as: UTF8.self)
                == #"{"version":2,"base":1,"flags":{"a":{},"a.b":{},"b":{}},"cohorts":{},"#
                + #""removed":{"flags":["c","c-1","z"],"cohorts":[]}}"#)
    }

    @Test func unknownMembersAreIgnored() throws {
        let bytes = #"{"future":{"x":[1]},"version":3,"base":2,"removed":{"later":true,"flags":["f"]},"note":"hi"}"#
        let patch = try SetPatch.decode(Array(bytes.utf8))
        #expect(patch == SetPatch(version: 3, base: 2, removedFlags: ["f"]))
    }

    @Test func theChangesReadLikeADocumentsItems() throws {
        let set = try FlagSet.decode(try Fixtures.demoBytes)
        let patch = SetPatch(
            version: 2, base: 1, flags: set.flags.mapValues { $0.encoded() },
            cohorts: set.cohorts.mapValues { $0.encoded() })
        let changes = patch.changes()
        #expect(changes.version == 2)
        #expect(changes.flags == set.flags)
        #expect(changes.cohorts == set.cohorts)
        #expect(changes.readProblems.isEmpty)
    }

    @Test func anUnreadableItemFallsBackAloneWithItsDocumentPath() throws {
        let bytes =
            #"{"version":2,"base":1,"flags":{"max-items":{"type":"int"},"ok":\#(Self.killed)},"#
            + #""cohorts":{"qa":{"include":"u-1"}}}"#
        let changes = try SetPatch.decode(Array(bytes.utf8)).changes()
        #expect(changes.flags.keys.sorted() == ["ok"])
        #expect(changes.unreadableFlags["max-items"]?.map(\.path) == ["flags.max-items.default"])
        #expect(changes.cohorts.isEmpty)
        #expect(changes.unreadableCohorts["qa"]?.map(\.path) == ["cohorts.qa.include"])
    }

    struct Malformed: CustomTestStringConvertible, Sendable {
        var json: String
        var field: String?
        var message: String
        var testDescription: String { field ?? message }
    }

    static let malformed: [Malformed] = [
        Malformed(json: #"{"version":2,"base":1,"flags":{"x""#, field: nil, message: "is not valid JSON: line 1"),
        Malformed(json: #"[2,1]"#, field: nil, message: "must be a JSON object, found an array"),
        Malformed(json: #"{"version":2,"flags":{}}"#, field: "base", message: "is missing"),
        Malformed(json: #"{"base":1}"#, field: "version", message: "is missing"),
        Malformed(json: #"{"version":"2","base":1}"#, field: "version", message: "must be an integer, found a string"),
        Malformed(json: #"{"version":2,"base":1.5}"#, field: "base", message: "must be an integer"),
        Malformed(json: #"{"version":0,"base":-1}"#, field: "version", message: "must be 1 or more, found 0"),
        Malformed(json: #"{"version":1,"base":1}"#, field: "version", message: "must be above \"base\" (1), found 1"),
        Malformed(json: #"{"version":2,"base":1,"flags":[]}"#, field: "flags", message: "must be an object"),
        Malformed(json: #"{"version":2,"base":1,"flags":{"x":3}}"#, field: "flags.x", message: "must be an object"),
        Malformed(json: #"{"version":2,"base":1,"flags":{"x":{},"x":{}}}"#, field: "flags.x", message: "given twice"),
        Malformed(json: #"{"version":2,"base":1,"cohorts":{"c":null}}"#, field: "cohorts.c", message: "found null"),
        Malformed(json: #"{"version":2,"base":1,"removed":[]}"#, field: "removed", message: "must be an object"),
        Malformed(
            json: #"{"version":2,"base":1,"removed":{"flags":["a",7]}}"#, field: "removed.flags[1]",
            message: "must be a string, found a number"),
        Malformed(
            json: #"{"version":2,"base":1,"removed":{"cohorts":"qa"}}"#, field: "removed.cohorts",
            message: "must be an array of strings"),
    ]

    @Test(arguments: malformed)
    func aMalformedPatchNamesWhatIsWrong(_ bad: Malformed) {
        #expect {
            try SetPatch.decode(Array(bad.json.utf8))
        } throws: { error in
            guard let error = error as? WireFormatError else { return false }
            return error.format == "patch" && error.field == bad.field && error.message.contains(bad.message)
        }
    }

    @Test func theMessageSaysWhichPatchMemberIsWrong() {
        let error = #expect(throws: WireFormatError.self) {
            try SetPatch.decode(Array(#"{"version":2,"base":1,"removed":{"flags":["a",7]}}"#.utf8))
        }
        #expect(error?.description == #"the patch's "removed.flags[1]" must be a string, found a number"#)
    }
}
