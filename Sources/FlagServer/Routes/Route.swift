import FlagAPI
import FlagHTTP

/// FlagAPI's roles, under the name the server's API has always given them.
package typealias AdminRole = FlagAPI.AdminRole
/// FlagAPI's access levels, under the name the server's API has always given them.
package typealias Access = FlagAPI.Access

/// Every route the server answers: one of FlagAPI's `API` endpoints each, which holds its method, path template and
/// access; `label` (`POST /v1/admin/sets/{set}/flags/{key}/kill`) is the `route` label of `/metrics`.
///
/// This enum and `spec` below are the one table of routes: the router is compiled from the endpoints' templates,
/// the caller is checked against their `Access` before any handler runs, and the security tests walk `allCases` and
/// fail for a route that has no entry in their auth matrix. Adding a route is one endpoint in `API`, one case, one
/// `spec` entry and one handler.
package enum Route: CaseIterable, Sendable {
    /// The service's routes: health, metrics, the dashboard.
    case health, metrics, dashboard, dashboardFile
    /// The routes of clients: documents, streams, OFREP, telemetry, signing keys.
    case document, stream, oldVersion, ofrepBulk, ofrepFlag, telemetry, signingKeys
    /// People, tokens and the audit log.
    case whoami, startSession, endSession, listTokens, createToken, revokeToken, audit
    /// Sets, their versions, evaluation, telemetry and settings.
    case listSets, createSet, exportSet, importSet, history, diff, setAudit, rollback, evaluate, clients, usage
    /// A set's telemetry answers, settings and signing keys.
    case propagation, getSettings, putSettings, rotateSigningKey, activateSigningKey, retireSigningKey
    /// Change requests.
    case listChanges, getChange, approveChange, rejectChange, scheduleChange, applyChange, withdrawChange
    /// Flags.
    case listFlags, getFlag, putFlag, deleteFlag, kill, restore, archive, unarchive, setDefault, putDefault, expire
    /// A flag's overrides, rollout, rules, and promotion from another set.
    case addOverride, removeOverride, putRollout, postRollout, removeRollout, pauseRollout, resumeRollout, addRule
    /// The rest of a flag's actions.
    case removeRule, putPrerequisite, removePrerequisite, putValues, removeValues, promote
    /// Cohorts.
    case listCohorts, getCohort, putCohort, deleteCohort
    /// SDK keys.
    case listKeys, createKey, revokeKey
    /// Webhooks.
    case listWebhooks, createWebhook, getWebhook, deleteWebhook, testWebhook, rotateWebhookSecret

    /// The route's endpoint, where it runs, whether it answers `HEAD`, and its handler.
    var spec: RouteSpec {
        switch self {
        // Raw: Prometheus text, the dashboard's files, and a health answer on the loop that must answer HEAD.
        case .health: .raw(API.health, on: .loop, head: true) { app, _ in app.health() }
        case .metrics: .raw(API.metrics, on: .loop) { app, _ in app.metricsResponse() }
        case .dashboard: .raw(API.dashboard, on: .loop, head: true) { app, call in app.dashboardFile(call, "") }
        case .dashboardFile:
            .raw(API.dashboardFile, on: .loop, head: true) { app, call in app.dashboardFile(call, call.name) }

        // Raw: documents with their signature, streams, long-polls, OFREP's own shapes, and telemetry's 204.
        case .document: .raw(API.document, on: .loop, head: true) { app, call in try app.currentDocument(call) }
        case .stream: .raw(API.stream, on: .loop) { app, call in try app.openStream(call) }
        case .oldVersion: .raw(API.oldVersion, on: .store, head: true) { app, call in try app.oldVersion(call) }
        case .ofrepBulk: .raw(API.ofrepBulk, on: .loop) { app, call in try app.ofrepBulk(call) }
        case .ofrepFlag: .raw(API.ofrepFlag, on: .loop) { app, call in try app.ofrepFlag(call) }
        case .telemetry: .raw(API.telemetry, on: .telemetry) { app, call in try app.acceptTelemetry(call) }
        case .signingKeys: .answer(API.signingKeys) { app, call, _ in try app.signingKeys(call) }

        case .whoami: .answer(API.whoami, on: .loop) { app, call, _ in try app.whoami(call) }
        case .startSession: .answer(API.startSession) { app, call, request in try app.startSession(call, request) }
        case .endSession: .answer(API.endSession) { app, call, request in try app.endSession(call, request) }
        case .listTokens: .answer(API.listTokens) { app, call, _ in try app.listTokens(call) }
        case .createToken: .answer(API.createToken) { app, call, request in try app.createToken(call, request) }
        case .revokeToken: .answer(API.revokeToken) { app, call, request in try app.revokeToken(call, request) }
        case .audit: .answer(API.audit) { app, call, query in try app.audit(call, set: nil, query) }
        case .listSets: .answer(API.listSets) { app, call, _ in try app.listSets(call) }
        case .createSet: .answer(API.createSet) { app, call, request in try app.createSet(call, request) }
        // Raw: the set's document in FlagCore's format, with its ETag and signature, not the admin JSON.
        case .exportSet: .raw(API.exportSet) { app, call in try app.exportSet(call) }
        // A dry run is a viewer's; the handler asks for an editor when the import writes.
        case .importSet: .answer(API.importSet) { app, call, request in try app.importSet(call, request) }
        case .history: .answer(API.history) { app, call, query in try app.history(call, query) }
        case .diff: .answer(API.diff) { app, call, query in try app.diff(call, query) }
        case .setAudit: .answer(API.setAudit) { app, call, query in try app.audit(call, set: call.set, query) }
        case .rollback: .answer(API.rollback) { app, call, request in try app.rollback(call, request) }
        case .evaluate: .answer(API.evaluate) { app, call, request in try app.evaluate(call, request) }
        // Telemetry's reads run on its queue, not the store's: their cost grows with the instances, and a kill must
        // not wait behind `flagctl --wait` polling them.
        case .clients: .answer(API.clients, on: .telemetry) { app, call, query in try app.clients(call, query) }
        case .usage: .answer(API.usage, on: .telemetry) { app, call, query in try app.usage(call, query) }
        case .propagation: .answer(API.propagation, on: .telemetry) { app, call, _ in try app.propagation(call) }
        case .getSettings: .answer(API.getSettings) { app, call, _ in try app.settings(call) }
        case .putSettings: .answer(API.putSettings) { app, call, request in try app.updateSettings(call, request) }
        case .rotateSigningKey:
            .answer(API.rotateSigningKey) { app, call, request in try app.rotateSigningKey(call, request) }
        case .activateSigningKey:
            .answer(API.activateSigningKey) { app, call, request in
                try app.changeSigningKey(call, request, activate: true)
            }
        case .retireSigningKey:
            .answer(API.retireSigningKey) { app, call, request in
                try app.changeSigningKey(call, request, activate: false)
            }
        case .listChanges: .answer(API.listChanges) { app, call, query in try app.listChanges(call, query) }
        case .getChange: .answer(API.getChange) { app, call, _ in try app.getChange(call) }
        case .approveChange:
            .answer(API.approveChange) { app, call, request in try app.approveChange(call, request) }
        case .rejectChange: .answer(API.rejectChange) { app, call, request in try app.rejectChange(call, request) }
        case .scheduleChange:
            .answer(API.scheduleChange) { app, call, request in try app.scheduleChange(call, request) }
        case .applyChange: .answer(API.applyChange) { app, call, request in try app.applyChange(call, request) }
        case .withdrawChange:
            .answer(API.withdrawChange) { app, call, request in try app.withdrawChange(call, request) }

        case .listFlags: .answer(API.listFlags) { app, call, query in try app.listFlags(call, query) }
        case .getFlag: .answer(API.getFlag) { app, call, _ in try app.getFlag(call) }
        case .putFlag: .answer(API.putFlag) { app, call, request in try app.putFlag(call, request) }
        case .deleteFlag:
            .answer(API.deleteFlag) { app, call, request in try app.deleteItem(call, request, .flag(call.key)) }
        case .kill: .answer(API.kill) { app, call, request in try app.setKilled(call, request, true) }
        case .restore: .answer(API.restore) { app, call, request in try app.setKilled(call, request, false) }
        case .archive: .answer(API.archive) { app, call, request in try app.setArchived(call, request, true) }
        case .unarchive: .answer(API.unarchive) { app, call, request in try app.setArchived(call, request, false) }
        case .setDefault: .answer(API.setDefault) { app, call, request in try app.setDefault(call, request) }
        case .putDefault: .answer(API.putDefault) { app, call, request in try app.setDefault(call, request) }
        case .expire: .answer(API.expire) { app, call, request in try app.expire(call, request) }
        case .addOverride: .answer(API.addOverride) { app, call, request in try app.addOverride(call, request) }
        case .removeOverride:
            .answer(API.removeOverride) { app, call, request in try app.removeOverride(call, request) }
        case .putRollout: .answer(API.putRollout) { app, call, request in try app.setRollout(call, request) }
        case .postRollout: .answer(API.postRollout) { app, call, request in try app.setRollout(call, request) }
        case .removeRollout: .answer(API.removeRollout) { app, call, request in try app.removeRollout(call, request) }
        case .pauseRollout:
            .answer(API.pauseRollout) { app, call, request in try app.pauseRollout(call, request, true) }
        case .resumeRollout:
            .answer(API.resumeRollout) { app, call, request in try app.pauseRollout(call, request, false) }
        case .addRule: .answer(API.addRule) { app, call, request in try app.addRule(call, request) }
        case .removeRule: .answer(API.removeRule) { app, call, request in try app.removeRule(call, request) }
        case .putPrerequisite:
            .answer(API.putPrerequisite) { app, call, request in try app.putPrerequisite(call, request) }
        case .removePrerequisite:
            .answer(API.removePrerequisite) { app, call, request in try app.removePrerequisite(call, request) }
        case .putValues: .answer(API.putValues) { app, call, request in try app.putValues(call, request) }
        case .removeValues:
            .answer(API.removeValues) { app, call, request in
                try app.mutateFlag(call, request, action: "flag.values.remove") { flag in flag.values = nil }
            }
        case .promote: .answer(API.promote) { app, call, request in try app.promote(call, request) }

        case .listCohorts: .answer(API.listCohorts) { app, call, _ in try app.listCohorts(call) }
        case .getCohort: .answer(API.getCohort) { app, call, _ in try app.getCohort(call) }
        case .putCohort: .answer(API.putCohort) { app, call, request in try app.putCohort(call, request) }
        case .deleteCohort:
            .answer(API.deleteCohort) { app, call, request in try app.deleteItem(call, request, .cohort(call.name)) }

        case .listKeys: .answer(API.listKeys) { app, call, _ in try app.listKeys(call) }
        case .createKey: .answer(API.createKey) { app, call, request in try app.createKey(call, request) }
        case .revokeKey: .answer(API.revokeKey) { app, call, request in try app.revokeKey(call, request) }

        case .listWebhooks: .answer(API.listWebhooks) { app, call, _ in try app.listWebhooks(call) }
        case .createWebhook:
            .answer(API.createWebhook) { app, call, request in try app.createWebhook(call, request) }
        case .getWebhook: .answer(API.getWebhook) { app, call, _ in try app.getWebhook(call) }
        case .deleteWebhook:
            .answer(API.deleteWebhook) { app, call, request in try app.deleteWebhook(call, request) }
        case .testWebhook: .answer(API.testWebhook) { app, call, request in try app.testWebhook(call, request) }
        case .rotateWebhookSecret:
            .answer(API.rotateWebhookSecret) { app, call, request in try app.rotateWebhookSecret(call, request) }
        }
    }

    /// Each route's endpoint, in declaration order, read once.
    private static let endpoints = ordered.map(\.spec.endpoint)

    /// The endpoint the route answers, as FlagAPI's `API` declares it.
    package var endpoint: EndpointInfo { Self.endpoints[index] }

    /// `POST /v1/admin/sets/{set}/flags/{key}/kill`: the `route` label of `/metrics`.
    package var label: String { endpoint.label }

    /// The HTTP method, e.g. `GET`.
    package var method: String { endpoint.method.rawValue }

    /// The path template, e.g. `/v1/sets/{set}`.
    package var template: String { endpoint.template }

    /// Every route in declaration order, made once (`allCases` builds a new array on each call).
    static let ordered = allCases

    /// The route's position in `ordered`, for counters kept by index.
    var index: Int { Self.ordered.firstIndex(of: self) ?? -1 }

    /// Whether `HEAD` is answered as well (with the headers a `GET` would have).
    package var answersHead: Bool { spec.answersHead }

    /// Whether the route may change what the server stores; every such request is recorded in the audit log.
    package var isMutation: Bool {
        method != "GET" && self != .evaluate && self != .ofrepBulk && self != .ofrepFlag && self != .telemetry
    }

    /// Whether a dashboard session must also send its person's own token (`Flagstaff-Confirm-Token`): the routes
    /// that make or revoke tokens and SDK keys, so that a stolen session cannot turn itself into lasting access.
    package var reauthenticatesSessions: Bool { endpoint.confirmsPerson }

    /// The least role a token of the admin API needs for the route; `nil` for the routes of clients and anyone.
    package var role: AdminRole? { endpoint.access.role }
}

extension Access {
    /// How few callers the access lets through, as a rank: routes of one path may differ by method (a viewer reads
    /// a flag, an editor replaces it), and a wrong method is checked against the least strict of them.
    var strictness: Int {
        switch self {
        case .anyone: 0
        case .anyToken: 1
        case .setReader: 2
        case .role(let role): 3 + (AdminRole.allCases.firstIndex(of: role) ?? 0)
        case .unlimited(let role): 6 + (AdminRole.allCases.firstIndex(of: role) ?? 0)
        }
    }
}

/// Where a route's handler runs.
enum Executor: Sendable {
    /// On the loop thread that read the request: answers from memory.
    case loop
    /// On the store queue, one at a time: anything that may read or write the store, so that an fsync or a large
    /// set's validation never stalls a loop serving documents and streams.
    case store
    /// On the telemetry queue, one at a time: client reports, which may ask the store about an instance id and
    /// must never wait behind, or hold up, an admin write.
    case telemetry
}

/// One route's entry in the table: its endpoint (access, and whether a session must confirm it with its person's own
/// token), executor, `HEAD` handling and handler.
struct RouteSpec: Sendable {
    /// Answers a call; returns nil when the handler answers later itself (long-poll, stream).
    typealias Handler = @Sendable (FlagServerApp, Call) throws -> HTTPResponse?

    let endpoint: EndpointInfo
    let executor: Executor
    let answersHead: Bool
    let handler: Handler

    /// Who may call the route: checked before the handler runs (`FlagServerApp.authorize`).
    var access: Access { endpoint.access }
    /// Checked with the access, before the handler runs (`FlagServerApp.confirmPerson`).
    var reauthenticatesSessions: Bool { endpoint.confirmsPerson }

    /// A route whose handler writes its own response: documents, streams, OFREP, telemetry reports, the dashboard's
    /// files, health and metrics. Every answer of the admin API goes through `answer(_:on:_:)` instead.
    static func raw<Request, Answer>(
        _ endpoint: Endpoint<Request, Answer>, on executor: Executor = .store, head: Bool = false,
        _ handler: @escaping Handler
    ) -> RouteSpec {
        RouteSpec(endpoint: endpoint.info, executor: executor, answersHead: head, handler: handler)
    }
}
