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

    static let set = "/v1/admin/sets/ios-prod"
    static let flag = "\(set)/flags/new-checkout"
    static let ofrepBody = #"{"context":{"targetingKey":"u-1"}}"#
    static let rolloutBody = #"{"value":true,"percent":10}"#
    static let kill = Step(method: "POST", target: "\(flag)/kill", body: "")
    static let putRollout = Step(method: "PUT", target: "\(flag)/rollout", body: rolloutBody)
    /// Only a phased rollout can be paused.
    static let putSteps = Step(
        method: "PUT", target: "\(flag)/rollout", body: #"{"value":true,"steps":"0h:1,24h:5,72h:100"}"#)

    /// The fixture document with one default changed, for a real import.
    static var changedDocument: String {
        fixtureDocument.replacingOccurrences(of: "\"default\":800", with: "\"default\":900")
    }

    static let all: [Route: RouteSample] = [
        .health: RouteSample(target: "/healthz"),
        .metrics: RouteSample(target: "/metrics"),
        .document: RouteSample(target: "/v1/sets/ios-prod"),
        .stream: RouteSample(target: "/v1/sets/ios-prod/stream"),
        .oldVersion: RouteSample(target: "/v1/sets/ios-prod/versions/1"),
        .ofrepBulk: RouteSample(target: "/ofrep/v1/evaluate/flags?set=ios-prod", body: ofrepBody, otherSetKey: 200),
        .ofrepFlag: RouteSample(
            target: "/ofrep/v1/evaluate/flags/new-checkout?set=ios-prod", body: ofrepBody, otherSetKey: 404),

        .audit: RouteSample(target: "/v1/admin/audit"),
        .listSets: RouteSample(target: "/v1/admin/sets"),
        .createSet: RouteSample(
            target: "/v1/admin/sets", body: #"{"name":"web-prod"}"#, success: 201, action: "set.create"),
        .exportSet: RouteSample(target: set),
        .importSet: RouteSample(target: set, body: "{\"document\":\(changedDocument)}", action: "set.import"),
        .history: RouteSample(target: "\(set)/history"),
        .diff: RouteSample(target: "\(set)/diff?from=1&to=2", prepare: [kill]),
        .setAudit: RouteSample(target: "\(set)/audit"),
        .rollback: RouteSample(
            target: "\(set)/rollback", body: #"{"version":1}"#, prepare: [kill], action: "set.rollback"),
        .evaluate: RouteSample(target: "\(set)/evaluate", body: #"{"key":"new-checkout","unit":"u-1"}"#),

        .listFlags: RouteSample(target: "\(set)/flags"),
        .getFlag: RouteSample(target: flag),
        .putFlag: RouteSample(
            target: flag, body: #"{"flag":{"type":"bool","kind":"ops","default":true}}"#, action: "flag.replace"),
        .deleteFlag: RouteSample(target: "\(set)/flags/search-timeout-ms", action: "flag.delete"),
        .kill: RouteSample(target: "\(flag)/kill", action: "flag.kill"),
        .restore: RouteSample(target: "\(flag)/restore", prepare: [kill], action: "flag.restore"),
        .archive: RouteSample(target: "\(flag)/archive", action: "flag.archive"),
        .unarchive: RouteSample(
            target: "\(flag)/unarchive", prepare: [Step(method: "POST", target: "\(flag)/archive", body: "")],
            action: "flag.unarchive"),
        .setDefault: RouteSample(target: "\(flag)/default", body: #"{"value":true}"#, action: "flag.default"),
        .putDefault: RouteSample(target: "\(flag)/default", body: #"{"value":true}"#, action: "flag.default"),
        .expire: RouteSample(target: "\(flag)/expire", body: #"{"keep":false}"#, action: "flag.expire"),
        .addOverride: RouteSample(
            target: "\(flag)/overrides", body: #"{"unit":"u-9","value":true}"#, action: "flag.override.add"),
        .removeOverride: RouteSample(
            target: "\(flag)/overrides?unit=u-9",
            prepare: [Step(method: "POST", target: "\(flag)/overrides", body: #"{"unit":"u-9","value":true}"#)],
            action: "flag.override.remove"),
        .putRollout: RouteSample(target: "\(flag)/rollout", body: rolloutBody, action: "flag.rollout.set"),
        .postRollout: RouteSample(target: "\(flag)/rollout", body: rolloutBody, action: "flag.rollout.set"),
        .removeRollout: RouteSample(target: "\(flag)/rollout", prepare: [putRollout], action: "flag.rollout.remove"),
        .pauseRollout: RouteSample(
            target: "\(flag)/rollout/pause", prepare: [putSteps], action: "flag.rollout.pause"),
        .resumeRollout: RouteSample(
            target: "\(flag)/rollout/resume",
            prepare: [putSteps, Step(method: "POST", target: "\(flag)/rollout/pause", body: "")],
            action: "flag.rollout.resume"),
        .addRule: RouteSample(
            target: "\(flag)/rules", body: #"{"rule":{"name":"germany","cohort":"de","value":true}}"#,
            action: "flag.rule.add"),
        .removeRule: RouteSample(target: "\(flag)/rules/beta-first", action: "flag.rule.remove"),

        .listCohorts: RouteSample(target: "\(set)/cohorts"),
        .getCohort: RouteSample(target: "\(set)/cohorts/beta"),
        .putCohort: RouteSample(
            target: "\(set)/cohorts/beta", body: #"{"cohort":{"include":["u-3"]}}"#, action: "cohort.replace"),
        .deleteCohort: RouteSample(target: "\(set)/cohorts/de", action: "cohort.delete"),

        .listKeys: RouteSample(target: "\(set)/keys"),
        .createKey: RouteSample(target: "\(set)/keys", body: #"{"name":"web"}"#, success: 201, action: "key.create"),
        .revokeKey: RouteSample(
            target: "\(set)/keys/spare",
            prepare: [Step(method: "POST", target: "\(set)/keys", body: #"{"name":"spare"}"#)],
            action: "key.revoke"),
    ]

    /// The sample of `route`, or a failure naming the route that has none.
    static func of(_ route: Route) throws -> RouteSample {
        guard let sample = all[route] else {
            throw TestClientError(description: "no security sample for \(route.rawValue): add one to RouteSample.all")
        }
        return sample
    }

    /// Runs the preparation steps as the admin; each must succeed.
    func prepare(_ harness: AppHarness) throws {
        for step in prepare {
            let response = try harness.send(step.method, step.target, body: step.body)
            guard (200...201).contains(response.status) else {
                throw TestClientError(description: "preparing \(step.method) \(step.target): \(response.status)")
            }
        }
    }
}
