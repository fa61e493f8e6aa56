import FlagAPI
import FlagCore
import Foundation
import Testing

/// One vector per request and answer shape of the admin API: its canonical JSON text decodes into the shape and
/// encodes back to the same bytes, so that a renamed or retyped member fails here before a client meets it.
@Suite("FlagAPI: every shape, a JSON text to a value and back to the same bytes")
struct ShapeVectorTests {
    /// A shape's name and a round trip of its bytes through the shape.
    struct Vector: CustomTestStringConvertible, Sendable {
        let name: String
        let json: String
        let roundTrip: @Sendable ([UInt8]) throws -> [UInt8]

        var testDescription: String { name }

        /// An answer, read as clients read it.
        static func answer<Shape: APIAnswer & Codable>(_ type: Shape.Type, _ json: String) -> Vector {
            Vector(name: String(describing: type), json: json) { bytes in
                try Shape.decode(answer: bytes).encodedAnswer()
            }
        }

        /// A request, read as the server reads it.
        static func request<Shape: APIRequest>(_ type: Shape.Type, _ json: String) -> Vector {
            Vector(name: String(describing: type), json: json) { bytes in
                try WireEncoder.encode(WireDecoder.decodeRequest(Shape.self, body: bytes, query: [:]))
            }
        }
    }

    static let flag = #"{"default":false,"kind":"release","type":"bool"}"#
    static let cohort = #"{"include":["u-1","u-2"]}"#
    static let instance =
        #"{"app":null,"appliedAt":"2026-12-02T10:00:00Z","id":"in_a","lastSeen":"2026-12-02T10:00:03Z","#
        + #""sdk":{"name":"FlagClient","version":"2.0.0"},"version":41}"#

    static let answers: [Vector] = [
        .answer(Health.self, #"{"reason":"the store is down","sets":2,"status":"degraded"}"#),
        .answer(
            SetList.self,
            #"{"sets":[{"cohorts":2,"flags":3,"lastChange":{"action":"flag.kill","actor":"alice","reason":"errors","#
                + #""subject":"new-checkout","time":"2026-12-02T10:00:00Z","version":4},"name":"ios-prod","stale":1,"#
                + #""updatedAt":"2026-12-02T10:00:00Z","version":4},{"cohorts":0,"flags":0,"name":"web","stale":0,"#
                + #""updatedAt":"2026-12-01T09:00:00Z","version":1}]}"#),
        .answer(
            ImportAnswer.self,
            #"{"changed":true,"changes":{"cohorts":{},"flags":{"a":{"after":\#(flag),"before":null}}},"#
                + #""set":"ios-prod","version":5}"#),
        .answer(
            ImportAnswer.self,
            #"{"changes":{"cohorts":{"beta":{"after":null,"before":\#(cohort)}},"flags":{}},"cohorts":{"beta":"#
                + #""removed"},"dryRun":true,"flags":{},"set":"ios-prod","version":4}"#),
        .answer(SettingsAnswer.self, #"{"compatibility":"warn","set":"ios-prod"}"#),
        .answer(SettingsAnswer.self, #"{"compatibility":"warn","reviews":"required","set":"ios-prod"}"#),
        .answer(
            ImportAnswer.self,
            #"{"changeRequest":7,"changed":false,"changes":{"cohorts":{},"flags":{"a":{"after":\#(flag),"#
                + #""before":null}}},"set":"ios-prod","version":4}"#),
        .answer(
            ChangeList.self,
            #"{"changes":[{"appliedVersion":5,"approvals":[{"actor":"bob","reason":"ok","#
                + #""time":"2026-12-02T11:00:00Z"}],"author":"alice","baseVersion":4,"cohorts":[],"createdAt":"2026-12-02T10:00:00Z","#
                + #""decidedAt":"2026-12-02T12:00:00Z","decidedBy":"carol","flags":[{"after":\#(flag),"before":null,"#
                + #""key":"a"}],"id":7,"set":"ios-prod","state":"applied","title":"Add a"}],"set":"ios-prod"}"#),
        .answer(
            ChangeInfo.self,
            #"{"applyAt":"2026-12-03T09:00:00Z","approvals":[],"author":"alice","baseVersion":4,"cohorts":[{"after":null,"before":\#(cohort),"#
                + #""key":"beta"}],"createdAt":"2026-12-02T10:00:00Z","decidedAt":"2026-12-02T12:00:00Z","#
                + #""decidedBy":"bob","failure":"3 problems","flags":[],"id":8,"reason":"tidy","set":"ios-prod","#
                + #""state":"failed","title":"Drop beta"}"#),
        .answer(
            ChangeAnswer.self,
            #"{"change":{"approvals":[],"author":"alice","baseVersion":4,"cohorts":[],"#
                + #""createdAt":"2026-12-02T10:00:00Z","flags":[{"after":\#(flag),"before":null,"key":"a"}],"id":9,"#
                + #""set":"ios-prod","state":"open","title":"Add a"},"cohorts":[],"conflicts":[{"key":"a","#
                + #""kind":"flag"}],"currentVersion":6,"flags":[{"after":\#(flag),"before":\#(flag),"key":"a"}]}"#),
        .answer(
            History.self,
            #"{"set":"ios-prod","versions":[{"action":"flag.kill","actor":"alice","changed":[{"key":"new-checkout","#
                + #""kind":"flag"}],"createdAt":"2026-12-02T10:00:00Z","reason":"errors","subject":"new-checkout","#
                + #""version":4}]}"#),
        .answer(
            DiffAnswer.self,
            #"{"cohorts":[],"flags":[{"after":\#(flag),"before":null,"key":"a"}],"from":1,"set":"ios-prod","to":2}"#),
        .answer(
            DiffAnswer.self,
            #"{"cohorts":[{"after":null,"before":\#(cohort),"key":"beta"}],"flags":[],"set":"a","with":"b"}"#),
        .answer(
            AuditList.self,
            #"{"records":[{"action":"token.create","actor":"root","subject":"alice","time":"2026-12-02T10:00:00Z"},"#
                + #"{"action":"flag.kill","actor":"alice","reason":"errors","subject":"x","time":"2026-12-02T09:00:00Z","#
                + #""version":3}]}"#),
        .answer(
            EvaluationAnswer.self,
            #"{"at":"2026-12-02T10:00:00Z","key":"new-checkout","reason":"TARGETING_MATCH","#
                + #""steps":["rule beta-first matches"],"unit":"u-1","value":true,"variant":"beta-first","version":4}"#),
        .answer(
            EvaluationAnswer.self,
            #"{"at":"2026-12-02T10:00:00Z","errorCode":"FLAG_NOT_FOUND","errorMessage":"no flag \"x\"","key":"x","#
                + #""reason":"ERROR","steps":[],"unit":"u-1","value":null,"version":4}"#),
        .answer(
            Whoami.self,
            #"{"expiresAt":"2026-12-02T22:00:00Z","name":"alice","role":"editor","session":true,"sets":["staging"]}"#),
        .answer(Whoami.self, #"{"name":"root","role":"admin","session":false,"sets":null}"#),
        .answer(
            SessionAnswer.self,
            #"{"actor":"alice","expiresAt":"2026-12-02T22:00:00Z","name":"session-1","role":"editor","sets":null,"#
                + #""token":"fss_x"}"#),
        .answer(SessionEnded.self, #"{"revoked":true}"#),
        .answer(
            TokenList.self,
            #"{"tokens":[{"createdAt":"2026-12-01T00:00:00Z","lastUsedAt":"2026-12-02T09:00:00Z","name":"alice","#
                + #""role":"editor","sets":["staging"]},{"createdAt":"2026-12-02T00:00:00Z","expiresAt":"#
                + #""2026-12-02T12:00:00Z","name":"session-1","revokedAt":"2026-12-02T01:00:00Z","role":"editor","#
                + #""sessionOf":"alice","sets":null}]}"#),
        .answer(
            CreatedToken.self,
            #"{"createdAt":"2026-12-01T00:00:00Z","expiresAt":"2027-03-01T00:00:00Z","name":"ci","role":"viewer","#
                + #""sets":null,"token":"fsa_secret"}"#),
        .answer(RevokedToken.self, #"{"name":"alice","revoked":true}"#),
        .answer(
            FlagList.self, #"{"flags":{"a":\#(flag),"b":{"default":3,"type":"int"}},"set":"ios-prod","version":4}"#),
        .answer(FlagAnswer.self, #"{"flag":\#(flag),"key":"a","set":"ios-prod","version":4}"#),
        .answer(
            CohortList.self,
            #"{"cohorts":{"beta":\#(cohort)},"set":"ios-prod","usedBy":{"beta":["new-checkout"]},"version":4}"#),
        .answer(CohortAnswer.self, #"{"cohort":\#(cohort),"name":"beta","set":"ios-prod","usedBy":[],"version":4}"#),
        .answer(
            KeyList.self,
            #"{"keys":[{"createdAt":"2026-12-01T00:00:00Z","name":"ios-app","set":"ios-prod"},"#
                + #"{"createdAt":"2026-12-01T00:00:00Z","name":"old","revokedAt":"2026-12-02T00:00:00Z","set":"ios-prod"}]}"#
        ),
        .answer(
            CreatedKey.self, #"{"createdAt":"2026-12-01T00:00:00Z","name":"ios-app","set":"ios-prod","token":"fsk_x"}"#),
        .answer(RevokedKey.self, #"{"name":"ios-app","revoked":true,"set":"ios-prod"}"#),
        .answer(
            SigningKeyList.self,
            #"{"keys":[{"createdAt":"2026-12-01T00:00:00Z","id":"9f1c2a7d0e4b5c68","publicKey":"AAAA","state":"active"}]}"#
        ),
        .answer(
            SigningKeyInfo.self,
            #"{"createdAt":"2026-12-01T00:00:00Z","id":"21fe31dfa154a261","publicKey":"BBBB","state":"published"}"#),
        .answer(
            ClientsAnswer.self,
            #"{"instances":[{"app":{"name":"Shop","version":"5.3.0"},"appliedAt":null,"#
                + #""capabilities":{"operators":["eq","in"],"schema":1},"id":"in_b","lastSeen":"2026-12-02T10:00:03Z","#
                + #""sdk":{"name":"FlagClient","version":"2.0.0"},"version":null}],"set":"ios-prod","silent":2}"#),
        .answer(
            ClientsAnswer.self,
            #"{"instances":[{"app":null,"appliedAt":null,"capabilities":{"operators":["eq"],"schema":1},"#
                + #""enums":{"checkout-theme":{"default":"blue","values":["blue","green"]},"size":{"values":["s"]}},"#
                + #""id":"in_c","lastSeen":"2026-12-02T10:00:03Z","sdk":{"name":"FlagClient","version":"2.0.0"},"#
                + #""version":1}],"set":"ios-prod","silent":0}"#),
        .answer(
            UsageAnswer.self,
            #"{"days":30,"flags":[{"days":[{"day":"2026-12-01","evaluations":234,"variants":{"":10,"on":224}}],"#
                + #""key":"a","lastEvaluated":"2026-12-01T10:00:00Z"},{"days":[],"key":"b","lastEvaluated":null}],"#
                + #""sdks":[{"instances":840,"name":"FlagClient","version":"2.0.0"}],"set":"ios-prod"}"#),
        .answer(
            PropagationAnswer.self,
            #"{"active":850,"applied":842,"lagging":[\#(instance)],"p50Ms":1840,"p99Ms":2950,"set":"ios-prod","#
                + #""silent":3,"version":41,"written":{"ms":12.4,"streams":850}}"#),
        .answer(
            PropagationAnswer.self,
            #"{"active":0,"applied":0,"lagging":[],"p50Ms":null,"p99Ms":null,"set":"ios-prod","silent":0,"version":2,"#
                + #""written":null}"#),
        .answer(
            ErrorAnswer.self,
            #"{"error":{"code":"not_found","message":"no flag set \"x\"","path":null,"subject":"set"}}"#),
        .answer(
            ErrorAnswer.self,
            #"{"error":{"code":"conflict","currentVersion":5,"message":"flag set \"a\" is at version 5, not 4","#
                + #""path":null}}"#),
        .answer(
            ErrorAnswer.self,
            #"{"error":{"code":"invalid_flag_set","message":"the flag set would be invalid","path":"flags.a","#
                + #""problems":[{"message":"is not a bool","path":"flags.a.default"}]}}"#),
        .answer(
            ErrorAnswer.self,
            #"{"error":{"active":850,"code":"incompatible_clients","constructs":["operator \"semver_gte\""],"#
                + #""lacking":3,"message":"3 of 850","path":null,"sdks":[{"instances":3,"name":"FlagClient","#
                + #""version":"1.2.0"}]}}"#),
        .answer(
            ErrorAnswer.self,
            #"{"error":{"active":3,"apps":[{"instances":1,"name":"Shop","version":"5.2.0"}],"#
                + #""code":"incompatible_clients","constructs":["value \"orange\" in flag \"checkout-theme\""],"#
                + #""lacking":1,"message":"1 of 3","path":null,"sdks":[{"instances":1,"name":"FlagClient","#
                + #""version":"2.0.0"}]}}"#),
        .answer(
            EndpointTable.self,
            #"{"endpoints":{"kill":{"confirmsPerson":false,"method":"POST","#
                + #""role":"editor","template":"/v1/admin/sets/{set}/flags/{key}/kill","wholeServer":false,"#
                + #""writesSet":true}}}"#),
    ]

    static let requests: [Vector] = [
        .request(NoRequest.self, "{}"),
        .request(ChangeRequest.self, #"{"allowIncompatible":true,"reason":"errors"}"#),
        .request(CreateSetRequest.self, #"{"document":{"flags":{}},"name":"web","reason":"new app"}"#),
        .request(ImportRequest.self, #"{"document":{"flags":{"a":\#(flag)}},"dryRun":true}"#),
        .request(SettingsRequest.self, #"{"compatibility":"warn","reason":"migration"}"#),
        .request(SettingsRequest.self, #"{"reason":"four eyes","reviews":"required"}"#),
        .request(ChangeListQuery.self, #"{"limit":20,"state":"open,approved"}"#),
        .request(ScheduleRequest.self, #"{"at":"2026-12-07T09:00:00Z","reason":"Monday morning"}"#),
        .request(HistoryQuery.self, #"{"key":"a","limit":5}"#),
        .request(DiffQuery.self, #"{"from":1,"to":2}"#),
        .request(RollbackRequest.self, #"{"reason":"bad rule","version":3}"#),
        .request(
            AuditQuery.self,
            #"{"actor":"alice","limit":10,"set":"ios-prod","since":"2026-12-01T00:00:00Z","subject":"a","#
                + #""until":"2026-12-02T00:00:00Z"}"#),
        .request(
            EvaluateRequest.self,
            #"{"at":"2026-12-02T10:00:00Z","attributes":{"country":"DE"},"key":"a","unitID":"u-1"}"#),
        .request(
            CreateTokenRequest.self, #"{"expires":"90d","name":"alice","reason":"joined","role":"editor","sets":["a"]}"#
        ),
        .request(FlagListQuery.self, #"{"expired":true,"kind":"release"}"#),
        .request(PutFlagRequest.self, #"{"flag":\#(flag)}"#),
        .request(DefaultRequest.self, #"{"valueText":"3"}"#),
        .request(ExpireRequest.self, #"{"at":"2027-01-01T00:00:00Z","keep":true}"#),
        .request(OverrideRequest.self, #"{"for":"2h","unit":"u-42","value":true}"#),
        .request(RemoveOverrideRequest.self, #"{"cohort":"qa","reason":"done"}"#),
        .request(
            RolloutRequest.self,
            #"{"salt":"s","schedule":[{"at":"2026-12-01T09:00:00Z","percent":1.0},{"at":"2026-12-02T09:00:00Z","#
                + #""percent":50.5}],"value":true}"#),
        .request(RolloutRequest.self, #"{"preset":"apple","start":"2026-12-01T09:00:00Z","valueText":"true"}"#),
        .request(RuleRequest.self, #"{"rule":{"cohort":"beta","valueText":"true"}}"#),
        .request(PromoteRequest.self, #"{"from":"staging","withCohorts":true}"#),
        .request(PutCohortRequest.self, #"{"cohort":\#(cohort)}"#),
        .request(CreateKeyRequest.self, #"{"name":"ios-app"}"#),
        .request(ClientsQuery.self, #"{"within":300}"#),
        .request(UsageQuery.self, #"{"days":7,"key":"a"}"#),
    ]

    @Test(arguments: answers + requests)
    func aVectorEncodesBackToItsBytes(_ vector: Vector) throws {
        #expect(String(decoding: try vector.roundTrip(Array(vector.json.utf8)), as: UTF8.self) == vector.json)
    }

    /// The vectors are canonical: `JSONValue` writes them the same (members sorted, compact), which is what the
    /// coder promises for every shape.
    @Test(arguments: answers + requests)
    func aVectorIsCanonical(_ vector: Vector) throws {
        let parsed = try JSONReader.parse(Array(vector.json.utf8))
        #expect(String(decoding: parsed.canonicalBytes, as: UTF8.self) == vector.json)
    }

    @Test func everyAnswerOfTheTableHasAVector() {
        let covered = Set((Self.answers + Self.requests).map(\.name))
        let shapes: [Any.Type] = [
            Health.self, SetList.self, ImportAnswer.self, SettingsAnswer.self, History.self, DiffAnswer.self,
            AuditList.self, EvaluationAnswer.self, Whoami.self, SessionAnswer.self, SessionEnded.self, TokenList.self,
            CreatedToken.self, RevokedToken.self, FlagList.self, FlagAnswer.self, CohortList.self, CohortAnswer.self,
            KeyList.self, CreatedKey.self, RevokedKey.self, SigningKeyList.self, SigningKeyInfo.self,
            ClientsAnswer.self, UsageAnswer.self, PropagationAnswer.self, ErrorAnswer.self, EndpointTable.self,
            ChangeRequest.self, CreateSetRequest.self, ImportRequest.self, SettingsRequest.self, HistoryQuery.self,
            DiffQuery.self, RollbackRequest.self, AuditQuery.self, EvaluateRequest.self, CreateTokenRequest.self,
            FlagListQuery.self, PutFlagRequest.self, DefaultRequest.self, ExpireRequest.self, OverrideRequest.self,
            RemoveOverrideRequest.self, RolloutRequest.self, RuleRequest.self, PromoteRequest.self,
            PutCohortRequest.self, CreateKeyRequest.self, ClientsQuery.self, UsageQuery.self, ChangeList.self,
            ChangeInfo.self, ChangeAnswer.self, ChangeListQuery.self, ScheduleRequest.self,
        ]
        for shape in shapes { #expect(covered.contains(String(describing: shape)), "\(shape) has no vector") }
    }
}
