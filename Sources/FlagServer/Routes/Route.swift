import FlagAPI
import FlagHTTP

/// FlagAPI's roles, under the name the server's API has always given them.
public typealias AdminRole = FlagAPI.AdminRole
/// FlagAPI's access levels, under the name the server's API has always given them.
public typealias Access = FlagAPI.Access

/// Every route the server answers: one of FlagAPI's `API` endpoints each, which holds its method, path template and
/// access; `label` (`POST /v1/admin/sets/{set}/flags/{key}/kill`) is the `route` label of `/metrics`.
///
/// This enum and `spec` below are the one table of routes: the router is compiled from the endpoints' templates,
/// the caller is checked against their `Access` before any handler runs, and the security tests walk `allCases` and
/// fail for a route that has no entry in their auth matrix. Adding a route is one endpoint in `API`, one case, one
/// `spec` entry and one handler.
public enum Route: CaseIterable, Sendable {
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
    /// Flags.
    case listFlags, getFlag, putFlag, deleteFlag, kill, restore, archive, unarchive, setDefault, putDefault, expire
    /// A flag's overrides, rollout, rules, and promotion from another set.
    case addOverride, removeOverride, putRollout, postRollout, removeRollout, pauseRollout, resumeRollout, addRule
    /// The rest of a flag's actions.
    case removeRule, promote
    /// Cohorts.
    case listCohorts, getCohort, putCohort, deleteCohort
    /// SDK keys.
    case listKeys, createKey, revokeKey

    /// The route's endpoint, where it runs, whether it answers `HEAD`, and its handler.
    var spec: RouteSpec {
        switch self {
        case .health: .raw(API.health, on: .loop, head: true) { app, _ in app.health() }
        case .metrics: .raw(API.metrics, on: .loop) { app, _ in app.metricsResponse() }
        case .dashboard: .raw(API.dashboard, on: .loop, head: true) { app, call in app.dashboardFile(call, "") }
        case .dashboardFile:
            .raw(API.dashboardFile, on: .loop, head: true) { app, call in app.dashboardFile(call, call.name) }

        case .document: .raw(API.document, on: .loop, head: true) { app, call in try app.currentDocument(call) }
        case .stream: .raw(API.stream, on: .loop) { app, call in try app.openStream(call) }
        case .oldVersion: .raw(API.oldVersion, on: .store, head: true) { app, call in try app.oldVersion(call) }
        case .ofrepBulk: .raw(API.ofrepBulk, on: .loop) { app, call in try app.ofrepBulk(call) }
        case .ofrepFlag: .raw(API.ofrepFlag, on: .loop) { app, call in try app.ofrepFlag(call) }
        case .telemetry: .raw(API.telemetry, on: .telemetry) { app, call in try app.acceptTelemetry(call) }
        case .signingKeys: .raw(API.signingKeys) { app, call in try app.signingKeysResponse(call) }

        case .whoami: .raw(API.whoami, on: .loop) { app, call in app.whoami(call) }
        case .startSession: .raw(API.startSession) { app, call in try app.startSession(call) }
        case .endSession: .raw(API.endSession) { app, call in try app.endSession(call) }
        case .listTokens: .raw(API.listTokens) { app, call in try app.listTokens(call) }
        case .createToken: .raw(API.createToken) { app, call in try app.createToken(call) }
        case .revokeToken: .raw(API.revokeToken) { app, call in try app.revokeToken(call) }
        case .audit: .raw(API.audit) { app, call in try app.auditResponse(call, set: nil) }
        case .listSets: .raw(API.listSets) { app, call in try app.listSets(call) }
        case .createSet: .raw(API.createSet) { app, call in try app.createSet(call) }
        case .exportSet: .raw(API.exportSet) { app, call in try app.exportSet(call) }
        // A dry run is a viewer's; the handler asks for an editor when the import writes.
        case .importSet: .raw(API.importSet) { app, call in try app.importSet(call) }
        case .history: .raw(API.history) { app, call in try app.historyResponse(call) }
        case .diff: .raw(API.diff) { app, call in try app.diffResponse(call) }
        case .setAudit: .raw(API.setAudit) { app, call in try app.auditResponse(call, set: call.set) }
        case .rollback: .raw(API.rollback) { app, call in try app.rollback(call) }
        case .evaluate: .raw(API.evaluate) { app, call in try app.evaluateResponse(call) }
        // Telemetry's reads run on its queue, not the store's: their cost grows with the instances, and a kill must
        // not wait behind `flagctl --wait` polling them.
        case .clients: .raw(API.clients, on: .telemetry) { app, call in try app.clientsResponse(call) }
        case .usage: .raw(API.usage, on: .telemetry) { app, call in try app.usageResponse(call) }
        case .propagation: .raw(API.propagation, on: .telemetry) { app, call in try app.propagationResponse(call) }
        case .getSettings: .raw(API.getSettings) { app, call in try app.settingsResponse(call) }
        case .putSettings: .raw(API.putSettings) { app, call in try app.updateSettings(call) }
        case .rotateSigningKey: .raw(API.rotateSigningKey) { app, call in try app.rotateSigningKey(call) }
        case .activateSigningKey:
            .raw(API.activateSigningKey) { app, call in try app.changeSigningKey(call, activate: true) }
        case .retireSigningKey:
            .raw(API.retireSigningKey) { app, call in try app.changeSigningKey(call, activate: false) }

        case .listFlags: .raw(API.listFlags) { app, call in try app.listFlags(call) }
        case .getFlag: .raw(API.getFlag) { app, call in try app.getItem(call, .flag(call.key)) }
        case .putFlag: .raw(API.putFlag) { app, call in try app.putFlag(call) }
        case .deleteFlag: .raw(API.deleteFlag) { app, call in try app.deleteItem(call, .flag(call.key)) }
        case .kill: .raw(API.kill) { app, call in try app.setKilled(call, true) }
        case .restore: .raw(API.restore) { app, call in try app.setKilled(call, false) }
        case .archive: .raw(API.archive) { app, call in try app.setArchived(call, true) }
        case .unarchive: .raw(API.unarchive) { app, call in try app.setArchived(call, false) }
        case .setDefault: .raw(API.setDefault) { app, call in try app.setDefault(call) }
        case .putDefault: .raw(API.putDefault) { app, call in try app.setDefault(call) }
        case .expire: .raw(API.expire) { app, call in try app.expire(call) }
        case .addOverride: .raw(API.addOverride) { app, call in try app.addOverride(call) }
        case .removeOverride: .raw(API.removeOverride) { app, call in try app.removeOverride(call) }
        case .putRollout: .raw(API.putRollout) { app, call in try app.setRollout(call) }
        case .postRollout: .raw(API.postRollout) { app, call in try app.setRollout(call) }
        case .removeRollout: .raw(API.removeRollout) { app, call in try app.removeRollout(call) }
        case .pauseRollout: .raw(API.pauseRollout) { app, call in try app.pauseRollout(call, true) }
        case .resumeRollout: .raw(API.resumeRollout) { app, call in try app.pauseRollout(call, false) }
        case .addRule: .raw(API.addRule) { app, call in try app.addRule(call) }
        case .removeRule: .raw(API.removeRule) { app, call in try app.removeRule(call) }
        case .promote: .raw(API.promote) { app, call in try app.promote(call) }

        case .listCohorts: .raw(API.listCohorts) { app, call in try app.listCohorts(call) }
        case .getCohort: .raw(API.getCohort) { app, call in try app.getItem(call, .cohort(call.name)) }
        case .putCohort: .raw(API.putCohort) { app, call in try app.putCohort(call) }
        case .deleteCohort: .raw(API.deleteCohort) { app, call in try app.deleteItem(call, .cohort(call.name)) }

        case .listKeys: .raw(API.listKeys) { app, call in try app.listKeys(call) }
        case .createKey: .raw(API.createKey) { app, call in try app.createKey(call) }
        case .revokeKey: .raw(API.revokeKey) { app, call in try app.revokeKey(call) }
        }
    }

    /// Each route's endpoint, in declaration order, read once.
    private static let endpoints = ordered.map(\.spec.endpoint)

    /// The endpoint the route answers, as FlagAPI's `API` declares it.
    public var endpoint: EndpointInfo { Self.endpoints[index] }

    /// `POST /v1/admin/sets/{set}/flags/{key}/kill`: the `route` label of `/metrics`.
    public var label: String { endpoint.label }

    /// The HTTP method, e.g. `GET`.
    public var method: String { endpoint.method.rawValue }

    /// The path template, e.g. `/v1/sets/{set}`.
    public var template: String { endpoint.template }

    /// Every route in declaration order, made once (`allCases` builds a new array on each call).
    static let ordered = allCases

    /// The route's position in `ordered`, for counters kept by index.
    var index: Int { Self.ordered.firstIndex(of: self) ?? -1 }

    /// Whether `HEAD` is answered as well (with the headers a `GET` would have).
    public var answersHead: Bool { spec.answersHead }

    /// Whether the route may change what the server stores; every such request is recorded in the audit log.
    public var isMutation: Bool {
        method != "GET" && self != .evaluate && self != .ofrepBulk && self != .ofrepFlag && self != .telemetry
    }

    /// Whether a dashboard session must also send its person's own token (`Flagstaff-Confirm-Token`): the routes
    /// that make or revoke tokens and SDK keys, so that a stolen session cannot turn itself into lasting access.
    public var reauthenticatesSessions: Bool { endpoint.confirmsPerson }

    /// The least role a token of the admin API needs for the route; `nil` for the routes of clients and anyone.
    public var role: AdminRole? { endpoint.access.role }
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

    /// A route whose handler writes its own response: documents, streams, OFREP, the dashboard's files.
    static func raw<Request, Answer>(
        _ endpoint: Endpoint<Request, Answer>, on executor: Executor = .store, head: Bool = false,
        _ handler: @escaping Handler
    ) -> RouteSpec {
        RouteSpec(endpoint: endpoint.info, executor: executor, answersHead: head, handler: handler)
    }
}
