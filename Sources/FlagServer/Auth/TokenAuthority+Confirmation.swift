/// Confirming a dashboard session with its person's own token (docs/admin-api.md, "People and roles"): the routes
/// that make or revoke credentials ask a session for it, so that a stolen 12-hour session cannot make itself a token
/// or an SDK key that outlives it.
extension TokenAuthority {
    /// Checks that `presented` is the token `session` was made from: a token of the admin API, not a session, whose
    /// name is the session's person. Throws `reauthenticationFailed` otherwise, never a 401, which would sign the
    /// dashboard out for a mistyped token.
    ///
    /// `presented` goes through `authenticate`, as every request's token does: hashed, looked up by hash and
    /// compared in constant time. The names compared after it are no secret.
    func confirm(_ session: AdminCaller, with presented: String) throws {
        let refused = ServiceError.reauthenticationFailed(
            "the token in Flagstaff-Confirm-Token is not the one this session was made from: send your own token, "
                + "the one you signed in with (not a session token or an SDK key)")
        let principal: Principal
        do {
            principal = try authenticate("Bearer " + presented)
        } catch is ServiceError {
            // Unknown, revoked or expired: `authenticate` throws nothing else.
            throw refused
        }
        guard case .admin(let person) = principal, !person.isSession, person.token == session.name else {
            throw refused
        }
    }
}
