import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// Comparing two sets (staging against prod) and promoting one flag's configuration from one to the other; the
/// flags that use each cohort.
@Suite("Compare sets and promote a flag")
struct CompareAndPromoteTests {
    /// `staging`: the fixture with the checkout flag at a 50 % rollout and a rule on a cohort prod lacks.
    static func staging(_ harness: AppHarness) throws {
        let document = fixtureDocument.replacingOccurrences(of: "ios-prod", with: "staging")
        #expect(try harness.send("PUT", "/v1/admin/sets/staging", body: "{\"document\":\(document)}").status == 201)
        let base = "/v1/admin/sets/staging"
        let steps = [
            ("PUT", "\(base)/cohorts/qa", #"{"cohort":{"include":["qa-1"]}}"#),
            (
                "PUT", "\(base)/cohorts/testers",
                #"{"cohort":{"groups":[[{"attribute":"","op":"in_cohort","values":["qa"]}]]}}"#
            ),
            ("POST", "\(base)/flags/new-checkout/rules", #"{"rule":{"cohort":"testers","valueText":"true"}}"#),
            ("PUT", "\(base)/flags/new-checkout/rollout", #"{"percent":50,"valueText":"true"}"#),
        ]
        for (method, target, body) in steps {
            #expect((200...201).contains(try harness.send(method, target, body: body).status), "\(target)")
        }
    }

    @Test func theDiffOfTwoSetsListsTheFlagsThatDiffer() async throws {
        try await withHarness { harness in
            try Self.staging(harness)
            let diff = try harness.send("GET", "/v1/admin/sets/ios-prod/diff?with=staging")
            #expect(diff.status == 200)
            #expect(try diff.json("with") == .string("staging"))
            guard case .array(let flags)? = try diff.json("flags"), case .array(let cohorts)? = try diff.json("cohorts")
            else {
                Issue.record("no diff in \(diff)")
                return
            }
            #expect(flags.map { $0.member("key") } == [.string("new-checkout")])
            #expect(flags.first?.member("before")?.member("rollout") == nil)
            #expect(flags.first?.member("after")?.member("rollout")?.member("percent") == .int(50))
            #expect(cohorts.map { $0.member("key") } == [.string("qa"), .string("testers")])
            #expect(cohorts.first?.member("before") == .null)
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/diff?with=nowhere").status == 404)
        }
    }

    @Test func promotingAFlagThatNeedsCohortsTheTargetLacksIsRefusedUnlessTheyComeToo() async throws {
        try await withHarness { harness in
            try Self.staging(harness)
            let promote = "/v1/admin/sets/ios-prod/flags/new-checkout/promote"
            let refused = try harness.send("POST", promote, body: #"{"from":"staging","reason":"ship"}"#)
            #expect(refused.status == 422)
            guard case .array(let problems)? = try refused.json("error.problems") else {
                Issue.record("no problems in \(refused)")
                return
            }
            #expect(problems.compactMap { $0.member("message")?.text?.prefix(18) } == ["uses cohort 'teste"])
            #expect(harness.app.service.state("ios-prod")?.version == 1)

            let promoted = try harness.send(
                "POST", promote, body: #"{"from":"staging","withCohorts":true,"reason":"ship"}"#)
            #expect(promoted.status == 200)
            #expect(try promoted.json("flag.rollout.percent") == .int(50))
            let state = try #require(harness.app.service.state("ios-prod"))
            #expect(state.version == 2)
            // The flag's cohort and the cohort that one names came along; the set's own cohorts stayed.
            #expect(state.compiled.cohort("testers") != nil && state.compiled.cohort("qa") != nil)
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/diff?with=staging").json("flags") == .array([]))
            let record = try #require(try harness.app.service.audit("ios-prod", limit: 1).first)
            #expect((record.action, record.subject, record.reason) == ("flag.promote", "new-checkout", "ship"))

            #expect(try harness.send("POST", promote, body: #"{"from":"ios-prod"}"#).status == 400)
            let missing = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/nope/promote", body: #"{"from":"staging"}"#)
            #expect(missing.status == 404)
        }
    }

    @Test func promotingAFlagThatRequiresFlagsTheTargetLacksIsRefusedUnlessTheyComeToo() async throws {
        try await withHarness { harness in
            try Self.staging(harness)
            let base = "/v1/admin/sets/staging/flags"
            // In staging, express requires dark-mode, which requires new-checkout; prod has only new-checkout.
            let steps = [
                ("PUT", "\(base)/dark-mode", #"{"flag":{"type":"bool","default":false}}"#),
                ("PUT", "\(base)/dark-mode/prerequisites/new-checkout", #"{"values":[true]}"#),
                ("PUT", "\(base)/express", #"{"flag":{"type":"bool","default":false}}"#),
                ("PUT", "\(base)/express/prerequisites/dark-mode", #"{"values":[true]}"#),
            ]
            for (method, target, body) in steps {
                #expect((200...201).contains(try harness.send(method, target, body: body).status), "\(target)")
            }
            let promote = "/v1/admin/sets/ios-prod/flags/express/promote"
            let refused = try harness.send("POST", promote, body: #"{"from":"staging"}"#)
            #expect(refused.status == 422)
            #expect(try refused.json("error.problems[0].path") == .string("flags.express.prerequisites"))
            #expect(
                try refused.json("error.problems[0].message")?.stringValue?.hasSuffix(
                    "promote with withPrerequisites to copy it") == true)

            let promoted = try harness.send("POST", promote, body: #"{"from":"staging","withPrerequisites":true}"#)
            #expect(promoted.status == 200, "\(promoted.text)")
            let state = try #require(harness.app.service.state("ios-prod"))
            // Express and dark-mode came; prod's own new-checkout stayed as it was.
            #expect(state.compiled.flag("dark-mode")?.prerequisites.map(\.flag) == ["new-checkout"])
            #expect(state.compiled.flag("express") != nil)
            #expect(state.compiled.flag("new-checkout")?.rollout == nil)
        }
    }

    @Test func aTokenLimitedToTheTargetMayNotPromoteFromASetItCannotSee() async throws {
        try await withHarness { harness in
            try Self.staging(harness)
            let token = try PeopleAndRolesTests.create(harness, #"{"name":"pat","role":"editor","sets":["ios-prod"]}"#)
            let response = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/promote", token: token,
                body: #"{"from":"staging","withCohorts":true}"#)
            #expect(response.status == 403)
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/diff?with=staging", token: token).status == 403)
        }
    }

    @Test func eachCohortNamesTheFlagsThatUseIt() async throws {
        try await withHarness { harness in
            let list = try harness.send("GET", "/v1/admin/sets/ios-prod/cohorts")
            #expect(try list.json("usedBy.beta") == .array([.string("new-checkout")]))
            #expect(try list.json("usedBy.de") == .array([]))
            let one = try harness.send("GET", "/v1/admin/sets/ios-prod/cohorts/beta")
            #expect(try one.json("usedBy") == .array([.string("new-checkout")]))
        }
    }
}
