import Foundation
import Testing

@testable import FlagCore

@Suite("Document layout: the header and each item's bytes, without decoding")
struct FlagSetLayoutTests {
    @Test func eachFlagsRangeDecodesToTheDocumentsFlag() throws {
        let bytes = try Fixtures.demoBytes
        let set = try FlagSet.decode(bytes)
        let layout = try FlagSet.Layout.scan(bytes)
        #expect(layout.schema == set.schema)
        #expect(layout.name == "demo")
        #expect(layout.version == set.version)
        #expect(Set(layout.flagRanges.keys) == Set(set.flags.keys))
        for (key, range) in layout.flagRanges {
            #expect(try Flag.decode(Array(bytes[range]), key: key).flag == set.flags[key])
        }
        let cohorts = try #require(layout.cohortsRange)
        guard case .object(let members) = try JSONReader.parse(bytes) else {
            Issue.record("the demo document is not an object")
            return
        }
        #expect(try JSONReader.parse(Array(bytes[cohorts])) == members["cohorts"])
    }

    @Test func unknownAndMistypedHeaderMembersKeepTheDefaults() throws {
        let bytes = Array(#"{"future":[1,{"a":2}],"schema":"one","version":2.5,"set":7,"flags":{"f":{}}}"#.utf8)
        let layout = try FlagSet.Layout.scan(bytes)
        #expect(layout.schema == FlagSet.currentSchema)
        #expect(layout.name == "")
        #expect(layout.version == 0)
        #expect(layout.cohortsRange == nil)
        #expect(layout.flagRanges["f"].map { Array(bytes[$0]) } == Array("{}".utf8))
    }

    @Test func aDocumentThatIsNotAnObjectIsRefused() {
        #expect(throws: JSONError.self) { try FlagSet.Layout.scan(Array("[1]".utf8)) }
        #expect(throws: JSONError.self) { try FlagSet.Layout.scan(Array(#"{"flags":{"#.utf8)) }
    }
}
