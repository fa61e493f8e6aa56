import FlagHTTP

/// Every route the server answers, by method and path template; the raw value is the `route` label of `/metrics`.
///
/// This enum and `spec` below are the one table of routes: the router is compiled from the templates, the caller is
/// checked against `Access` before any handler runs, and the security tests walk `allCases` and fail for a route
/// that has no entry in their auth matrix. Adding a route is one case, one `spec` entry and one handler.
public enum Route: String, CaseIterable, Sendable {
    case health = "GET /healthz"
    case metrics = "GET /metrics"
    case dashboard = "GET /ui"
    case dashboardFile = "GET /ui/{name}"

    case document = "GET /v1/sets/{set}"
    case stream = "GET /v1/sets/{set}/stream"
    case oldVersion = "GET /v1/sets/{set}/versions/{n}"
    case ofrepBulk = "POST /ofrep/v1/evaluate/flags"
    case ofrepFlag = "POST /ofrep/v1/evaluate/flags/{key}"
    case telemetry = "POST /v1/sets/{set}/telemetry"
    case signingKeys = "GET /v1/sets/{set}/signing-keys"

    case whoami = "GET /v1/admin/whoami"
    case startSession = "POST /v1/admin/sessions"
    case endSession = "DELETE /v1/admin/sessions/current"
    case listTokens = "GET /v1/admin/tokens"
    case createToken = "POST /v1/admin/tokens"
    case revokeToken = "DELETE /v1/admin/tokens/{name}"
    case audit = "GET /v1/admin/audit"
    case listSets = "GET /v1/admin/sets"
    case createSet = "POST /v1/admin/sets"
    case exportSet = "GET /v1/admin/sets/{set}"
    case importSet = "PUT /v1/admin/sets/{set}"
    case history = "GET /v1/admin/sets/{set}/history"
    case diff = "GET /v1/admin/sets/{set}/diff"
    case setAudit = "GET /v1/admin/sets/{set}/audit"
    case rollback = "POST /v1/admin/sets/{set}/rollback"
    case evaluate = "POST /v1/admin/sets/{set}/evaluate"
    case clients = "GET /v1/admin/sets/{set}/clients"
    case usage = "GET /v1/admin/sets/{set}/usage"
    case propagation = "GET /v1/admin/sets/{set}/versions/{n}/propagation"
    case getSettings = "GET /v1/admin/sets/{set}/settings"
    case putSettings = "PUT /v1/admin/sets/{set}/settings"
    case rotateSigningKey = "POST /v1/admin/sets/{set}/signing-keys"
    case activateSigningKey = "POST /v1/admin/sets/{set}/signing-keys/{name}/activate"
    case retireSigningKey = "POST /v1/admin/sets/{set}/signing-keys/{name}/retire"

    case listFlags = "GET /v1/admin/sets/{set}/flags"
    case getFlag = "GET /v1/admin/sets/{set}/flags/{key}"
    case putFlag = "PUT /v1/admin/sets/{set}/flags/{key}"
    case deleteFlag = "DELETE /v1/admin/sets/{set}/flags/{key}"
    case kill = "POST /v1/admin/sets/{set}/flags/{key}/kill"
    case restore = "POST /v1/admin/sets/{set}/flags/{key}/restore"
    case archive = "POST /v1/admin/sets/{set}/flags/{key}/archive"
    case unarchive = "POST /v1/admin/sets/{set}/flags/{key}/unarchive"
    case setDefault = "POST /v1/admin/sets/{set}/flags/{key}/default"
    case putDefault = "PUT /v1/admin/sets/{set}/flags/{key}/default"
    case expire = "POST /v1/admin/sets/{set}/flags/{key}/expire"
    case addOverride = "POST /v1/admin/sets/{set}/flags/{key}/overrides"
    case removeOverride = "DELETE /v1/admin/sets/{set}/flags/{key}/overrides"
    case putRollout = "PUT /v1/admin/sets/{set}/flags/{key}/rollout"
    case postRollout = "POST /v1/admin/sets/{set}/flags/{key}/rollout"
    case removeRollout = "DELETE /v1/admin/sets/{set}/flags/{key}/rollout"
    case pauseRollout = "POST /v1/admin/sets/{set}/flags/{key}/rollout/pause"
    case resumeRollout = "POST /v1/admin/sets/{set}/flags/{key}/rollout/resume"
    case addRule = "POST /v1/admin/sets/{set}/flags/{key}/rules"
    case removeRule = "DELETE /v1/admin/sets/{set}/flags/{key}/rules/{name}"
    case promote = "POST /v1/admin/sets/{set}/flags/{key}/promote"

    case listCohorts = "GET /v1/admin/sets/{set}/cohorts"
    case getCohort = "GET /v1/admin/sets/{set}/cohorts/{name}"
    case putCohort = "PUT /v1/admin/sets/{set}/cohorts/{name}"
    case deleteCohort = "DELETE /v1/admin/sets/{set}/cohorts/{name}"

    case listKeys = "GET /v1/admin/sets/{set}/keys"
    case createKey = "POST /v1/admin/sets/{set}/keys"
    case revokeKey = "DELETE /v1/admin/sets/{set}/keys/{name}"

    /// Who may call the route, where it runs, whether it answers `HEAD`, and its handler.
    var spec: RouteSpec {
        switch self {
        case .health: RouteSpec(.anyone, on: .loop, head: true) { app, _ in app.health() }
        case .metrics: RouteSpec(.unlimited(.admin), on: .loop) { app, _ in app.metricsResponse() }
        case .dashboard: RouteSpec(.anyone, on: .loop, head: true) { app, call in app.dashboardFile(call, "") }
        case .dashboardFile:
            RouteSpec(.anyone, on: .loop, head: true) { app, call in app.dashboardFile(call, call.name) }

        case .document: RouteSpec(.setReader, on: .loop, head: true) { app, call in try app.currentDocument(call) }
        case .stream: RouteSpec(.setReader, on: .loop) { app, call in try app.openStream(call) }
        case .oldVersion: RouteSpec(.setReader, on: .store, head: true) { app, call in try app.oldVersion(call) }
        case .ofrepBulk: RouteSpec(.anyToken, on: .loop) { app, call in try app.ofrepBulk(call) }
        case .ofrepFlag: RouteSpec(.anyToken, on: .loop) { app, call in try app.ofrepFlag(call) }
        case .telemetry: RouteSpec(.setReader, on: .telemetry) { app, call in try app.acceptTelemetry(call) }
        case .signingKeys: RouteSpec(.setReader, on: .store) { app, call in try app.signingKeysResponse(call) }

        case .whoami: RouteSpec(.role(.viewer), on: .loop) { app, call in app.whoami(call) }
        case .startSession: .viewer { app, call in try app.startSession(call) }
        case .endSession: .viewer { app, call in try app.endSession(call) }
        case .listTokens: RouteSpec(.unlimited(.admin), on: .store) { app, call in try app.listTokens(call) }
        case .createToken: .credentials(.unlimited(.admin)) { app, call in try app.createToken(call) }
        case .revokeToken: .credentials(.unlimited(.admin)) { app, call in try app.revokeToken(call) }
        case .audit: .viewer { app, call in try app.auditResponse(call, set: nil) }
        case .listSets: .viewer { app, call in try app.listSets(call) }
        case .createSet: RouteSpec(.unlimited(.admin), on: .store) { app, call in try app.createSet(call) }
        case .exportSet: .viewer { app, call in try app.exportSet(call) }
        // A dry run is a viewer's; the handler asks for an editor when the import writes.
        case .importSet: .viewer { app, call in try app.importSet(call) }
        case .history: .viewer { app, call in try app.historyResponse(call) }
        case .diff: .viewer { app, call in try app.diffResponse(call) }
        case .setAudit: .viewer { app, call in try app.auditResponse(call, set: call.set) }
        case .rollback: .editor { app, call in try app.rollback(call) }
        case .evaluate: .viewer { app, call in try app.evaluateResponse(call) }
        // Telemetry's reads run on its queue, not the store's: their cost grows with the instances, and a kill must
        // not wait behind `flagctl --wait` polling them.
        case .clients: RouteSpec(.role(.viewer), on: .telemetry) { app, call in try app.clientsResponse(call) }
        case .usage: RouteSpec(.role(.viewer), on: .telemetry) { app, call in try app.usageResponse(call) }
        case .propagation:
            RouteSpec(.role(.viewer), on: .telemetry) { app, call in try app.propagationResponse(call) }
        case .getSettings: .viewer { app, call in try app.settingsResponse(call) }
        case .putSettings: .admin { app, call in try app.updateSettings(call) }
        case .rotateSigningKey: .admin { app, call in try app.rotateSigningKey(call) }
        case .activateSigningKey: .admin { app, call in try app.changeSigningKey(call, activate: true) }
        case .retireSigningKey: .admin { app, call in try app.changeSigningKey(call, activate: false) }

        case .listFlags: .viewer { app, call in try app.listFlags(call) }
        case .getFlag: .viewer { app, call in try app.getItem(call, .flag(call.key)) }
        case .putFlag: .editor { app, call in try app.putFlag(call) }
        case .deleteFlag: .editor { app, call in try app.deleteItem(call, .flag(call.key)) }
        case .kill: .editor { app, call in try app.setKilled(call, true) }
        case .restore: .editor { app, call in try app.setKilled(call, false) }
        case .archive: .editor { app, call in try app.setArchived(call, true) }
        case .unarchive: .editor { app, call in try app.setArchived(call, false) }
        case .setDefault, .putDefault: .editor { app, call in try app.setDefault(call) }
        case .expire: .editor { app, call in try app.expire(call) }
        case .addOverride: .editor { app, call in try app.addOverride(call) }
        case .removeOverride: .editor { app, call in try app.removeOverride(call) }
        case .putRollout, .postRollout: .editor { app, call in try app.setRollout(call) }
        case .removeRollout: .editor { app, call in try app.removeRollout(call) }
        case .pauseRollout: .editor { app, call in try app.pauseRollout(call, true) }
        case .resumeRollout: .editor { app, call in try app.pauseRollout(call, false) }
        case .addRule: .editor { app, call in try app.addRule(call) }
        case .removeRule: .editor { app, call in try app.removeRule(call) }
        case .promote: .editor { app, call in try app.promote(call) }

        case .listCohorts: .viewer { app, call in try app.listCohorts(call) }
        case .getCohort: .viewer { app, call in try app.getItem(call, .cohort(call.name)) }
        case .putCohort: .editor { app, call in try app.putCohort(call) }
        case .deleteCohort: .editor { app, call in try app.deleteItem(call, .cohort(call.name)) }

        case .listKeys: .admin { app, call in try app.listKeys(call) }
        case .createKey: .credentials(.role(.admin)) { app, call in try app.createKey(call) }
        case .revokeKey: .credentials(.role(.admin)) { app, call in try app.revokeKey(call) }
        }
    }

    /// The HTTP method, e.g. `GET`.
    public var method: Substring { rawValue.prefix { $0 != " " } }

    /// The path template, e.g. `/v1/sets/{set}`.
    public var template: Substring { rawValue.drop { $0 != " " }.dropFirst() }

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
    public var reauthenticatesSessions: Bool { spec.reauthenticatesSessions }

    /// The least role a token of the admin API needs for the route; `nil` for the routes of clients and anyone.
    public var role: AdminRole? {
        switch spec.access {
        case .role(let role), .unlimited(let role): role
        case .anyone, .anyToken, .setReader: nil
        }
    }
}

/// Who may call a route. The caller is checked against it before the handler runs, so that a refusal is counted
/// under the route's label and no handler can forget the check.
public enum Access: Sendable, Hashable {
    /// Anyone, without a token.
    case anyone
    /// Any valid token: an SDK key acts on its own set, a token of the admin API names one it may access.
    case anyToken
    /// An SDK key of the path's `{set}`, or a token of the admin API that may access that set.
    case setReader
    /// A token of the admin API with at least this role, that may access the path's `{set}` when it has one.
    case role(AdminRole)
    /// A token of the admin API with at least this role and no limit to sets: what concerns the whole server
    /// (creating sets, tokens, metrics).
    case unlimited(AdminRole)
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

/// One route's entry in the table: its access, executor, `HEAD` handling, whether a session must confirm it with
/// its person's own token, and handler.
struct RouteSpec: Sendable {
    /// Answers a call; returns nil when the handler answers later itself (long-poll, stream).
    typealias Handler = @Sendable (FlagServerApp, Call) throws -> HTTPResponse?

    let access: Access
    let executor: Executor
    let answersHead: Bool
    /// Checked with the access, before the handler runs (`FlagServerApp.confirmPerson`).
    let reauthenticatesSessions: Bool
    let handler: Handler

    init(
        _ access: Access, on executor: Executor, head: Bool = false, reauthenticatesSessions: Bool = false,
        _ handler: @escaping Handler
    ) {
        self.access = access
        self.executor = executor
        self.answersHead = head
        self.reauthenticatesSessions = reauthenticatesSessions
        self.handler = handler
    }

    /// A route of the admin API for viewers and up, answered on the store queue.
    static func viewer(_ handler: @escaping Handler) -> RouteSpec {
        RouteSpec(.role(.viewer), on: .store, handler)
    }

    /// A route of the admin API for editors and admins, answered on the store queue.
    static func editor(_ handler: @escaping Handler) -> RouteSpec {
        RouteSpec(.role(.editor), on: .store, handler)
    }

    /// A route of the admin API for admins, answered on the store queue.
    static func admin(_ handler: @escaping Handler) -> RouteSpec {
        RouteSpec(.role(.admin), on: .store, handler)
    }

    /// A route that makes or revokes a token or an SDK key, answered on the store queue: a dashboard session must
    /// confirm it with its person's own token.
    static func credentials(_ access: Access, _ handler: @escaping Handler) -> RouteSpec {
        RouteSpec(access, on: .store, reauthenticatesSessions: true, handler)
    }
}
