/// The error answer of every route (SPEC §4): `{"error": {"code", "message", "path", "subject"?, …}}`.
public struct ErrorAnswer: APIAnswer, Codable, Hashable {
    /// The error.
    public var error: APIError

    /// The answer carrying `error`.
    public init(_ error: APIError) {
        self.error = error
    }
}

/// What went wrong, for a program (`code`, `subject`) and for a person (`message`).
public struct APIError: Sendable, Codable, Hashable {
    /// Why the request failed, e.g. `not_found`, `conflict`.
    public var code: ErrorCode
    /// What went wrong and what to do about it, for people; programs read `code` and `subject`.
    public var message: String
    /// The JSON path of the field at fault, in the request or in the flag set; `null` when none is.
    @ExplicitNull public var path: String?
    /// What the error is about, e.g. `set` for a 404 naming a set that does not exist and `flag` for one naming a
    /// flag; absent when it is about the request as a whole.
    public var subject: ErrorSubject?
    /// The set's current version, for a `409 conflict`.
    public var currentVersion: Int?
    /// Every problem of an invalid flag set (`422 invalid_flag_set`), each with its path.
    public var problems: [ErrorProblem]?
    /// For `incompatible_clients`: the constructs active clients cannot evaluate.
    public var constructs: [String]?
    /// For `incompatible_clients`: the active instances that cannot evaluate them.
    public var lacking: Int?
    /// For `incompatible_clients`: the active instances.
    public var active: Int?
    /// For `incompatible_clients`: those that cannot, by SDK version.
    public var sdks: [SDKInstances]?
    /// For `incompatible_clients`: those that cannot and named their app, by app version.
    public var apps: [SDKInstances]?

    /// An error; the members of a conflict, an invalid set or the compatibility gate are left out unless given.
    public init(
        code: ErrorCode, message: String, path: String? = nil, subject: ErrorSubject? = nil, currentVersion: Int? = nil,
        problems: [ErrorProblem]? = nil, constructs: [String]? = nil, lacking: Int? = nil, active: Int? = nil,
        sdks: [SDKInstances]? = nil, apps: [SDKInstances]? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.subject = subject
        self.currentVersion = currentVersion
        self.problems = problems
        self.constructs = constructs
        self.lacking = lacking
        self.active = active
        self.sdks = sdks
        self.apps = apps
    }
}

/// One problem of an invalid flag set: where, and what is wrong.
public struct ErrorProblem: Sendable, Codable, Hashable {
    /// The JSON path in the set, e.g. `flags.new-checkout.rules[0].cohort`.
    public var path: String
    /// What is wrong there.
    public var message: String

    /// A problem at `path`.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
}

/// The machine-readable `error.code` (docs/admin-api.md, "Errors"); a code this client does not know is kept as
/// sent.
public struct ErrorCode: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The code as sent, e.g. `not_found`.
    public let rawValue: String

    /// The code `rawValue`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The code itself.
    public var description: String { rawValue }

    /// 400: the request cannot be read.
    public static let badRequest = ErrorCode(rawValue: "bad_request")
    /// 401: no token, or one the server does not know.
    public static let unauthorized = ErrorCode(rawValue: "unauthorized")
    /// 403: the token may not do this.
    public static let forbidden = ErrorCode(rawValue: "forbidden")
    /// 403: a dashboard session must send its person's own token too.
    public static let reauthenticationRequired = ErrorCode(rawValue: "reauthentication_required")
    /// 403: the token a dashboard session sent is not its person's.
    public static let reauthenticationFailed = ErrorCode(rawValue: "reauthentication_failed")
    /// 404: what the path or the request names does not exist (`subject` says what).
    public static let notFound = ErrorCode(rawValue: "not_found")
    /// 405: the path exists, not with this method.
    public static let methodNotAllowed = ErrorCode(rawValue: "method_not_allowed")
    /// 409: the set is no longer at the version `If-Match` named (`currentVersion`).
    public static let conflict = ErrorCode(rawValue: "conflict")
    /// 409: what the request creates exists already (`subject` says what).
    public static let alreadyExists = ErrorCode(rawValue: "already_exists")
    /// 409: a change request's items changed since its base version; the message names them.
    public static let changeConflict = ErrorCode(rawValue: "change_conflict")
    /// 409: a change request is not in a state that allows this (applied, rejected, withdrawn…).
    public static let changeState = ErrorCode(rawValue: "change_state")
    /// 409: deleting or archiving a flag that other flags list as a prerequisite; the message names them.
    public static let flagRequired = ErrorCode(rawValue: "flag_required")
    /// 409: the set requires reviews: propose the write (`?propose=TITLE`) instead.
    public static let reviewRequired = ErrorCode(rawValue: "review_required")
    /// 422: the flag set would be invalid (`problems`).
    public static let invalidFlagSet = ErrorCode(rawValue: "invalid_flag_set")
    /// 422: a telemetry report names an instance the server did not issue.
    public static let unknownInstance = ErrorCode(rawValue: "unknown_instance")
    /// 422: too many active clients cannot evaluate the write (the compatibility gate).
    public static let incompatibleClients = ErrorCode(rawValue: "incompatible_clients")
    /// 413: the body is over a limit.
    public static let payloadTooLarge = ErrorCode(rawValue: "payload_too_large")
    /// 429: too many requests; `Retry-After` says when to try again.
    public static let rateLimited = ErrorCode(rawValue: "rate_limited")
    /// 500: the store failed.
    public static let storageFailed = ErrorCode(rawValue: "storage_failed")
    /// 503: the server is shutting down or overloaded.
    public static let unavailable = ErrorCode(rawValue: "unavailable")
    /// 503: the store cannot be reached; try again (`Retry-After`).
    public static let storeUnavailable = ErrorCode(rawValue: "store_unavailable")
}

/// What an error is about: the kind of thing that does not exist (a 404), exists already (a 409), or is at fault,
/// so that a client tells "no such set" from "no such flag" without reading the message. A subject this client does
/// not know is kept as sent.
public struct ErrorSubject: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The subject as sent, e.g. `set`.
    public let rawValue: String

    /// The subject `rawValue`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The subject itself.
    public var description: String { rawValue }

    /// A flag set.
    public static let set = ErrorSubject(rawValue: "set")
    /// A version of a set.
    public static let version = ErrorSubject(rawValue: "version")
    /// A flag of a set.
    public static let flag = ErrorSubject(rawValue: "flag")
    /// A cohort of a set.
    public static let cohort = ErrorSubject(rawValue: "cohort")
    /// A targeting rule of a flag.
    public static let rule = ErrorSubject(rawValue: "rule")
    /// An override of a flag.
    public static let override = ErrorSubject(rawValue: "override")
    /// A flag's rollout.
    public static let rollout = ErrorSubject(rawValue: "rollout")
    /// A token of the admin API (or a dashboard session).
    public static let token = ErrorSubject(rawValue: "token")
    /// An SDK key.
    public static let key = ErrorSubject(rawValue: "key")
    /// A signing key of a set.
    public static let signingKey = ErrorSubject(rawValue: "signing-key")
    /// A client instance id.
    public static let instance = ErrorSubject(rawValue: "instance")
    /// A route: no path of the API matches.
    public static let route = ErrorSubject(rawValue: "route")
    /// A change request.
    public static let change = ErrorSubject(rawValue: "change")
    /// A webhook.
    public static let webhook = ErrorSubject(rawValue: "webhook")
}
