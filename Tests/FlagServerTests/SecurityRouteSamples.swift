import FlagTestSupport
import Foundation

@testable import FlagServer

/// One concrete request per `Route`, on the `AppHarness` fixture, that an admin token gets a success for; the auth
/// matrix and the audit tests walk `Route.allCases` through this table, so a route added to the server without an
/// entry here fails them.
struct RouteSample: Sendable {
    /// An admin request run first, so that the sample has something to act on (an override to remove, …).
    struct Step: Sendable {
        var method: String
        var target: String
        var body: String
        /// Sent by an editor of this name, made for it, instead of the admin: the author of a change request that
        /// the admin approves.
        var author: String?
    }

    var target: String
    var body = ""
    var prepare: [Step] = []
    /// The status of an admin token.
    var success = 200
    /// The status of an SDK key of another set, where it is not 403: OFREP evaluates the key's own set.
    var otherSetKey = 403
    /// The audit `action` a mutation records.
    var action: String?
    /// The least role of the admin API the request needs (SPEC §4); `nil` for a client's route.
    var role: AdminRole? = .viewer
    /// Whether the route concerns the whole server, so that a token limited to sets may not call it.
    var unlimited = false
    /// Whether anyone may call it, without a token.
    var open = false
    /// Whether the request is sent with a dashboard session of the caller's token.
    var asSession = false
    /// Whether a dashboard session may not make the request (a session cannot start another).
    var refusesSessions = false
    /// Whether a dashboard session must confirm the request with its person's own token (`Flagstaff-Confirm-Token`):
    /// the routes that make or revoke tokens and SDK keys.
    var reauthenticates = false

    /// Whether a token limited to other sets is refused though the path names no set: a webhook limited to
    /// `ios-prod`.
    var forbidsOtherSets = false

    /// Whether the request acts on the fixture's set `ios-prod`.
    var onSet: Bool { target.hasPrefix(Self.set) || target.contains("set=ios-prod") }

    static let set = "/v1/admin/sets/ios-prod"
    static let flag = "\(set)/flags/new-checkout"
    static let ofrepBody = #"{"context":{"targetingKey":"u-1"}}"#
    static let rolloutBody = #"{"value":true,"percent":10}"#
    static let kill = Step(method: "POST", target: "\(flag)/kill", body: "")
    /// A string flag with values, for the routes of an enum flag's values.
    static let putTheme = Step(
        method: "PUT", target: "\(set)/flags/theme",
        body: #"{"flag":{"type":"string","default":"blue","values":["blue","green","orange"]}}"#)
    static let rotate = Step(method: "POST", target: "\(set)/signing-keys", body: "")
    /// A webhook limited to `ios-prod`, posting to a documentation address (the harness sends nothing).
    static let webhookBody = #"{"name":"chat","url":"https://203.0.113.10/hooks","sets":["ios-prod"]}"#
    static let createWebhook = Step(method: "POST", target: "/v1/admin/webhooks", body: webhookBody)
    /// Stands for the id of the set's newest published signing key, which is random: `target(in:)` fills it in.
    static let publishedKey = "{published-key}"
    static let putRollout = Step(method: "PUT", target: "\(flag)/rollout", body: rolloutBody)
    /// Only a phased rollout can be paused.
    static let putSteps = Step(
        method: "PUT", target: "\(flag)/rollout", body: #"{"value":true,"steps":"0h:1,24h:5,72h:100"}"#)

    /// A change request, number 1 of the fixture, by `pat`: archiving the checkout flag.
    static let propose = Step(method: "POST", target: "\(flag)/archive?propose=Archive", body: "", author: "pat")
    static let approve = Step(method: "POST", target: "\(set)/changes/1/approve", body: "")

    /// The fixture document with one default changed, for a real import.
    static var changedDocument: String {
        fixtureDocument.replacingOccurrences(of: "\"default\":800", with: "\"default\":900")
    }

    static let all: [Route: RouteSample] = [
        .health: RouteSample(target: "/healthz", role: nil, open: true),
        .metrics: RouteSample(target: "/metrics", role: .admin, unlimited: true),
        .dashboard: RouteSample(target: "/ui", role: nil, open: true),
        .dashboardFile: RouteSample(target: "/ui/index.html", role: nil, open: true),
        .document: RouteSample(target: "/v1/sets/ios-prod", role: nil),
        .stream: RouteSample(target: "/v1/sets/ios-prod/stream", role: nil),
        .oldVersion: RouteSample(target: "/v1/sets/ios-prod/versions/1", role: nil),
        .ofrepBulk: RouteSample(
            target: "/ofrep/v1/evaluate/flags?set=ios-prod", body: ofrepBody, otherSetKey: 200, role: nil),
        .ofrepFlag: RouteSample(
            target: "/ofrep/v1/evaluate/flags/new-checkout?set=ios-prod", body: ofrepBody, otherSetKey: 404, role: nil),
        // No connection issued the id, so an admin's report is refused as unknown: past the auth check, which is
        // what the matrix tests. TelemetryRouteTests takes a report end to end.
        .telemetry: RouteSample(
            target: "/v1/sets/ios-prod/telemetry",
            body:
                #"{"instance":"in_AAAAAAAAAAAAAAAAAAAAAA","sdk":{"name":"x","version":"1"},"capabilities":{"schema":1,"operators":[]}}"#,
            success: 422, role: nil),
        .signingKeys: RouteSample(target: "/v1/sets/ios-prod/signing-keys", role: nil),

        .whoami: RouteSample(target: "/v1/admin/whoami", role: .viewer),
        .startSession: RouteSample(
            target: "/v1/admin/sessions", success: 201, action: "session.start", role: .viewer, refusesSessions: true),
        .endSession: RouteSample(
            target: "/v1/admin/sessions/current", action: "session.end", role: .viewer, asSession: true),
        .listTokens: RouteSample(target: "/v1/admin/tokens", role: .admin, unlimited: true),
        .createToken: RouteSample(
            target: "/v1/admin/tokens", body: #"{"name":"new-person","role":"editor","sets":["ios-prod"]}"#,
            success: 201, action: "token.create", role: .admin, unlimited: true, reauthenticates: true),
        .revokeToken: RouteSample(
            target: "/v1/admin/tokens/spare",
            prepare: [Step(method: "POST", target: "/v1/admin/tokens", body: #"{"name":"spare","role":"viewer"}"#)],
            action: "token.revoke", role: .admin, unlimited: true, reauthenticates: true),
        .audit: RouteSample(target: "/v1/admin/audit", role: .viewer),
        .listSets: RouteSample(target: "/v1/admin/sets", role: .viewer),
        .createSet: RouteSample(
            target: "/v1/admin/sets", body: #"{"name":"web-prod"}"#, success: 201, action: "set.create", role: .admin,
            unlimited: true),
        .exportSet: RouteSample(target: set, role: .viewer),
        .importSet: RouteSample(
            target: set, body: "{\"document\":\(changedDocument)}", action: "set.import", role: .editor),
        .history: RouteSample(target: "\(set)/history", role: .viewer),
        .diff: RouteSample(target: "\(set)/diff?from=1&to=2", prepare: [kill], role: .viewer),
        .setAudit: RouteSample(target: "\(set)/audit", role: .viewer),
        .rollback: RouteSample(
            target: "\(set)/rollback", body: #"{"version":1}"#, prepare: [kill], action: "set.rollback", role: .editor),
        .evaluate: RouteSample(target: "\(set)/evaluate", body: #"{"key":"new-checkout","unit":"u-1"}"#, role: .viewer),

        .listFlags: RouteSample(target: "\(set)/flags", role: .viewer),
        .getFlag: RouteSample(target: flag, role: .viewer),
        .putFlag: RouteSample(
            target: flag, body: #"{"flag":{"type":"bool","kind":"ops","default":true}}"#, action: "flag.replace",
            role: .editor),
        .deleteFlag: RouteSample(target: "\(set)/flags/search-timeout-ms", action: "flag.delete", role: .editor),
        .kill: RouteSample(target: "\(flag)/kill", action: "flag.kill", role: .editor),
        .restore: RouteSample(target: "\(flag)/restore", prepare: [kill], action: "flag.restore", role: .editor),
        .archive: RouteSample(target: "\(flag)/archive", action: "flag.archive", role: .editor),
        .unarchive: RouteSample(
            target: "\(flag)/unarchive", prepare: [Step(method: "POST", target: "\(flag)/archive", body: "")],
            action: "flag.unarchive", role: .editor),
        .setDefault: RouteSample(
            target: "\(flag)/default", body: #"{"value":true}"#, action: "flag.default", role: .editor),
        .putDefault: RouteSample(
            target: "\(flag)/default", body: #"{"value":true}"#, action: "flag.default", role: .editor),
        .expire: RouteSample(target: "\(flag)/expire", body: #"{"keep":false}"#, action: "flag.expire", role: .editor),
        .addOverride: RouteSample(
            target: "\(flag)/overrides", body: #"{"unit":"u-9","value":true}"#, action: "flag.override.add",
            role: .editor),
        .removeOverride: RouteSample(
            target: "\(flag)/overrides?unit=u-9",
            prepare: [Step(method: "POST", target: "\(flag)/overrides", body: #"{"unit":"u-9","value":true}"#)],
            action: "flag.override.remove", role: .editor),
        .putRollout: RouteSample(
            target: "\(flag)/rollout", body: rolloutBody, action: "flag.rollout.set", role: .editor),
        .postRollout: RouteSample(
            target: "\(flag)/rollout", body: rolloutBody, action: "flag.rollout.set", role: .editor),
        .removeRollout: RouteSample(
            target: "\(flag)/rollout", prepare: [putRollout], action: "flag.rollout.remove", role: .editor),
        .pauseRollout: RouteSample(
            target: "\(flag)/rollout/pause", prepare: [putSteps], action: "flag.rollout.pause", role: .editor),
        .resumeRollout: RouteSample(
            target: "\(flag)/rollout/resume",
            prepare: [putSteps, Step(method: "POST", target: "\(flag)/rollout/pause", body: "")],
            action: "flag.rollout.resume", role: .editor),
        .addRule: RouteSample(
            target: "\(flag)/rules", body: #"{"rule":{"name":"germany","cohort":"de","value":true}}"#,
            action: "flag.rule.add", role: .editor),
        .removeRule: RouteSample(target: "\(flag)/rules/beta-first", action: "flag.rule.remove", role: .editor),
        .putPrerequisite: RouteSample(
            target: "\(flag)/prerequisites/search-timeout-ms", body: #"{"valuesText":["800"]}"#,
            action: "flag.prerequisite.set", role: .editor),
        .removePrerequisite: RouteSample(
            target: "\(flag)/prerequisites/search-timeout-ms",
            prepare: [
                Step(method: "PUT", target: "\(flag)/prerequisites/search-timeout-ms", body: #"{"values":[800]}"#)
            ],
            action: "flag.prerequisite.remove", role: .editor),
        .putValues: RouteSample(
            target: "\(set)/flags/theme/values", body: #"{"values":["blue","green"]}"#, prepare: [putTheme],
            action: "flag.values.set", role: .editor),
        .removeValues: RouteSample(
            target: "\(set)/flags/theme/values", prepare: [putTheme], action: "flag.values.remove", role: .editor),
        .promote: RouteSample(
            target: "\(set)/flags/search-timeout-ms/promote", body: #"{"from":"android-prod"}"#,
            prepare: [
                Step(
                    method: "PUT", target: "/v1/admin/sets/android-prod/flags/search-timeout-ms",
                    body: #"{"flag":{"type":"int","kind":"ops","default":500}}"#)
            ],
            action: "flag.promote", role: .editor),

        .listCohorts: RouteSample(target: "\(set)/cohorts", role: .viewer),
        .getCohort: RouteSample(target: "\(set)/cohorts/beta", role: .viewer),
        .putCohort: RouteSample(
            target: "\(set)/cohorts/beta", body: #"{"cohort":{"include":["u-3"]}}"#, action: "cohort.replace",
            role: .editor),
        .deleteCohort: RouteSample(target: "\(set)/cohorts/de", action: "cohort.delete", role: .editor),

        .clients: RouteSample(target: "\(set)/clients"),
        .usage: RouteSample(target: "\(set)/usage"),
        .propagation: RouteSample(target: "\(set)/versions/1/propagation"),
        .getSettings: RouteSample(target: "\(set)/settings"),
        .rotateSigningKey: RouteSample(
            target: "\(set)/signing-keys", success: 201, action: "signing-key.rotate", role: .admin),
        .activateSigningKey: RouteSample(
            target: "\(set)/signing-keys/\(publishedKey)/activate", prepare: [rotate], action: "signing-key.activate",
            role: .admin),
        .retireSigningKey: RouteSample(
            target: "\(set)/signing-keys/\(publishedKey)/retire", prepare: [rotate], action: "signing-key.retire",
            role: .admin),
        .putSettings: RouteSample(
            target: "\(set)/settings", body: #"{"compatibility":"warn"}"#, action: "set.settings", role: .admin),

        .listChanges: RouteSample(target: "\(set)/changes", prepare: [propose]),
        .getChange: RouteSample(target: "\(set)/changes/1", prepare: [propose]),
        .approveChange: RouteSample(
            target: "\(set)/changes/1/approve", prepare: [propose], action: "change.approve", role: .editor),
        .rejectChange: RouteSample(
            target: "\(set)/changes/1/reject", prepare: [propose], action: "change.reject", role: .editor),
        .scheduleChange: RouteSample(
            target: "\(set)/changes/1/schedule", body: #"{"at":"2030-01-01T00:00:00Z"}"#, prepare: [propose],
            action: "change.schedule", role: .editor),
        .applyChange: RouteSample(
            target: "\(set)/changes/1/apply", prepare: [propose, approve], action: "change.apply", role: .editor),
        // Its author may withdraw a request, and an admin of the set any request: an editor who is not its author
        // may not, which is why this sample, proposed by someone else, needs an admin.
        .withdrawChange: RouteSample(
            target: "\(set)/changes/1", prepare: [propose], action: "change.withdraw", role: .admin),

        .listKeys: RouteSample(target: "\(set)/keys", role: .admin),
        .createKey: RouteSample(
            target: "\(set)/keys", body: #"{"name":"web"}"#, success: 201, action: "key.create", role: .admin,
            reauthenticates: true),
        .revokeKey: RouteSample(
            target: "\(set)/keys/spare",
            prepare: [Step(method: "POST", target: "\(set)/keys", body: #"{"name":"spare"}"#)],
            action: "key.revoke", role: .admin, reauthenticates: true),

        .listWebhooks: RouteSample(target: "/v1/admin/webhooks", prepare: [createWebhook], role: .admin),
        .createWebhook: RouteSample(
            target: "/v1/admin/webhooks", body: webhookBody, success: 201, action: "webhook.create", role: .admin,
            forbidsOtherSets: true),
        .getWebhook: RouteSample(
            target: "/v1/admin/webhooks/chat", prepare: [createWebhook], role: .admin, forbidsOtherSets: true),
        .deleteWebhook: RouteSample(
            target: "/v1/admin/webhooks/chat", prepare: [createWebhook], action: "webhook.delete", role: .admin,
            forbidsOtherSets: true),
        .testWebhook: RouteSample(
            target: "/v1/admin/webhooks/chat/test", prepare: [createWebhook], action: "webhook.test", role: .admin,
            forbidsOtherSets: true),
        .rotateWebhookSecret: RouteSample(
            target: "/v1/admin/webhooks/chat/rotate-secret", prepare: [createWebhook],
            action: "webhook.rotate-secret", role: .admin, forbidsOtherSets: true),
    ]

    /// The sample of `route`, or a failure naming the route that has none.
    static func of(_ route: Route) throws -> RouteSample {
        guard let sample = all[route] else {
            throw TestClientError(description: "no security sample for \(route.label): add one to RouteSample.all")
        }
        return sample
    }

    /// The target to send, with `publishedKey` replaced by the id of `ios-prod`'s newest published key.
    func target(in harness: AppHarness) throws -> String {
        guard target.contains(Self.publishedKey) else { return target }
        let key = try harness.app.service.signingKeys("ios-prod").last { $0.state == .published }
        guard let key else { throw TestClientError(description: "\(target) needs a published key; rotate first") }
        return target.replacingOccurrences(of: Self.publishedKey, with: key.key.id)
    }

    /// Runs the preparation steps as the admin; each must succeed.
    func prepare(_ harness: AppHarness) throws {
        for step in prepare {
            var token = "admin"
            if let author = step.author {
                let made = try harness.send("POST", "/v1/admin/tokens", body: #"{"name":"\#(author)","role":"editor"}"#)
                guard case .string(let secret)? = try made.json("token") else {
                    throw TestClientError(description: "making the token of \(author): \(made.status)")
                }
                token = secret
            }
            let response = try harness.send(step.method, step.target, token: token, body: step.body)
            guard (200...202).contains(response.status) else {
                throw TestClientError(description: "preparing \(step.method) \(step.target): \(response.status)")
            }
        }
    }
}
