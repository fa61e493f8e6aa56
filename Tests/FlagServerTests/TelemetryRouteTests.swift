import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagHTTP
@testable import FlagServer

/// Client telemetry on the app (docs/telemetry.md): ids issued on the client routes, reports taken and refused,
/// and what the admin API shows of them.
@Suite("Telemetry: instance ids, reports, clients, usage, propagation, the compatibility gate")
struct TelemetryRouteTests {
    /// Opens a stream as the SDK key and returns the instance id its head carries.
    static func openStream(_ harness: AppHarness, presenting id: String? = nil) async throws -> String {
        let headers = id.map { [("Flagstaff-Instance", $0)] } ?? []
        let recorder = harness.start("GET", "/v1/sets/ios-prod/stream", token: harness.sdk, headers: headers)
        let head = try #require(await recorder.waitForResponse(timeout: .patience))
        return try #require(head.headers["Flagstaff-Instance"])
    }

    static func report(
        _ id: String, version: Int? = 1, sdk: String = "9.9.9", operators: Set<String>? = nil,
        counts: TelemetryReport.Counts = [:]
    ) -> String {
        let report = TelemetryReport(
            instance: id, sdk: .init(name: "FlagClient", version: sdk), app: .init(name: "Shop", version: "5.3.0"),
            version: version, appliedAt: Date(timeIntervalSince1970: 1_800_000_000),
            capabilities: ClientCapabilities(
                schema: 1, operators: operators ?? ClientCapabilities.current.operators),
            counts: counts)
        return String(decoding: report.encoded(), as: UTF8.self)
    }

    static func post(_ harness: AppHarness, _ body: String, token: String? = nil) throws -> TestResponse {
        try harness.send("POST", "/v1/sets/ios-prod/telemetry", token: token ?? harness.sdk, body: body)
    }

    @Test func aStreamIssuesAnIdThatAReportNames() async throws {
        try await withHarness { harness in
            let id = try await Self.openStream(harness)
            #expect(ClientTelemetry.isWellFormed(id))
            var clients = try harness.send("GET", "/v1/admin/sets/ios-prod/clients")
            #expect(try clients.json("silent") == .int(1))
            #expect(try clients.json("instances") == .array([]))

            let answer = try Self.post(harness, Self.report(id))
            #expect(answer.status == 204)
            clients = try harness.send("GET", "/v1/admin/sets/ios-prod/clients")
            #expect(try clients.json("silent") == .int(0))
            #expect(try clients.json("instances[0].id") == .string(id))
            #expect(try clients.json("instances[0].sdk.version") == .string("9.9.9"))
            #expect(try clients.json("instances[0].app.name") == .string("Shop"))
            #expect(try clients.json("instances[0].version") == .int(1))
            #expect(try clients.json("instances[0].lastSeen") == .string(ISO8601.format(harness.clock.now)))
            let operators = try clients.json("instances[0].capabilities.operators")?.arrayValue
            #expect(operators?.contains(.string("semver_gte")) == true)
        }
    }

    @Test func aStreamOfTheAdminAPIGetsAnIdOnlyWhenItAsks() async throws {
        try await withHarness { harness in
            let watching = harness.start("GET", "/v1/sets/ios-prod/stream", token: harness.admin)
            let head = try #require(await watching.waitForResponse(timeout: .patience))
            #expect(head.headers["Flagstaff-Instance"] == nil)
            let asking = harness.start(
                "GET", "/v1/sets/ios-prod/stream", token: harness.admin, headers: [("Flagstaff-Instance", "new")])
            let issued = try #require(await asking.waitForResponse(timeout: .patience))
            #expect(issued.headers["Flagstaff-Instance"].map(ClientTelemetry.isWellFormed) == true)
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/clients").json("silent") == .int(1))
        }
    }

    @Test func anIdNobodyIssuedIsRefusedAndCounted() async throws {
        try await withHarness { harness in
            let answer = try Self.post(harness, Self.report("in_AAAAAAAAAAAAAAAAAAAAAA"))
            #expect(answer.status == 422)
            #expect(try answer.json("error.code") == .string("unknown_instance"))
            let metrics = String(decoding: try harness.send("GET", "/metrics").body, as: UTF8.self)
            #expect(metrics.contains("flagserver_telemetry_dropped_total{reason=\"unknown_instance\"} 1"))
        }
    }

    @Test func anIdOutlivesItsConnectionByTenMinutesAndSurvivesAReconnect() async throws {
        try await withHarness { harness in
            // A poll without the header (an SDK from before telemetry) gets no id; `new` asks for one.
            let old = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            #expect(old.header("Flagstaff-Instance") == nil)
            let polled = try harness.send(
                "GET", "/v1/sets/ios-prod", token: harness.sdk, headers: [("Flagstaff-Instance", "new")])
            let id = try #require(polled.header("Flagstaff-Instance"))
            // Presented again, the id is kept; an unknown one gets a new id.
            let again = try harness.send(
                "GET", "/v1/sets/ios-prod", token: harness.sdk, headers: [("Flagstaff-Instance", id)])
            #expect(again.header("Flagstaff-Instance") == id)
            let other = try harness.send(
                "GET", "/v1/sets/ios-prod", token: harness.sdk,
                headers: [("Flagstaff-Instance", "in_BBBBBBBBBBBBBBBBBBBBBB")])
            #expect(other.header("Flagstaff-Instance") != "in_BBBBBBBBBBBBBBBBBBBBBB")

            // Until its first report an id is provisional: a minute from its issue. Once it has reported, ten
            // minutes from its last report.
            let unreported = try #require(other.header("Flagstaff-Instance"))
            #expect(try Self.post(harness, Self.report(id)).status == 204)
            harness.clock.advance(seconds: 61)
            #expect(try Self.post(harness, Self.report(unreported)).status == 422)
            harness.clock.advance(seconds: 599 - 61)
            #expect(try Self.post(harness, Self.report(id)).status == 204)
            harness.clock.advance(seconds: 601)
            #expect(try Self.post(harness, Self.report(id)).status == 422)
        }
    }

    @Test func hostileBodiesAreRefusedWithWhatIsWrong() async throws {
        try await withHarness { harness in
            let id = try await Self.openStream(harness)
            let cases: [(String, Int, String)] = [
                ("[]", 400, "object"),
                (#"{"instance":"\#(id)","sdk":{"name":"x","version":"1"}}"#, 400, "capabilities"),
                (
                    #"{"instance":7,"sdk":{"name":"x","version":"1"},"capabilities":{"schema":1,"operators":[]}}"#, 400,
                    "instance"
                ),
                (
                    #"{"instance":"\#(id)","sdk":{"name":"x","version":"1"},"capabilities":{"schema":1,"operators":[]},"#
                        + #""counts":{"f":{"on":{"R":-1}}}}"#, 400, "counts.f.on.R"
                ),
                (
                    #"{"instance":"\#(id)","sdk":{"name":"x","version":"1"},"capabilities":{"schema":1,"operators":[]},"#
                        + #""counts":{"f":{"on":{"R":1e400}}}}"#, 400, "counts.f.on.R"
                ),
                (String(repeating: "[", count: 100_000), 400, "telemetry report"),
                (#"{"pad":""# + String(repeating: "x", count: 300_000) + #""}"#, 413, "262144"),
            ]
            for (body, status, named) in cases {
                let answer = try Self.post(harness, body)
                #expect(answer.status == status, "\(body.prefix(80))")
                let message = try answer.json("error.message")?.stringValue ?? ""
                #expect(message.contains(named), "\(message)")
            }
            var flags: [String] = []
            for index in 0..<2_001 { flags.append(#""f\#(index)":{"on":{"R":1}}"#) }
            let many =
                #"{"instance":"\#(id)","sdk":{"name":"x","version":"1"},"capabilities":{"schema":1,"operators":[]},"counts":{"#
                + flags.joined(separator: ",") + "}}"
            let answer = try Self.post(harness, many)
            #expect(answer.status == 400)
            #expect(try answer.json("error.message")?.stringValue?.contains("more than 2000 flags") == true)
        }
    }

    /// A shipped SDK key is public: a control character in a report's string (an ESC that would rewrite an admin's
    /// terminal in `flagctl clients`) is refused with 400 naming the member, and nothing of the report is kept.
    @Test func aReportWithAControlCharacterIsRefusedNamingTheMember() async throws {
        try await withHarness { harness in
            let id = try await Self.openStream(harness)
            let cases: [(String, String, String)] = [
                (#""app":{"name":"Sh\u001bop","version":"5.3.0"}"#, "app.name", "U+001B at position 3"),
                (#""app":{"name":"Shop","version":"\#u{9B}2J"}"#, "app.version", "U+009B at position 1"),
                (
                    #""counts":{"k":{"beta\u001b]0;pwned\u0007":{"TARGETING_MATCH":1}}}"#, "counts.k",
                    "U+001B at position 5"
                ),
            ]
            for (members, path, named) in cases {
                let body =
                    #"{"instance":"\#(id)","sdk":{"name":"FlagClient","version":"2.0.0"},"#
                    + #""capabilities":{"schema":1,"operators":[]},\#(members)}"#
                let answer = try Self.post(harness, body)
                #expect(answer.status == 400, "\(members)")
                #expect(try answer.json("error.path") == .string(path))
                let message = try answer.json("error.message")?.stringValue ?? ""
                #expect(message.contains("\"\(path)\" "), "\(message)")
                #expect(message.hasSuffix("the control character \(named); send printable text"), "\(message)")
            }
            let clients = try harness.send("GET", "/v1/admin/sets/ios-prod/clients")
            #expect(try clients.json("instances") == .array([]))
        }
    }

    @Test func anInstanceThatReportsTooOftenIsToldToWait() async throws {
        try await withHarness { harness in
            let id = try await Self.openStream(harness)
            for _ in 0..<5 { #expect(try Self.post(harness, Self.report(id)).status == 204) }
            let refused = try Self.post(harness, Self.report(id))
            #expect(refused.status == 429)
            #expect(refused.header("Retry-After") == "5")
            harness.clock.advance(seconds: 5)
            #expect(try Self.post(harness, Self.report(id)).status == 204)
        }
    }

    @Test func usageAddsCountsPerDayAndOFREPCountsToo() async throws {
        try await withHarness { harness in
            let id = try await Self.openStream(harness)
            let counts: TelemetryReport.Counts = [
                "new-checkout": ["beta-first": ["TARGETING_MATCH": 3], "default": ["DEFAULT": 2, "SPLIT": 1]]
            ]
            #expect(try Self.post(harness, Self.report(id, counts: counts)).status == 204)
            harness.clock.advance(seconds: 86_400)
            #expect(
                try Self.post(harness, Self.report(id, counts: ["new-checkout": ["beta-first": ["X": 4]]])).status
                    == 204)
            let ofrep = try harness.send(
                "POST", "/ofrep/v1/evaluate/flags/search-timeout-ms", token: harness.sdk,
                body: #"{"context":{"targetingKey":"u-9"}}"#)
            #expect(ofrep.status == 200)

            let usage = try harness.send("GET", "/v1/admin/sets/ios-prod/usage?days=7")
            #expect(usage.status == 200)
            #expect(try usage.json("flags")?.arrayValue?.count == 2)
            #expect(
                try [usage.json("flags[0].key"), usage.json("flags[1].key")] == [
                    .string("new-checkout"), .string("search-timeout-ms"),
                ])
            #expect(try usage.json("flags[0].days")?.arrayValue?.count == 2)
            #expect(
                try [usage.json("flags[0].days[0].evaluations"), usage.json("flags[0].days[1].evaluations")] == [
                    .int(6), .int(4),
                ])
            #expect(try usage.json("flags[0].days[0].variants.default") == .int(3))
            #expect(
                try [usage.json("flags[0].days[0].day"), usage.json("flags[0].days[1].day")] == [
                    .string("2027-01-15"), .string("2027-01-16"),
                ])
            #expect(try usage.json("flags[0].lastEvaluated") == .string(ISO8601.format(harness.clock.now)))
            #expect(try usage.json("flags[1].days[0].evaluations") == .int(1))
            #expect(try usage.json("sdks[0].instances") == .int(1))

            let one = try harness.send("GET", "/v1/admin/sets/ios-prod/usage?key=new-checkout&days=1")
            #expect(try one.json("flags")?.arrayValue?.count == 1)
            #expect(try one.json("flags[0].days")?.arrayValue?.count == 1)
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/usage?days=91").status == 400)
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/usage?key=nope").status == 404)
        }
    }

    @Test func propagationCountsWhoAppliedAVersionOnTheServersClock() async throws {
        try await withHarness { harness in
            let first = try await Self.openStream(harness)
            let second = try await Self.openStream(harness)
            let third = try await Self.openStream(harness)
            for id in [first, second] { #expect(try Self.post(harness, Self.report(id)).status == 204) }
            let kill = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill")
            #expect(try kill.json("version") == .int(2))
            harness.clock.advance(seconds: 1.5)
            #expect(try Self.post(harness, Self.report(first, version: 2)).status == 204)

            let answer = try harness.send("GET", "/v1/admin/sets/ios-prod/versions/2/propagation")
            #expect(answer.status == 200)
            #expect(try answer.json("active") == .int(2))
            #expect(try answer.json("applied") == .int(1))
            #expect(try answer.json("p50Ms") == .int(1500))
            #expect(try answer.json("p99Ms") == .int(1500))
            #expect(try answer.json("written.streams") == .int(3))
            #expect(try answer.json("silent") == .int(1))
            #expect(try answer.json("lagging")?.arrayValue?.count == 1)
            #expect(try answer.json("lagging[0].id") == .string(second))
            #expect(try answer.json("lagging[0].version") == .int(1))
            _ = third

            // Five minutes without a report, an instance is no longer active; it is still listed for ten.
            harness.clock.advance(seconds: 301)
            let listed = try harness.send("GET", "/v1/admin/sets/ios-prod/clients")
            #expect(try listed.json("instances")?.arrayValue?.count == 2)
            let active = try harness.send("GET", "/v1/admin/sets/ios-prod/clients?within=300")
            #expect(try active.json("instances")?.arrayValue?.count == 0)
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/clients?within=601").status == 400)
            let later = try harness.send("GET", "/v1/admin/sets/ios-prod/versions/2/propagation")
            #expect(try later.json("active") == .int(0))
            #expect(try later.json("p50Ms") == .null)
            #expect(try harness.send("GET", "/v1/admin/sets/ios-prod/versions/3/propagation").status == 404)
        }
    }

    static let semverRule =
        #"{"rule":{"name":"new-app","conditions":[{"attribute":"appVersion","op":"semver_gte","values":["5.0.0"]}],"value":true}}"#

    /// A stream's instance reports as FlagClient 1.2.0, whose evaluator lacks `semver_gte`.
    static func reportAClientWithoutSemver(_ harness: AppHarness) async throws {
        let old = try await openStream(harness)
        var operators = ClientCapabilities.current.operators
        operators.remove("semver_gte")
        #expect(try post(harness, report(old, sdk: "1.2.0", operators: operators)).status == 204)
    }

    @Test func theGateRefusesAnOperatorThatActiveClientsLack() async throws {
        try await withHarness { harness in
            try await Self.reportAClientWithoutSemver(harness)
            let current = try await Self.openStream(harness)
            #expect(try Self.post(harness, Self.report(current)).status == 204)

            let rules = "/v1/admin/sets/ios-prod/flags/new-checkout/rules"
            let refused = try harness.send("POST", rules, body: Self.semverRule)
            #expect(refused.status == 422)
            #expect(try refused.json("error.code") == .string("incompatible_clients"))
            let message = try #require(try refused.json("error.message")?.stringValue)
            #expect(message.contains("operator \"semver_gte\" in flag \"new-checkout\""))
            #expect(message.contains("1 of 2 active instances (50.00 %)"))
            #expect(message.contains("FlagClient 1.2.0 (1)"))
            #expect(message.contains("compiled-in default"))
            #expect(try refused.json("error.lacking") == .int(1))
            #expect(try refused.json("error.sdks[0].version") == .string("1.2.0"))
            #expect(harness.app.service.state("ios-prod")?.version == 1)

            // Kills, defaults and rollouts introduce nothing.
            #expect(try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill").status == 200)

            let forced = try harness.send("POST", rules + "?allowIncompatible=true", body: Self.semverRule)
            #expect(forced.status == 200)
            let audit = try harness.send("GET", "/v1/admin/sets/ios-prod/audit?limit=1")
            let reason = try audit.json("records[0].reason")?.stringValue ?? ""
            #expect(reason.contains("allowIncompatible: operator \"semver_gte\""), "\(reason)")
        }
    }

    /// The gate reads this server's reports from memory: a write does not wait for the telemetry queue, however
    /// long that is busy, and still sees a report taken a moment ago (not flushed to the store yet).
    @Test func theGateNeitherWaitsForTheTelemetryQueueNorMissesAReportNotFlushed() async throws {
        try await withHarness { harness in
            try await Self.reportAClientWithoutSemver(harness)
            #expect(try harness.app.service.store.telemetry.instances(set: "ios-prod", seenSince: .distantPast).isEmpty)
            let release = DispatchSemaphore(value: 0)
            harness.app.service.telemetry.queue.async { release.wait() }
            defer { release.signal() }
            let refused = try harness.send(
                "POST", "/v1/admin/sets/ios-prod/flags/new-checkout/rules", body: Self.semverRule)
            #expect(refused.status == 422)
            #expect(try refused.json("error.code") == .string("incompatible_clients"))
        }
    }

    @Test func theSetsSettingWarnsOrTurnsTheGateOff() async throws {
        try await withHarness { harness in
            #expect(
                try harness.send("GET", "/v1/admin/sets/ios-prod/settings").json("compatibility") == .string("enforce"))
            let id = try await Self.openStream(harness)
            #expect(try Self.post(harness, Self.report(id, operators: ["eq"])).status == 204)
            let settings = "/v1/admin/sets/ios-prod/settings"
            let bad = try harness.send("PUT", settings, body: #"{"compatibility":"loud"}"#)
            #expect(bad.status == 400)
            #expect(try bad.json("error.message")?.stringValue?.contains("enforce, warn, off") == true)
            #expect(try harness.send("PUT", settings, body: #"{"compatibility":"warn"}"#).status == 200)
            let rules = "/v1/admin/sets/ios-prod/flags/new-checkout/rules"
            let warned = try harness.send("POST", rules, body: Self.semverRule)
            #expect(warned.status == 200)
            #expect(try warned.json("warnings")?.arrayValue?.count == 1)

            #expect(try harness.send("PUT", settings, body: #"{"compatibility":"off"}"#).status == 200)
            let other = Self.semverRule.replacingOccurrences(of: "new-app", with: "newer-app")
                .replacingOccurrences(of: "semver_gte", with: "semver_lt")
            let quiet = try harness.send("POST", rules, body: other)
            #expect(quiet.status == 200)
            #expect(try quiet.json("warnings") == nil)
            let audit = try harness.send("GET", "/v1/admin/sets/ios-prod/audit?action=set.settings")
            #expect(audit.status == 200)
        }
    }
}

extension JSONValue {
    fileprivate var arrayValue: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }
}
