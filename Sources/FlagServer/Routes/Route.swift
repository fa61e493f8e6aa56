/// Every route the server answers, by method and path template; the raw value is the `route` label of `/metrics`.
///
/// The router names the route it matched only through `Exchange.match(_:)`, which answers 405 unless one of the
/// given routes has the request's method, so no request is answered by a route missing here. The security tests
/// walk `allCases` and fail for a route that has no entry in their auth matrix.
public enum Route: String, CaseIterable, Sendable {
    case health = "GET /healthz"
    case metrics = "GET /metrics"

    case document = "GET /v1/sets/{set}"
    case stream = "GET /v1/sets/{set}/stream"
    case oldVersion = "GET /v1/sets/{set}/versions/{n}"
    case ofrepBulk = "POST /ofrep/v1/evaluate/flags"
    case ofrepFlag = "POST /ofrep/v1/evaluate/flags/{key}"

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

    case listCohorts = "GET /v1/admin/sets/{set}/cohorts"
    case getCohort = "GET /v1/admin/sets/{set}/cohorts/{name}"
    case putCohort = "PUT /v1/admin/sets/{set}/cohorts/{name}"
    case deleteCohort = "DELETE /v1/admin/sets/{set}/cohorts/{name}"

    case listKeys = "GET /v1/admin/sets/{set}/keys"
    case createKey = "POST /v1/admin/sets/{set}/keys"
    case revokeKey = "DELETE /v1/admin/sets/{set}/keys/{name}"

    /// The HTTP method, e.g. `GET`.
    public var method: Substring { rawValue.prefix { $0 != " " } }

    /// The path template, e.g. `/v1/sets/{set}`.
    public var template: Substring { rawValue.drop { $0 != " " }.dropFirst() }

    /// Every route in declaration order, made once (`allCases` builds a new array on each call).
    static let ordered = allCases

    /// The route's position in `ordered`, for counters kept by index.
    var index: Int { Self.ordered.firstIndex(of: self) ?? -1 }

    /// Whether the route's method is `method`, compared as bytes: `method` walks `Character`s, which showed in the
    /// serving profile when every request's route was checked with it.
    func hasMethod(_ method: String) -> Bool {
        var raw = rawValue
        var method = method
        return raw.withUTF8 { raw in
            method.withUTF8 { method in
                raw.count > method.count && raw[method.count] == ASCII.space && raw.starts(with: method)
            }
        }
    }

    /// Whether `HEAD` is answered as well (with the headers a `GET` would have).
    public var answersHead: Bool { self == .health || self == .document || self == .oldVersion }

    /// Whether the route may change what the server stores; every such request is recorded in the audit log.
    public var isMutation: Bool {
        method != "GET" && self != .evaluate && self != .ofrepBulk && self != .ofrepFlag
    }
}
