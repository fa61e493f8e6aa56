import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// The compatibility gate for the values of enum flags (docs/telemetry.md, "The compatibility gate"): a write that
/// makes a flag able to serve a value that active instances reading it as an enum do not know is refused, naming
/// the value, the share, the apps and SDKs, and what those instances serve instead.
@Suite("The compatibility gate: values of enum flags")
struct ValueGateTests {
    static let flags = "/v1/admin/sets/ios-prod/flags"
    static let theme =
        #"{"flag":{"type":"string","kind":"ops","values":["blue","green","orange"],"default":"blue"}}"#

    /// A report of instance `id` from app version `app` that reads `checkout-theme` as an enum of `values` (none:
    /// it reads no enum).
    static func report(_ id: String, app: String, values: [String]?, default value: String? = "blue") -> String {
        let report = TelemetryReport(
            instance: id, sdk: .init(name: "FlagClient", version: "2.0.0"), app: .init(name: "Shop", version: app),
            version: 1, capabilities: .current,
            enums: values.map { ["checkout-theme": .init(values: $0, defaultValue: value)] } ?? [:])
        return String(decoding: report.encoded(), as: UTF8.self)
    }

    /// Three active instances: Shop 5.2.0 knows blue and green, Shop 5.3.0 knows orange too, and one reads no enum.
    static func threeInstances(_ harness: AppHarness, oldDefault: String? = "blue") async throws {
        for (app, values) in [("5.2.0", ["blue", "green"]), ("5.3.0", ["blue", "green", "orange"]), ("5.1.0", nil)] {
            let id = try await TelemetryRouteTests.openStream(harness)
            let body = report(id, app: app, values: values, default: app == "5.2.0" ? oldDefault : "blue")
            #expect(try TelemetryRouteTests.post(harness, body).status == 204)
        }
    }

    static func orangeRule(_ name: String = "orange-for-all") -> String {
        #"{"rule":{"name":"\#(name)","conditions":[],"value":"orange"}}"#
    }

    @Test func aValueThatInstancesReadingTheFlagAsAnEnumDoNotKnowIsRefused() async throws {
        try await withHarness { harness in
            #expect(try harness.send("PUT", "\(Self.flags)/checkout-theme", body: Self.theme).status == 201)
            try await Self.threeInstances(harness)

            let refused = try harness.send("POST", "\(Self.flags)/checkout-theme/rules", body: Self.orangeRule())
            #expect(refused.status == 422)
            #expect(try refused.json("error.code") == .string("incompatible_clients"))
            #expect(
                try refused.json("error.message")
                    == .string(
                        #"value "orange" in flag "checkout-theme" is not known to 1 of 3 active instances (33.33 %): "#
                            + #"Shop 5.2.0 with FlagClient 2.0.0 (1); they will serve their compiled-in default "#
                            + #""blue" instead. Pass allowIncompatible=true (flagctl --force) to write it anyway, or "#
                            + "set the set's compatibility to warn."))
            #expect(
                try refused.json("error.constructs") == .array([.string(#"value "orange" in flag "checkout-theme""#)]))
            #expect(try refused.json("error.lacking") == .int(1))
            #expect(try refused.json("error.active") == .int(3))
            #expect(try refused.json("error.sdks[0].version") == .string("2.0.0"))
            #expect(try refused.json("error.apps[0].name") == .string("Shop"))
            #expect(try refused.json("error.apps[0].version") == .string("5.2.0"))
            #expect(harness.app.service.state("ios-prod")?.version == 2)

            // Every instance knows green; the kill value is the default, which everyone knows.
            let green = #"{"rule":{"name":"green","conditions":[],"value":"green"}}"#
            #expect(try harness.send("POST", "\(Self.flags)/checkout-theme/rules", body: green).status == 200)
            #expect(try harness.send("POST", "\(Self.flags)/checkout-theme/kill").status == 200)
            #expect(try harness.send("POST", "\(Self.flags)/checkout-theme/restore").status == 200)

            let forced = try harness.send(
                "POST", "\(Self.flags)/checkout-theme/rules?allowIncompatible=true", body: Self.orangeRule())
            #expect(forced.status == 200)
            #expect(try forced.json("warnings[0]")?.stringValue?.hasPrefix(#"value "orange" in flag"#) == true)
            let audit = try harness.send("GET", "/v1/admin/sets/ios-prod/audit?limit=1")
            let reason = try audit.json("records[0].reason")?.stringValue ?? ""
            #expect(reason.contains(#"allowIncompatible: value "orange" in flag "checkout-theme" is not known"#))
            // Once the flag can serve it, serving it elsewhere introduces nothing.
            let again = try harness.send("POST", "\(Self.flags)/checkout-theme/rules", body: Self.orangeRule("again"))
            #expect(again.status == 200)
        }
    }

    /// A default, a kill value, an override, a rollout or a new flag serving the value meets the gate as a rule does.
    @Test(arguments: [
        ("PUT", "checkout-theme/default", #"{"value":"orange"}"#),
        (
            "PUT", "checkout-theme",
            #"{"flag":{"type":"string","values":["blue","orange"],"default":"blue","killValue":"orange"}}"#
        ),
        ("POST", "checkout-theme/overrides", #"{"unit":"u-1","value":"orange"}"#),
        ("PUT", "checkout-theme/rollout", #"{"value":"orange","percent":5}"#),
    ])
    func everyPlaceAFlagServesFromMeetsTheGate(_ method: String, _ path: String, _ body: String) async throws {
        try await withHarness { harness in
            #expect(try harness.send("PUT", "\(Self.flags)/checkout-theme", body: Self.theme).status == 201)
            try await Self.threeInstances(harness)
            let refused = try harness.send(method, "\(Self.flags)/\(path)", body: body)
            #expect(refused.status == 422, "\(refused.text)")
            #expect(
                try refused.json("error.constructs") == .array([.string(#"value "orange" in flag "checkout-theme""#)]))
        }
    }

    /// Instances that read a flag the set does not have yet serve their default: creating it serving a value they
    /// do not know is refused too.
    @Test func creatingTheFlagMeetsTheGate() async throws {
        try await withHarness { harness in
            try await Self.threeInstances(harness)
            let orange = Self.theme.replacingOccurrences(of: #""default":"blue""#, with: #""default":"orange""#)
            let refused = try harness.send("PUT", "\(Self.flags)/checkout-theme", body: orange)
            #expect(refused.status == 422)
            #expect(try harness.send("PUT", "\(Self.flags)/checkout-theme", body: Self.theme).status == 201)
        }
    }

    /// What they serve instead is the default each reported; one that did not report it serves "their default".
    @Test func theInstancesDefaultsAreNamedAsReported() async throws {
        try await withHarness { harness in
            #expect(try harness.send("PUT", "\(Self.flags)/checkout-theme", body: Self.theme).status == 201)
            try await Self.threeInstances(harness, oldDefault: nil)
            let unreported = try harness.send("POST", "\(Self.flags)/checkout-theme/rules", body: Self.orangeRule())
            let message = try unreported.json("error.message")?.stringValue ?? ""
            #expect(message.contains("; they will serve their compiled-in default instead."), "\(message)")

            let id = try await TelemetryRouteTests.openStream(harness)
            let green = Self.report(id, app: "5.2.1", values: ["blue", "green"], default: "green")
            #expect(try TelemetryRouteTests.post(harness, green).status == 204)
            let mixed = try harness.send("POST", "\(Self.flags)/checkout-theme/rules", body: Self.orangeRule())
            let text = try mixed.json("error.message")?.stringValue ?? ""
            #expect(text.contains("is not known to 2 of 4 active instances (50.00 %)"), "\(text)")
            #expect(
                text.contains(#"they will serve their compiled-in defaults, "green" (1), not reported (1) instead"#),
                "\(text)")
        }
    }

    @Test func warnWritesItWithAWarningAndOffSaysNothing() async throws {
        try await withHarness { harness in
            #expect(try harness.send("PUT", "\(Self.flags)/checkout-theme", body: Self.theme).status == 201)
            try await Self.threeInstances(harness)
            let settings = "/v1/admin/sets/ios-prod/settings"
            #expect(try harness.send("PUT", settings, body: #"{"compatibility":"warn"}"#).status == 200)
            let warned = try harness.send("POST", "\(Self.flags)/checkout-theme/rules", body: Self.orangeRule())
            #expect(warned.status == 200)
            #expect(try warned.json("warnings[0]")?.stringValue?.contains("Shop 5.2.0 with FlagClient 2.0.0") == true)

            #expect(try harness.send("PUT", settings, body: #"{"compatibility":"off"}"#).status == 200)
            let quiet = try harness.send("PUT", "\(Self.flags)/checkout-theme/default", body: #"{"value":"orange"}"#)
            #expect(quiet.status == 200)
            #expect(try quiet.json("warnings") == nil)
        }
    }

    /// The clients route shows what each instance knows, so that `flagctl lint --against` can judge a file offline.
    @Test func theClientsAnswerCarriesTheKnownValues() async throws {
        try await withHarness { harness in
            try await Self.threeInstances(harness)
            let clients = try harness.send("GET", "/v1/admin/sets/ios-prod/clients?within=300")
            #expect(clients.status == 200)
            guard case .array(let instances)? = try clients.json("instances") else {
                Issue.record("no instances: \(clients.text)")
                return
            }
            var known: [String: JSONValue] = [:]
            for case .object(let instance) in instances {
                guard case .object(let app)? = instance["app"], case .string(let version)? = app["version"] else {
                    continue
                }
                known[version] = instance["enums"] ?? .null
            }
            #expect(
                known["5.2.0"]
                    == .object([
                        "checkout-theme": .object([
                            "values": .array([.string("blue"), .string("green")]), "default": .string("blue"),
                        ])
                    ]))
            #expect(known["5.1.0"] == .null)
        }
    }
}
