import FlagCore
import FlagHTTP
import Foundation

/// Named tokens of the admin API, their roles, and the dashboard's sessions (SPEC §4, docs/admin-api.md "People and
/// roles").
extension FlagServerApp {
    /// The caller of a route that only tokens of the admin API reach (the route table checked it).
    func adminCaller(_ call: Call) throws -> AdminCaller {
        guard case .admin(let caller)? = call.principal else {
            throw ServiceError.forbidden("this route needs a token of the admin API")
        }
        return caller
    }

    /// The header in which a dashboard session sends its person's own token, on the routes that ask for it.
    static let confirmationHeader = "Flagstaff-Confirm-Token"

    /// For a route that makes or revokes tokens or SDK keys (`Route.reauthenticatesSessions`): a dashboard session
    /// must send its person's own token in `Flagstaff-Confirm-Token` (403 `reauthentication_required` without it,
    /// `reauthentication_failed` with another), so that a stolen session cannot make itself a credential that
    /// outlives its 12 hours. A named token is the person's own already: nothing is asked of it.
    func confirmPerson(_ request: HTTPRequest, _ principal: Principal?) throws {
        guard case .admin(let caller)? = principal, caller.isSession else { return }
        let header = Self.confirmationHeader
        let presented = request.headers.values(for: header)
        // Two fields may name two tokens: which one confirms must not depend on their order.
        guard presented.count <= 1 else {
            throw ServiceError.reauthenticationFailed("send one \(header) header, not several")
        }
        let token = presented.first?.trimmingHTTPSpaces() ?? ""
        guard !token.isEmpty else {
            throw ServiceError.reauthenticationRequired(
                "creating or revoking tokens and SDK keys from a dashboard session needs your own token again: send "
                    + "the token the session was made from in the header \"\(header): TOKEN\"")
        }
        try tokens.confirm(caller, with: String(token))
    }

    /// `GET /v1/admin/whoami`: who the token acts as, its role and sets, so that the dashboard offers only what the
    /// role may do (the server checks every route anyway).
    func whoami(_ call: Call) -> HTTPResponse {
        guard case .admin(let caller)? = call.principal else {
            return errorResponse(ServiceError.forbidden("this route needs a token of the admin API"), call.exchange)
        }
        return JSONResponse.object { writer in
            writer.member("name", caller.name)
            writer.member("role", caller.role.rawValue)
            Self.writeSets(caller.sets.map { $0.sorted() }, to: &writer)
            writer.key("session")
            writer.bool(caller.isSession)
            writer.member("expiresAt", caller.expiresAt)
        }
    }

    /// `POST /v1/admin/sessions`: a session token of the caller's role and sets, for the dashboard, so that the
    /// person's own token is never kept in a browser.
    func startSession(_ call: Call) throws -> HTTPResponse {
        let caller = try adminCaller(call)
        let input = try RequestInput(call.request)
        let (token, record) = try tokens.startSession(
            for: caller,
            note: ChangeNote(actor: caller.name, action: "session.start", reason: try input.reason()))
        return JSONResponse.object(status: 201) { writer in
            writer.member("token", token)
            writer.member("name", record.name)
            writer.member("actor", caller.name)
            writer.member("role", caller.role.rawValue)
            Self.writeSets(caller.sets.map { $0.sorted() }, to: &writer)
            writer.member("expiresAt", record.expiresAt)
        }
    }

    /// `DELETE /v1/admin/sessions/current`: signs the calling session out.
    func endSession(_ call: Call) throws -> HTTPResponse {
        let caller = try adminCaller(call)
        guard caller.isSession else {
            throw ServiceError.badRequest(
                "this is not a session token; revoke a named token with DELETE /v1/admin/tokens/{name}")
        }
        let input = try RequestInput(call.request)
        try tokens.revoke(
            name: caller.token, set: nil,
            note: ChangeNote(actor: caller.name, action: "session.end", reason: try input.reason()))
        return JSONResponse.object { writer in
            writer.key("revoked")
            writer.bool(true)
        }
    }

    /// `GET /v1/admin/tokens`: the tokens of the admin API, sessions included, revoked ones too.
    func listTokens(_ call: Call) throws -> HTTPResponse {
        let all = try tokens.tokens(set: nil).filter { if case .admin = $0.role { true } else { false } }
        return JSONResponse.list("tokens", all, capacity: 192) { writer, token in
            Self.writeToken(token, to: &writer)
        }
    }

    /// `POST /v1/admin/tokens`: `{"name","role","sets"?,"expires"?|"expiresAt"?}`; the token is in this answer only.
    func createToken(_ call: Call) throws -> HTTPResponse {
        let input = try RequestInput(call.request)
        let name = try input.requireString("name")
        let roleName = try input.requireString("role")
        guard let role = AdminRole(rawValue: roleName) else {
            let known = AdminRole.allCases.map(\.rawValue).joined(separator: ", ")
            throw ServiceError.badRequest("unknown role \"\(roleName)\" (one of \(known))", path: "role")
        }
        var sets: [String]?
        switch input.value("sets") {
        case nil, .null?: sets = nil
        case .array(let items)?:
            sets = try items.enumerated().map { index, item in
                guard case .string(let set) = item else {
                    throw ServiceError.badRequest("set names are strings", path: "sets[\(index)]")
                }
                return set
            }
        case .some:
            throw ServiceError.badRequest(
                "\"sets\" must be a list of set names, or left out for every set", path: "sets")
        }
        var expiresAt = try input.date("expiresAt")
        if let seconds = try input.duration("expires") {
            guard expiresAt == nil else {
                throw ServiceError.badRequest("give \"expires\" or \"expiresAt\", not both", path: "expires")
            }
            expiresAt = clock.wholeSecond().addingTimeInterval(Double(seconds))
        }
        let (token, record) = try tokens.issue(
            name: name, role: .admin(role, sets: sets.map { Array(Set($0)).sorted() }), expiresAt: expiresAt,
            note: ChangeNote(actor: call.actor, action: "token.create", subject: name, reason: try input.reason()))
        return JSONResponse.object(status: 201) { writer in
            Self.writeToken(record, to: &writer)
            writer.member("token", token)
        }
    }

    /// `DELETE /v1/admin/tokens/{name}`: revoked at once, with the sessions made from it.
    func revokeToken(_ call: Call) throws -> HTTPResponse {
        let name = call.name
        let input = try RequestInput(call.request)
        guard try tokens.tokens(set: nil).contains(where: { $0.name == name && !$0.role.isSDKKey }) else {
            throw ServiceError.notFound(
                "no token \"\(name)\"; SDK keys are revoked under their set's /keys", subject: .token)
        }
        try tokens.revoke(
            name: name, set: nil,
            note: ChangeNote(actor: call.actor, action: "token.revoke", subject: name, reason: try input.reason()))
        return JSONResponse.object { writer in
            writer.member("name", name)
            writer.key("revoked")
            writer.bool(true)
        }
    }

    /// `"sets": [...]`, or `null` for every set.
    static func writeSets(_ sets: [String]?, to writer: inout JSONWriter) {
        writer.key("sets")
        guard let sets else {
            writer.null()
            return
        }
        writeStrings(sets, to: &writer)
    }

    /// A token's record, as the tokens routes answer it (never its secret, which is not stored).
    static func writeToken(_ token: StoredToken, to writer: inout JSONWriter) {
        writer.member("name", token.name)
        if case .admin(let role, let sets) = token.role {
            writer.member("role", role.rawValue)
            writeSets(sets, to: &writer)
        }
        writer.member("createdAt", token.createdAt)
        writer.member("expiresAt", token.expiresAt)
        writer.member("lastUsedAt", token.lastUsedAt)
        writer.member("revokedAt", token.revokedAt)
        writer.member("sessionOf", token.sessionOf)
    }
}

extension TokenRole {
    /// Whether the role is an SDK key's.
    var isSDKKey: Bool {
        if case .sdk = self { return true }
        return false
    }
}
