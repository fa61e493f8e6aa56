import FlagHTTP

/// Who may call a route: the caller of a request checked against the route's `Access` before its handler runs.
extension FlagServerApp {
    /// The caller of a request to a route with `access`: 401 without a valid token, 403 for a token that may not
    /// call it; nil for a route anyone may call. `generation` is the token authority's, read before.
    func authorize(
        _ request: HTTPRequest, _ access: Access, _ parameters: RouteParameters, memo: inout ConnectionMemo?,
        generation: Int
    ) throws -> Principal? {
        switch access {
        case .anyone:
            return nil
        case .anyToken:
            return try authenticate(request, memo: &memo, generation: generation)
        case .setReader:
            let principal = try authenticate(request, memo: &memo, generation: generation)
            guard principal.mayRead(parameters.set) else {
                throw ServiceError.forbidden(
                    principal.isSDKKey
                        ? "this SDK key may read only its own flag set, not \"\(parameters.set)\""
                        : "this token may not access flag set \"\(parameters.set)\"")
            }
            return principal
        case .role, .unlimited:
            let principal = try authenticate(request, memo: &memo, generation: generation)
            guard case .admin(let caller) = principal else {
                throw ServiceError.forbidden("SDK keys are read-only: this route needs a token of the admin API")
            }
            try Self.check(caller, against: access, set: parameters.set)
            return principal
        }
    }

    /// 403 unless a token of the admin API may call a route with `access` (`.role` or `.unlimited`) on `set` (empty
    /// for a route without one). Handlers that do more than their route's least role ask here too.
    static func check(_ caller: AdminCaller, against access: Access, set: String) throws {
        let role: AdminRole
        switch access {
        case .role(let least), .unlimited(let least): role = least
        case .anyone, .anyToken, .setReader: return
        }
        guard caller.role >= role else {
            throw ServiceError.forbidden(
                "this route needs the \(role.rawValue) role; the token of \"\(caller.name)\" is a \(caller.role.rawValue)"
            )
        }
        if case .unlimited = access, caller.sets != nil {
            throw ServiceError.forbidden(
                "this route concerns the whole server: a token limited to sets may not call it")
        }
        if !set.isEmpty, !caller.mayAccess(set) {
            throw ServiceError.forbidden("the token of \"\(caller.name)\" may not access flag set \"\(set)\"")
        }
    }
}
