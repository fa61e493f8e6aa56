/// How the API answers a `ServiceError` (SPEC §4): the status and the `error.code` of the JSON error body.
extension ServiceError {
    /// The HTTP status the API answers with (SPEC §4).
    package var status: Int {
        switch code {
        case .badRequest: 400
        case .unauthorized: 401
        // 403, not 401: the session itself is good, and a 401 would sign the dashboard out.
        case .forbidden, .reauthenticationRequired, .reauthenticationFailed: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .conflict, .alreadyExists, .changeConflict, .changeState, .reviewRequired, .flagRequired: 409
        case .invalid, .unknownInstance, .incompatibleClients: 422
        case .unavailable, .storeUnavailable: 503
        case .storage: 500
        case .tooLarge: 413
        case .rateLimited: 429
        }
    }

    /// The machine-readable `error.code` of the JSON error body.
    package var errorCode: String {
        switch code {
        case .badRequest: "bad_request"
        case .unauthorized: "unauthorized"
        case .forbidden: "forbidden"
        case .reauthenticationRequired: "reauthentication_required"
        case .reauthenticationFailed: "reauthentication_failed"
        case .notFound: "not_found"
        case .methodNotAllowed: "method_not_allowed"
        case .conflict: "conflict"
        case .alreadyExists: "already_exists"
        case .invalid: "invalid_flag_set"
        case .unavailable: "unavailable"
        case .storeUnavailable: "store_unavailable"
        case .storage: "storage_failed"
        case .tooLarge: "payload_too_large"
        case .rateLimited: "rate_limited"
        case .unknownInstance: "unknown_instance"
        case .incompatibleClients: "incompatible_clients"
        case .changeConflict: "change_conflict"
        case .changeState: "change_state"
        case .reviewRequired: "review_required"
        case .flagRequired: "flag_required"
        }
    }

    /// The seconds a client should wait before trying again (`Retry-After`), for an error that passes.
    package var retryAfterSeconds: Int? {
        switch code {
        case .storeUnavailable: 2
        case .rateLimited(let seconds): seconds
        default: nil
        }
    }
}
