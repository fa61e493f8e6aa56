import FlagAPI
import FlagCore

/// Why a request to the server's logic failed. The routes map it to an HTTP status and error code
/// (`ServiceError+HTTP.swift`); the service knows nothing of HTTP.
package struct ServiceError: Error, Sendable, CustomStringConvertible {
    enum Code: Sendable {
        case badRequest
        case unauthorized
        case forbidden
        case reauthenticationRequired
        case reauthenticationFailed
        case notFound
        case methodNotAllowed
        case conflict(current: Int, lostRace: Bool)
        case invalid(problems: [Problem])
        case alreadyExists
        case unavailable
        case storeUnavailable
        case storage
        case tooLarge
        case rateLimited(retryAfter: Int)
        case unknownInstance
        case incompatibleClients(IncompatibleClients)
        case changeConflict
        case changeState
        case reviewRequired
        case flagRequired
    }

    let code: Code
    /// What went wrong and how to fix it; never contains a token.
    package let message: String
    /// The JSON path of the offending field (in the request body or the flag set), when there is one.
    package let path: String?
    /// What the error is about (a set, a flag, a token…), so that a client tells "no such set" from "no such flag"
    /// without reading `message`.
    package let subject: ErrorSubject?

    private init(_ code: Code, _ message: String, path: String? = nil, subject: ErrorSubject? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.subject = subject
    }

    /// A change request touches items that changed since its base version (`message` names them).
    package static func changeConflict(_ message: String) -> ServiceError {
        ServiceError(.changeConflict, message, subject: .change)
    }

    /// The set requires reviews, and the write is neither proposed nor exempt.
    package static func reviewRequired(_ message: String) -> ServiceError {
        ServiceError(.reviewRequired, message, path: "propose")
    }

    /// A change request is not in a state that allows what was asked.
    package static func changeState(_ message: String) -> ServiceError {
        ServiceError(.changeState, message, subject: .change)
    }

    /// Deleting or archiving a flag that other flags list as a prerequisite (`message` names them).
    package static func flagRequired(_ key: String, by dependents: [String]) -> ServiceError {
        let listed = dependents.prefix(10).joined(separator: ", ") + (dependents.count > 10 ? ", …" : "")
        return ServiceError(
            .flagRequired,
            "flag \"\(key)\" is a prerequisite of \(dependents.count) flag\(dependents.count == 1 ? "" : "s") "
                + "(\(listed)): remove it from their prerequisites first",
            path: "flags.\(key)", subject: .flag)
    }

    /// The request is malformed: bad JSON, a missing or mistyped field, a bad query parameter.
    package static func badRequest(_ message: String, path: String? = nil) -> ServiceError {
        ServiceError(.badRequest, message, path: path)
    }

    /// No token, or one the server does not know.
    package static func unauthorized(_ message: String) -> ServiceError { ServiceError(.unauthorized, message) }

    /// The token is valid but may not do this.
    package static func forbidden(_ message: String) -> ServiceError { ServiceError(.forbidden, message) }

    /// A dashboard session asked for a change that needs its person's own token as well, and sent none.
    package static func reauthenticationRequired(_ message: String) -> ServiceError {
        ServiceError(.reauthenticationRequired, message)
    }

    /// A dashboard session sent a token that is not the one it was made from.
    package static func reauthenticationFailed(_ message: String) -> ServiceError {
        ServiceError(.reauthenticationFailed, message)
    }

    /// No such set, version, flag, cohort, key or route: `subject` says which.
    package static func notFound(_ message: String, path: String? = nil, subject: ErrorSubject?) -> ServiceError {
        ServiceError(.notFound, message, path: path, subject: subject)
    }

    /// The route exists but not with this method.
    package static func methodNotAllowed(_ method: String, _ path: String) -> ServiceError {
        ServiceError(.methodNotAllowed, "\(method) is not allowed on \(path)")
    }

    /// The write was based on a version that is no longer current (`If-Match`, or a lost race).
    package static func conflict(set: String, expected: Int, current: Int) -> ServiceError {
        ServiceError(
            .conflict(current: current, lostRace: false),
            "flag set \"\(set)\" is at version \(current), not \(expected): fetch it again and reapply the change",
            subject: .set)
    }

    /// A conflict found by the store: another server sharing it wrote the version this write was based on.
    static func lostRace(set: String, expected: Int, current: Int) -> ServiceError {
        ServiceError(
            .conflict(current: current, lostRace: true),
            "flag set \"\(set)\" is at version \(current), not \(expected): fetch it again and reapply the change",
            subject: .set)
    }

    /// Whether the store refused the write because another server wrote first.
    var isLostRace: Bool {
        if case .conflict(_, true) = code { return true }
        return false
    }

    /// The change would make the set invalid; every problem is listed with its JSON path.
    package static func invalid(_ problems: [Problem]) -> ServiceError {
        let summary = problems.prefix(5).map(\.description).joined(separator: "; ")
        let more = problems.count > 5 ? " (and \(problems.count - 5) more)" : ""
        return ServiceError(
            .invalid(problems: problems), "the flag set would be invalid: \(summary)\(more)", path: problems.first?.path
        )
    }

    /// The body is over a limit, named in the message.
    package static func tooLarge(_ message: String) -> ServiceError { ServiceError(.tooLarge, message) }

    /// The caller sent too much too fast; it may try again after `retryAfter` seconds.
    package static func rateLimited(_ message: String, retryAfter: Int) -> ServiceError {
        ServiceError(.rateLimited(retryAfter: retryAfter), message)
    }

    /// A telemetry report names an instance id this server did not issue, or one that expired.
    package static func unknownInstance(_ message: String) -> ServiceError {
        ServiceError(.unknownInstance, message, subject: .instance)
    }

    /// A write needs what too many active client instances cannot evaluate (the compatibility gate).
    static func incompatibleClients(_ details: IncompatibleClients) -> ServiceError {
        ServiceError(.incompatibleClients(details), details.message)
    }

    /// The gate's findings, for an `incompatible_clients` refusal.
    var incompatibility: IncompatibleClients? {
        if case .incompatibleClients(let details) = code { return details }
        return nil
    }

    /// Something of that name already exists: `subject` says what.
    package static func alreadyExists(_ message: String, subject: ErrorSubject?) -> ServiceError {
        ServiceError(.alreadyExists, message, subject: subject)
    }

    /// The server is shutting down or overloaded.
    package static func unavailable(_ message: String) -> ServiceError { ServiceError(.unavailable, message) }

    /// The store failed; the message carries the store's explanation.
    package static func storage(_ error: any Error) -> ServiceError {
        if let error = error as? StoreError {
            if error.isNotFound { return .notFound(error.message, subject: error.isMissingVersion ? .version : .set) }
            // The service checks names before it writes: what the store finds taken was taken by another server.
            if error.isAlreadyExists { return .alreadyExists(error.message, subject: nil) }
            if error.isUnavailable { return ServiceError(.storeUnavailable, error.message) }
            return ServiceError(.storage, error.message)
        }
        return ServiceError(.storage, "storage failed: \(error)")
    }

    /// What the store holds breaks a rule the service keeps when it writes: a 500 that says which.
    static func corrupt(_ message: String) -> ServiceError { ServiceError(.storage, message) }

    /// Whether the store could not be reached: the request may be retried (`Retry-After`).
    package var isStoreUnavailable: Bool {
        if case .storeUnavailable = code { return true }
        return false
    }

    /// The set's current version, for a conflict.
    package var currentVersion: Int? {
        if case .conflict(let current, _) = code { return current }
        return nil
    }

    /// Every problem, for an invalid set.
    package var problems: [Problem] {
        if case .invalid(let problems) = code { return problems }
        return []
    }

    /// Whether a change request's items changed since its base version.
    var isChangeConflict: Bool {
        if case .changeConflict = code { return true }
        return false
    }

    /// Whether a change request was no longer in a state that allows what was asked.
    var isChangeState: Bool {
        if case .changeState = code { return true }
        return false
    }

    /// Whether the set's checks or the compatibility gate refused the write itself (a 422 of either).
    var refusesTheWrite: Bool {
        switch code {
        case .invalid, .incompatibleClients: true
        default: false
        }
    }

    package var description: String { path.map { "\($0): \(message)" } ?? message }
}
