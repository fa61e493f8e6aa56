import FlagAPI
import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// Every endpoint of FlagAPI's table through the in-process server, sent as a client sends it (`Endpoint.call`) and
/// read back with its answer type: a template the router does not have, a member an answer misspells or lacks, or an
/// endpoint nobody walks here fails this suite.
@Suite("The admin API's contract: every endpoint, sent and read with its types")
struct ContractTests {
    /// Sends endpoints as a typed client does and records which were walked.
    final class Walker {
        let harness: AppHarness
        private(set) var walked: Set<String> = []

        init(_ harness: AppHarness) {
            self.harness = harness
        }

        /// Sends `endpoint`, whose template has no parameters.
        @discardableResult
        func walk<Request, Answer>(
            _ endpoint: Endpoint<Request, Answer>, _ request: Request, token: String? = "admin",
            sourceLocation: SourceLocation = #_sourceLocation
        ) throws -> Answer {
            try walk(endpoint, PathParameters(), request, token: token, sourceLocation: sourceLocation)
        }

        /// Sends `endpoint` and reads its 2xx answer with its answer type.
        @discardableResult
        func walk<Request, Answer>(
            _ endpoint: Endpoint<Request, Answer>, _ parameters: PathParameters, _ request: Request,
            token: String? = "admin", review: ReviewChoice? = nil, sourceLocation: SourceLocation = #_sourceLocation
        ) throws -> Answer {
            let call = try endpoint.call(parameters, request, review: review)
            let response = try harness.send(
                call.method, call.target, token: token, headers: call.headers,
                body: String(decoding: call.body, as: UTF8.self))
            #expect(
                (200..<300).contains(response.status),
                "\(endpoint.info.label) answered \(response.status): \(String(decoding: response.body, as: UTF8.self))",
                sourceLocation: sourceLocation)
            walked.insert(endpoint.info.name)
            return try endpoint.answer(response.body)
        }
    }

    @Test func everyEndpointAnswersWhatItsAnswerTypeReads() async throws {
        try await withHarness { harness in
            let walker = Walker(harness)
            try walkService(walker)
            try walkPeople(walker)
            try walkSets(walker)
            try walkFlags(walker)
            try walkCohortsAndKeys(walker)
            try walkChanges(walker)
            try walkWebhooks(walker)
            // A report must name an instance the server issued: one it did not is refused with the contract's
            // error, which proves the route and the error's shape.
            let report = try API.telemetry.call(set, RawJSON(.object(["instanceId": .string("made-up")])))
            let refused = try harness.send(
                report.method, report.target, token: harness.sdk, headers: report.headers,
                body: String(decoding: report.body, as: UTF8.self))
            #expect(refused.status == 422 || refused.status == 400, "\(refused.status)")
            let error = try ErrorAnswer.decode(answer: refused.body)
            #expect(error.error.subject != .route)
            // A stream never ends; StreamTokenEndTests and the live suites read it.
            let elsewhere: Set = ["telemetry", "stream"]
            let missing = Set(API.all.map(\.name)).subtracting(walker.walked).subtracting(elsewhere).sorted()
            #expect(missing.isEmpty, "endpoints this suite does not walk: \(missing)")
        }
    }

    @Test func aMisspelledTemplateIsNoRoute() async throws {
        try await withHarness { harness in
            let misspelled = Endpoint<ChangeRequest, MutationResult>(
                "kil", .post, "/v1/admin/sets/{set}/flags/{key}/kil", .role(.editor))
            let call = try misspelled.call(PathParameters(set: "ios-prod", key: "new-checkout"), ChangeRequest())
            let response = try harness.send(call.method, call.target, headers: call.headers, body: "{}")
            #expect(response.status == 404)
            #expect(try response.json("error.subject") == .string("route"))
        }
    }

    let set = PathParameters(set: "ios-prod")
    private let flag = PathParameters(set: "ios-prod", key: "new-checkout")

    private func walkService(_ walker: Walker) throws {
        let health = try walker.walk(API.health, NoRequest(), token: nil)
        #expect(health.sets == 2)
        try walker.walk(API.metrics, NoRequest())
        try walker.walk(API.dashboard, NoRequest(), token: nil)
        try walker.walk(API.dashboardFile, PathParameters(name: "endpoints.json"), NoRequest(), token: nil)
        try walker.walk(API.document, set, NoRequest(), token: walker.harness.sdk)
        try walker.walk(API.oldVersion, PathParameters(set: "ios-prod", version: 1), NoRequest())
        let context = RawJSON(.object(["context": .object(["targetingKey": .string("u-1")])]))
        try walker.walk(API.ofrepBulk, context, token: walker.harness.sdk)
        try walker.walk(API.ofrepFlag, PathParameters(key: "new-checkout"), context, token: walker.harness.sdk)
        try walker.walk(API.signingKeys, set, NoRequest(), token: walker.harness.sdk)
    }

    private func walkPeople(_ walker: Walker) throws {
        #expect(try walker.walk(API.whoami, NoRequest()).role == "admin")
        let session = try walker.walk(API.startSession, ChangeRequest())
        try walker.walk(API.endSession, ChangeRequest(), token: session.token)
        try walker.walk(API.createToken, CreateTokenRequest(name: "ci", role: "viewer"))
        #expect(try walker.walk(API.listTokens, NoRequest()).tokens.contains { $0.name == "ci" })
        try walker.walk(API.revokeToken, PathParameters(name: "ci"), ChangeRequest(reason: "done"))
        try walker.walk(API.audit, AuditQuery(limit: 5))
    }

    private func walkSets(_ walker: Walker) throws {
        try walker.walk(API.createSet, CreateSetRequest(name: "web-prod"))
        #expect(try walker.walk(API.listSets, NoRequest()).sets.count == 3)
        let exported = try walker.walk(API.exportSet, set, NoRequest())
        try walker.walk(API.importSet, set, ImportRequest(document: RawJSON(bytes: exported.bytes), dryRun: true))
        try walker.walk(API.history, set, HistoryQuery(limit: 5))
        try walker.walk(API.setAudit, set, AuditQuery(limit: 5))
        try walker.walk(API.evaluate, set, EvaluateRequest(key: "new-checkout", unitID: "u-1"))
        try walker.walk(API.clients, set, ClientsQuery())
        try walker.walk(API.usage, set, UsageQuery(days: 7))
        try walker.walk(API.propagation, PathParameters(set: "ios-prod", version: 1), NoRequest())
        try walker.walk(API.getSettings, set, NoRequest())
        try walker.walk(API.putSettings, set, SettingsRequest(compatibility: "warn"))
        let rotated = try walker.walk(API.rotateSigningKey, set, ChangeRequest())
        let old = try walker.walk(API.signingKeys, set, NoRequest()).keys.first { $0.id != rotated.id }
        try walker.walk(API.activateSigningKey, PathParameters(set: "ios-prod", name: rotated.id), ChangeRequest())
        try walker.walk(API.retireSigningKey, PathParameters(set: "ios-prod", name: old?.id), ChangeRequest())
    }

    private func walkFlags(_ walker: Walker) throws {
        let other = PathParameters(set: "ios-prod", key: "dark-mode")
        let dark = RawJSON(.object(["type": .string("bool"), "default": .bool(false)]))
        try walker.walk(API.putFlag, other, PutFlagRequest(flag: dark))
        #expect(try walker.walk(API.listFlags, set, FlagListQuery()).flags.count == 3)
        try walker.walk(API.getFlag, other, NoRequest())
        try walker.walk(API.kill, flag, ChangeRequest(reason: "errors"))
        try walker.walk(API.restore, flag, ChangeRequest(reason: "fixed"))
        try walker.walk(API.setDefault, flag, DefaultRequest(valueText: "true"))
        try walker.walk(API.putDefault, flag, DefaultRequest(value: RawJSON(.bool(false))))
        try walker.walk(API.addOverride, flag, OverrideRequest(unit: "u-9", valueText: "true"))
        try walker.walk(API.removeOverride, flag, RemoveOverrideRequest(unit: "u-9"))
        try walker.walk(API.putRollout, flag, RolloutRequest(valueText: "true", percent: 10))
        try walker.walk(API.postRollout, flag, RolloutRequest(valueText: "true", steps: "0h:10,24h:50"))
        try walker.walk(API.pauseRollout, flag, ChangeRequest())
        try walker.walk(API.resumeRollout, flag, ChangeRequest())
        try walker.walk(API.removeRollout, flag, ChangeRequest())
        let rule = RawJSON(.object(["name": .string("de-first"), "cohort": .string("de"), "value": .bool(true)]))
        try walker.walk(API.addRule, flag, RuleRequest(rule: rule))
        try walker.walk(
            API.removeRule, PathParameters(set: "ios-prod", key: "new-checkout", name: "de-first"),
            ChangeRequest())
        let required = PathParameters(set: "ios-prod", key: "new-checkout", name: "dark-mode")
        try walker.walk(API.putPrerequisite, required, PrerequisiteRequest(valuesText: ["true", "false"]))
        try walker.walk(API.removePrerequisite, required, ChangeRequest())
        let theme = PathParameters(set: "ios-prod", key: "theme")
        let themeFlag = RawJSON(.object(["type": .string("string"), "default": .string("blue")]))
        try walker.walk(API.putFlag, theme, PutFlagRequest(flag: themeFlag))
        try walker.walk(API.putValues, theme, ValuesRequest(values: ["blue", "green"]))
        try walker.walk(API.removeValues, theme, ChangeRequest())
        try walker.walk(API.expire, other, ExpireRequest(keepText: "false"))
        try walker.walk(API.archive, other, ChangeRequest())
        try walker.walk(API.unarchive, other, ChangeRequest())
        try walker.walk(API.deleteFlag, other, ChangeRequest())
        let latest = try walker.walk(API.history, set, HistoryQuery(limit: 1)).versions.first?.version ?? 1
        try walker.walk(API.diff, set, DiffQuery(from: 1, to: latest))
        try walker.walk(API.rollback, set, RollbackRequest(version: latest - 1))
        try walker.walk(API.putFlag, PathParameters(set: "android-prod", key: "dark-mode"), PutFlagRequest(flag: dark))
        try walker.walk(
            API.promote, PathParameters(set: "android-prod", key: "new-checkout"),
            PromoteRequest(from: "ios-prod", withCohorts: true))
    }

    private func walkCohortsAndKeys(_ walker: Walker) throws {
        let qa = PathParameters(set: "ios-prod", name: "qa")
        try walker.walk(
            API.putCohort, qa, PutCohortRequest(cohort: RawJSON(.object(["include": .array([.string("u-7")])]))))
        #expect(try walker.walk(API.listCohorts, set, NoRequest()).cohorts.count == 3)
        try walker.walk(API.getCohort, qa, NoRequest())
        try walker.walk(API.deleteCohort, qa, ChangeRequest())
        let created = try walker.walk(API.createKey, set, CreateKeyRequest(name: "web"))
        #expect(try walker.walk(API.listKeys, set, NoRequest()).keys.contains { $0.name == created.name })
        try walker.walk(API.revokeKey, PathParameters(set: "ios-prod", name: "web"), ChangeRequest())
    }

    private func walkWebhooks(_ walker: Walker) throws {
        let chat = PathParameters(name: "chat")
        let created = try walker.walk(
            API.createWebhook,
            CreateWebhookRequest(name: "chat", url: "https://203.0.113.10/hooks", sets: ["ios-prod"], format: "slack"))
        #expect(created.secret.hasPrefix("whsec_"))
        #expect(try walker.walk(API.listWebhooks, NoRequest()).webhooks.map(\.name) == ["chat"])
        let test = try walker.walk(API.testWebhook, chat, ChangeRequest())
        let shown = try walker.walk(API.getWebhook, chat, NoRequest())
        #expect(shown.deliveries.map(\.id) == [test.id])
        #expect(shown.webhook.pending == 1)
        let rotated = try walker.walk(API.rotateWebhookSecret, chat, ChangeRequest())
        #expect(rotated.secret != created.secret && rotated.webhook.previousSecretUntil != nil)
        #expect(try walker.walk(API.deleteWebhook, chat, ChangeRequest()).deleted)
    }

    private func walkChanges(_ walker: Walker) throws {
        let pat = try walker.walk(API.createToken, CreateTokenRequest(name: "pat", role: "editor")).token
        func propose(_ title: String, _ endpoint: Endpoint<ChangeRequest, MutationResult> = API.archive) throws
            -> PathParameters
        {
            let proposed = try walker.walk(endpoint, flag, ChangeRequest(), token: pat, review: .propose(title))
            #expect(proposed.changed == false)
            return PathParameters(set: "ios-prod", version: proposed.changeRequest)
        }
        let applied = try propose("Archive the checkout")
        let open = try walker.walk(API.listChanges, set, ChangeListQuery(state: "open"))
        #expect(open.changes.map(\.id) == [applied.version])
        let shown = try walker.walk(API.getChange, applied, NoRequest())
        #expect(shown.change.title == "Archive the checkout")
        #expect(shown.flags.map(\.key) == ["new-checkout"])
        #expect(try walker.walk(API.approveChange, applied, ChangeRequest(reason: "ok")).approvals.count == 1)
        #expect(try walker.walk(API.applyChange, applied, ChangeRequest()).state == "applied")
        let scheduled = try walker.walk(
            API.scheduleChange, try propose("Kill", API.kill), ScheduleRequest(at: Date(timeIntervalSince1970: 1.9e9)))
        #expect(scheduled.state == "scheduled")
        #expect(try walker.walk(API.rejectChange, try propose("Kill", API.kill), ChangeRequest()).state == "rejected")
        #expect(
            try walker.walk(API.withdrawChange, try propose("Kill it", API.kill), ChangeRequest()).state == "withdrawn")
    }
}
