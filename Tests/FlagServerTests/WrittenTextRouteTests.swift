import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// Text admins write (descriptions, rule names, reasons) is refused with a control character when it is written: a
/// 422 at the item's path for a member of a flag or a cohort, a 400 naming the member for a member of the request.
/// What was stored before keeps being served and the rest of its set stays writable.
@Suite("Admin API: control characters in written text")
struct WrittenTextRouteTests {
    @Test func aFlagsDescriptionWithAnEscapeIsA422NamingIt() async throws {
        try await withHarness { harness in
            let response = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/banner",
                body: #"{"flag":{"type":"bool","default":false,"description":"Shows \u001b[2Jthe banner"}}"#)
            #expect(response.status == 422)
            #expect(try response.json("error.code") == .string("invalid_flag_set"))
            #expect(try response.json("error.path") == .string("flags.banner.description"))
            #expect(try response.problemPaths() == ["flags.banner.description"])
            #expect(
                try response.json("error.message")?.text?.contains(
                    "contains the control character U+001B at position 7; write printable text") == true)
            #expect(harness.app.service.state("ios-prod")?.version == 1)
        }
    }

    @Test func aDescriptionMayHoldLineBreaksAndTabs() async throws {
        try await withHarness { harness in
            let flag = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/banner",
                body: #"{"flag":{"type":"bool","default":false,"description":"Shows the banner.\n\tSee #12."}}"#)
            #expect(flag.status == 201)
            #expect(try flag.json("flag.description") == .string("Shows the banner.\n\tSee #12."))
            let cohort = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/cohorts/qa",
                body: #"{"cohort":{"description":"QA devices\nand staff","include":["qa-1"]}}"#)
            #expect(cohort.status == 201)
            let escaped = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/cohorts/qa2", body: #"{"cohort":{"description":"QA\u009b2J"}}"#)
            #expect(escaped.status == 422)
            #expect(try escaped.json("error.path") == .string("cohorts.qa2.description"))
        }
    }

    @Test func aRuleNameWithALineBreakIsRefused() async throws {
        try await withHarness { harness in
            let put = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/banner",
                body:
                    #"{"flag":{"type":"bool","default":false,"rules":[{"name":"beta\nfirst","cohort":"beta","value":true}]}}"#
            )
            #expect(put.status == 422)
            #expect(try put.json("error.path") == .string("flags.banner.rules[0].name"))
            let added = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/rules",
                body: #"{"rule":{"name":"de\nonly","cohort":"de","value":true}}"#)
            #expect(added.status == 422)
            #expect(try added.json("error.path") == .string("flags.new-checkout.rules[1].name"))
            #expect(harness.app.service.state("ios-prod")?.version == 1)
        }
    }

    @Test func aReasonWithAnEscapeIsA400NamingIt() async throws {
        try await withHarness { harness in
            let kill = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: #"{"reason":"incident \u001b]0;x"}"#)
            #expect(kill.status == 400)
            #expect(try kill.json("error.code") == .string("bad_request"))
            #expect(try kill.json("error.path") == .string("reason"))
            #expect(
                try kill.json("error.message")
                    == .string(
                        "\"reason\" contains the control character U+001B at position 10; write printable text on one "
                            + "line"))
            let query = try harness.send("DELETE", "/v1/admin/sets/ios-prod/flags/search-timeout-ms?reason=a%0Ab")
            #expect(query.status == 400)
            #expect(try query.json("error.path") == .string("reason"))
            let key = try harness.send("POST", "/v1/admin/sets/ios-prod/keys", body: #"{"name":"web","reason":"\t"}"#)
            #expect(key.status == 400)
            #expect(try key.json("error.path") == .string("reason"))
            let hook = try harness.send(
                "POST", "/v1/admin/webhooks",
                body: #"{"name":"chat","url":"https://example.invalid/","description":"ok\nfine\u001b"}"#)
            #expect(hook.status == 400)
            #expect(try hook.json("error.path") == .string("description"))
            #expect(try hook.json("error.message")?.text?.contains("U+001B at position 8") == true)
            let color = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/color", body: #"{"flag":{"type":"string","default":"a"}}"#)
            #expect(color.status == 201)
            let values = try harness.send(
                "PUT", "/v1/admin/sets/ios-prod/flags/color/values", body: #"{"values":["a","b\u0007"]}"#)
            #expect(values.status == 400)
            #expect(try values.json("error.path") == .string("values[1]"))
            #expect(harness.app.service.state("ios-prod")?.version == 2)
            #expect(
                try harness.send(
                    "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: #"{"reason":"incident 12"}"#
                ).status == 200)
        }
    }

    @Test func aChangeRequestsTitleOrAWithoutReviewReasonWithOneIsA400NamingIt() async throws {
        try await withHarness { harness in
            for (query, path) in [("propose=Turn%1Bon", "propose"), ("withoutReview=inci%0Adent", "withoutReview")] {
                let response = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill?\(query)")
                #expect(response.status == 400, "\(query)")
                #expect(try response.json("error.path") == .string(path))
                #expect(try response.json("error.message")?.text?.contains("at position 5") == true, "\(query)")
            }
            #expect(harness.app.service.state("ios-prod")?.version == 1)
        }
    }

    @Test func anImportCarryingOneIsRefusedWithTheItemsPath() async throws {
        try await withHarness { harness in
            let document = #"""
                {"schema":1,"flags":{"only":{"type":"bool","default":true,"owner":"growth\u001b"}},
                 "cohorts":{"qa":{"description":"ok\nfine"}}}
                """#
            for dryRun in [false, true] {
                let response = try harness.send(
                    "PUT", "/v1/admin/sets/ios-prod", body: #"{"dryRun":\#(dryRun),"document":\#(document)}"#)
                #expect(response.status == 422)
                #expect(try response.problemPaths() == ["flags.only.owner"])
            }
            let created = try harness.send(
                "POST", "/v1/admin/sets", body: #"{"name":"web-prod","document":\#(document)}"#)
            #expect(created.status == 422)
            #expect(try created.json("error.path") == .string("flags.only.owner"))
            #expect(harness.app.service.state("ios-prod")?.version == 1)
            #expect(harness.app.service.state("web-prod") == nil)
        }
    }

    /// A set written before these were refused: the service, under the routes, stores what it is given.
    @Test func aSetStoredWithOneKeepsBeingServedAndItsOtherFlagsStayWritable() async throws {
        try await withHarness { harness in
            let stored = #"""
                {"schema":1,"flags":{"old":{"type":"bool","default":false,"description":"old \u001b[31mred",
                 "rules":[{"name":"line\nbreak","conditions":[],"value":true}]}}}
                """#
            try harness.app.service.createSet(
                "legacy", from: FlagSet.decode(Array(stored.utf8)),
                note: ChangeNote(actor: "test", action: "set.create"))
            let read = try harness.send("GET", "/v1/admin/sets/legacy/flags/old")
            #expect(read.status == 200)
            #expect(try read.json("flag.description") == .string("old \u{1B}[31mred"))
            #expect(try harness.send("GET", "/v1/admin/sets/legacy").status == 200)
            let other = try harness.send(
                "PUT", "/v1/admin/sets/legacy/flags/new", body: #"{"flag":{"type":"bool","default":true}}"#)
            #expect(other.status == 201)
            #expect(try harness.send("POST", "/v1/admin/sets/legacy/flags/old/kill").status == 200)
            #expect(harness.app.service.state("legacy")?.version == 3)
            #expect(
                harness.app.service.state("legacy")?.compiled.flag("old")?.description == "old \u{1B}[31mred")
        }
    }
}
