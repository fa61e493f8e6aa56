import FlagAPI
import FlagCore
import Foundation
import Testing

/// The coder's promises beyond the vectors: leniency on unknown members, errors that name the member, a request's
/// members from the query, `null` where `@ExplicitNull` says, and raw values kept as sent.
@Suite("FlagAPI: the coder")
struct CoderTests {
    @Test func unknownMembersAreIgnored() throws {
        let bytes = Array(#"{"compatibility":"off","future":{"a":[1]},"set":"s","zz":null}"#.utf8)
        #expect(try SettingsAnswer.decode(answer: bytes) == SettingsAnswer(set: "s", compatibility: "off"))
    }

    @Test(arguments: [
        (#"{"tokens":[{"name":"a","createdAt":"2026-12-01T00:00:00Z","sets":null}]}"#, "tokens[0].role", "is required"),
        (
            #"{"tokens":[{"name":7,"role":"viewer","createdAt":"2026-12-01T00:00:00Z"}]}"#, "tokens[0].name",
            "must be a string, found a number"
        ),
        (
            #"{"tokens":[{"name":"a","role":"viewer","createdAt":"yesterday"}]}"#, "tokens[0].createdAt",
            "must be an ISO-8601 time such as 2026-12-01T09:00:00Z"
        ),
        (#"{"tokens":{}}"#, "tokens", "must be an array, found an object"),
    ])
    func aBadAnswerNamesTheMemberAtFault(_ json: String, _ field: String, _ message: String) {
        let error = #expect(throws: WireFormatError.self) { try TokenList.decode(answer: Array(json.utf8)) }
        #expect(error?.field == field)
        #expect(error?.message == message)
        #expect(error?.format == "TokenList")
    }

    @Test func bytesThatAreNotAnObjectSaySo() {
        let error = #expect(throws: WireFormatError.self) { try TokenList.decode(answer: Array("[1]".utf8)) }
        #expect(error?.field == nil)
        #expect(error?.description == "the TokenList must be an object, found an array")
    }

    @Test func aRequestsMembersComeFromTheBodyThenFromTheQuery() throws {
        let query = ["limit": "5", "key": "from-query"]
        let fromBoth = try WireDecoder.decodeRequest(HistoryQuery.self, body: Array(#"{"key":"a"}"#.utf8), query: query)
        #expect(fromBoth == HistoryQuery(key: "a", limit: 5))
        let nullInBody = try WireDecoder.decodeRequest(
            HistoryQuery.self, body: Array(#"{"key":null}"#.utf8), query: query)
        #expect(nullInBody.key == "from-query")
        let empty = try WireDecoder.decodeRequest(HistoryQuery.self, body: Array(" \n".utf8), query: [:])
        #expect(empty == HistoryQuery())
    }

    @Test(arguments: [("true", true), ("1", true), ("", true), ("false", false), ("0", false)])
    func aQueryFlagReadsAsABool(_ text: String, _ value: Bool) throws {
        let query = try WireDecoder.decodeRequest(FlagListQuery.self, body: [], query: ["expired": text])
        #expect(query.expired == value)
    }

    @Test func aQueryThatIsNotOfTheTypeNamesItsText() {
        let error = #expect(throws: WireFormatError.self) {
            try WireDecoder.decodeRequest(HistoryQuery.self, body: [], query: ["limit": "ten"])
        }
        #expect(error?.field == "limit")
        #expect(error?.message == #"must be an integer, not "ten""#)
    }

    @Test func aBodyThatIsNotAnObjectIsRefused() {
        let error = #expect(throws: WireFormatError.self) {
            try WireDecoder.decodeRequest(HistoryQuery.self, body: Array("[1]".utf8), query: [:])
        }
        #expect(error?.description == "the body must be a JSON object")
        let malformed = #expect(throws: WireFormatError.self) {
            try WireDecoder.decodeRequest(HistoryQuery.self, body: Array("{".utf8), query: [:])
        }
        #expect(malformed?.description.hasPrefix("the body is not valid JSON: ") == true)
    }

    @Test func aRawTopLevelMemberIsKeptAsSent() throws {
        let document = #"{ "flags" : { }, "schema" :1 }"#
        let request = try WireDecoder.decodeRequest(
            ImportRequest.self, body: Array(#"{"document":\#(document),"dryRun":true}"#.utf8), query: [:])
        #expect(request.document.bytes == Array(document.utf8))
        #expect(request.dryRun == true)
    }

    @Test func anIntegralDoubleReadsAsAnInteger() throws {
        let request = try WireDecoder.decodeRequest(
            RollbackRequest.self, body: Array(#"{"version":3.0}"#.utf8), query: [:])
        #expect(request.version == 3)
    }

    @Test func explicitNullIsWrittenAndMissingReadsAsNil() throws {
        let whoami = Whoami(name: "root", role: "admin", sets: nil, session: false, expiresAt: nil)
        #expect(
            String(decoding: try whoami.encodedAnswer(), as: UTF8.self)
                == #"{"name":"root","role":"admin","session":false,"sets":null}"#)
        let missing = try Whoami.decode(answer: Array(#"{"name":"root","role":"admin","session":false}"#.utf8))
        #expect(missing.sets == nil)
    }

    @Test func aDateIsWrittenAsWholeSecondUTC() throws {
        let key = KeyInfo(name: "k", set: "s", createdAt: Date(timeIntervalSince1970: 1_796_205_605.75), revokedAt: nil)
        #expect(
            String(decoding: try WireEncoder.encode(key), as: UTF8.self)
                == #"{"createdAt":"2026-12-02T10:00:05Z","name":"k","set":"s"}"#)
    }
}

/// Endpoints as a client sends them: paths filled in and percent-encoded, `GET` and `DELETE` requests in the query,
/// the others as the body.
@Suite("FlagAPI: endpoints")
struct EndpointTests {
    @Test func aPathIsFilledInAndItsSegmentsEncoded() throws {
        let call = try API.removeRule.call(
            PathParameters(set: "ios prod", key: "new-checkout", name: "a/b+c"), ChangeRequest(reason: "x y+z"),
            ifMatch: 4)
        #expect(call.method == "DELETE")
        #expect(call.target == "/v1/admin/sets/ios%20prod/flags/new-checkout/rules/a%2Fb%2Bc?reason=x%20y%2Bz")
        #expect(call.body.isEmpty)
        #expect(call.headers.contains { $0 == ("If-Match", "\"4\"") })
    }

    @Test func aBodyIsTheRequestsCanonicalJSON() throws {
        let call = try API.setDefault.call(
            PathParameters(set: "s", key: "k"), DefaultRequest(valueText: "3", reason: "why"), createOnly: true)
        #expect(call.target == "/v1/admin/sets/s/flags/k/default")
        #expect(String(decoding: call.body, as: UTF8.self) == #"{"reason":"why","valueText":"3"}"#)
        #expect(call.headers.contains { $0 == ("If-None-Match", "*") })
    }

    @Test func aQueryHoldsScalarsInCanonicalOrder() throws {
        let call = try API.history.call(PathParameters(set: "s"), HistoryQuery(key: "a", limit: 5))
        #expect(call.target == "/v1/admin/sets/s/history?key=a&limit=5")
        let none = try API.listSets.call(PathParameters(), NoRequest())
        #expect(none.target == "/v1/admin/sets")
    }

    @Test func aMissingParameterIsAnError() {
        #expect(throws: EndpointError.self) { try API.kill.call(PathParameters(set: "s"), ChangeRequest()) }
    }

    @Test func namesAndLabelsAreUniqueAndTemplatesWellFormed() {
        #expect(Set(API.all.map(\.name)).count == API.all.count)
        #expect(Set(API.all.map(\.label)).count == API.all.count)
        for endpoint in API.all {
            #expect(endpoint.template.hasPrefix("/"), "\(endpoint.label)")
            let named = endpoint.template.split(separator: "/").filter { $0.first == "{" }.count
            #expect(endpoint.parameters.count == named, "\(endpoint.label) names an unknown parameter")
        }
    }

    @Test func theTableServedToTheDashboardHasEveryEndpoint() throws {
        let table = EndpointTable(API.all)
        #expect(table.endpoints.count == API.all.count)
        #expect(table.endpoints["kill"]?.role == "editor")
        #expect(table.endpoints["createToken"]?.wholeServer == true)
        #expect(table.endpoints["createKey"]?.confirmsPerson == true)
        #expect(table.endpoints["document"]?.role == nil)
        let decoded = try EndpointTable.decode(answer: table.encodedAnswer())
        #expect(decoded == table)
        #expect(try table.encodedAnswer() == WireEncoder.encode(table))
    }
}
