import FlagCore
import Foundation
import Testing

@testable import FlagServer

/// Prerequisites through the admin API (docs/core.md, "Prerequisites"): written as people write them, stored and
/// served in the wire form, checked against the set, kept from being deleted or archived while required, answered
/// by OFREP, and held back by the compatibility gate from clients that do not know them.
@Suite("Prerequisites through the API")
struct PrerequisiteRouteTests {
    static let express = "/v1/admin/sets/ios-prod/flags/express"
    static func body(requiring flag: String = "new-checkout", values: String = "[true]") -> String {
        #"{"flag":{"type":"bool","default":false,"prerequisites":[{"flag":"\#(flag)","values":\#(values)}],"#
            + #""rules":[{"name":"everyone","conditions":[],"value":true}]}}"#
    }

    @Test func aFlagRequiringAnotherIsWrittenServedAndAnsweredByOFREP() async throws {
        try await withHarness { harness in
            #expect(try harness.send("PUT", Self.express, body: Self.body()).status == 201)
            // Stored and served in the wire form: a first rule of `prerequisite` conditions.
            let served = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            #expect(served.text.contains(#""op":"prerequisite""#))
            let set = try FlagSet.decode(Array(served.text.utf8))
            #expect(set.flags["express"]?.prerequisites == [Prerequisite(flag: "new-checkout", values: [.bool(true)])])
            // u-1 has the new checkout (rule beta-first); another unit does not.
            let context = { (unit: String) in #"{"context":{"targetingKey":"\#(unit)"}}"# }
            let met = try harness.send(
                "POST", "/ofrep/v1/evaluate/flags/express", token: harness.sdk, body: context("u-1"))
            #expect(try met.json("value") == .bool(true))
            // `classic` is for those without the new checkout: u-1 is not one of them.
            let classic = "/v1/admin/sets/ios-prod/flags/classic"
            #expect(try harness.send("PUT", classic, body: Self.body(values: "[false]")).status == 201)
            let failed = try harness.send(
                "POST", "/ofrep/v1/evaluate/flags/classic", token: harness.sdk, body: context("u-1"))
            #expect(try failed.json("reason") == .string("PREREQUISITE_FAILED"))
            #expect(try failed.json("variant") == .string("new-checkout"))
            #expect(try failed.json("value") == .bool(false))
        }
    }

    @Test func aRequiredFlagCannotBeDeletedOrArchivedAndABadOneIsRefusedAtItsPath() async throws {
        try await withHarness { harness in
            let missing = try harness.send("PUT", Self.express, body: Self.body(requiring: "gone"))
            #expect(missing.status == 422)
            #expect(try missing.json("error.path") == .string("flags.express.prerequisites[0].flag"))
            let wrongType = try harness.send("PUT", Self.express, body: Self.body(values: #"["yes"]"#))
            #expect(try wrongType.json("error.path") == .string("flags.express.prerequisites[0].values[0]"))

            #expect(try harness.send("PUT", Self.express, body: Self.body()).status == 201)
            for (method, path) in [
                ("DELETE", "/v1/admin/sets/ios-prod/flags/new-checkout"),
                ("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/archive"),
            ] {
                let refused = try harness.send(method, path, body: method == "POST" ? "{}" : "")
                #expect(refused.status == 409, "\(method) \(path)")
                #expect(try refused.json("error.code") == .string("flag_required"))
                #expect(try refused.json("error.message")?.stringValue?.contains("(express)") == true)
            }
            #expect(harness.app.service.state("ios-prod")?.compiled.flag("new-checkout")?.archived == false)
            // Once nothing requires it, it goes.
            #expect(try harness.send("DELETE", Self.express).status == 200)
            #expect(try harness.send("DELETE", "/v1/admin/sets/ios-prod/flags/new-checkout").status == 200)
        }
    }

    @Test func theGateRefusesPrerequisitesThatActiveClientsDoNotKnow() async throws {
        try await withHarness { harness in
            let old = try await TelemetryRouteTests.openStream(harness)
            var operators = ClientCapabilities.current.operators
            operators.remove(Operator.prerequisite.name)
            let report = TelemetryRouteTests.report(old, sdk: "1.2.0", operators: operators)
            #expect(try TelemetryRouteTests.post(harness, report).status == 204)

            let refused = try harness.send("PUT", Self.express, body: Self.body())
            #expect(refused.status == 422)
            #expect(try refused.json("error.code") == .string("incompatible_clients"))
            #expect(try refused.json("error.constructs[0]")?.stringValue?.contains("prerequisite") == true)
            #expect(try harness.send("PUT", Self.express + "?allowIncompatible=true", body: Self.body()).status == 201)
        }
    }
}
