import FlagAPI
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
    func whoami(_ call: Call) throws -> Reply<Whoami> {
        let caller = try adminCaller(call)
        return Reply(
            Whoami(
                name: caller.name, role: caller.role.rawValue, sets: caller.sets.map { $0.sorted() },
                session: caller.isSession, expiresAt: caller.expiresAt))
    }

    /// `POST /v1/admin/sessions`: a session token of the caller's role and sets, for the dashboard, so that the
    /// person's own token is never kept in a browser.
    func startSession(_ call: Call, _ request: ChangeRequest) throws -> Reply<SessionAnswer> {
        let caller = try adminCaller(call)
        let (token, record) = try tokens.startSession(
            for: caller, note: ChangeNote(actor: caller.name, action: "session.start", reason: request.reason))
        let answer = SessionAnswer(
            token: token, name: record.name, actor: caller.name, role: caller.role.rawValue,
            sets: caller.sets.map { $0.sorted() }, expiresAt: record.expiresAt)
        return Reply(answer, status: 201)
    }

    /// `DELETE /v1/admin/sessions/current`: signs the calling session out.
    func endSession(_ call: Call, _ request: ChangeRequest) throws -> Reply<SessionEnded> {
        let caller = try adminCaller(call)
        guard caller.isSession else {
            throw ServiceError.badRequest(
                "this is not a session token; revoke a named token with DELETE /v1/admin/tokens/{name}")
        }
        try tokens.revoke(
            name: caller.token, set: nil,
            note: ChangeNote(actor: caller.name, action: "session.end", reason: request.reason))
        return Reply(SessionEnded())
    }

    /// `GET /v1/admin/tokens`: the tokens of the admin API, sessions included, revoked ones too.
    func listTokens(_ call: Call) throws -> Reply<TokenList> {
        let all = try tokens.tokens(set: nil).compactMap { token -> TokenInfo? in
            guard case .admin(let role, let sets) = token.role else { return nil }
            return TokenInfo(token, role: role, sets: sets)
        }
        return Reply(TokenList(tokens: all))
    }

    /// `POST /v1/admin/tokens`: `{"name","role","sets"?,"expires"?|"expiresAt"?}`; the token is in this answer only.
    func createToken(_ call: Call, _ request: CreateTokenRequest) throws -> Reply<CreatedToken> {
        let name = request.name
        guard !name.isEmpty else { throw ServiceError.badRequest("\"name\" is required", path: "name") }
        guard let role = AdminRole(rawValue: request.role) else {
            let known = AdminRole.allCases.map(\.rawValue).joined(separator: ", ")
            throw ServiceError.badRequest("unknown role \"\(request.role)\" (one of \(known))", path: "role")
        }
        var expiresAt = request.expiresAt
        if let expires = request.expires {
            guard expiresAt == nil else {
                throw ServiceError.badRequest("give \"expires\" or \"expiresAt\", not both", path: "expires")
            }
            let seconds: Int
            do {
                seconds = try DurationText.parse(expires)
            } catch {
                throw ServiceError.badRequest("\"expires\": \(error.message)", path: "expires")
            }
            expiresAt = clock.wholeSecond().addingTimeInterval(Double(seconds))
        }
        let sets = request.sets.map { Array(Set($0)).sorted() }
        let (token, record) = try tokens.issue(
            name: name, role: .admin(role, sets: sets), expiresAt: expiresAt,
            note: ChangeNote(actor: call.actor, action: "token.create", subject: name, reason: request.reason))
        return Reply(CreatedToken(info: TokenInfo(record, role: role, sets: sets), token: token), status: 201)
    }

    /// `DELETE /v1/admin/tokens/{name}`: revoked at once, with the sessions made from it.
    func revokeToken(_ call: Call, _ request: ChangeRequest) throws -> Reply<RevokedToken> {
        let name = call.name
        guard try tokens.tokens(set: nil).contains(where: { $0.name == name && !$0.role.isSDKKey }) else {
            throw ServiceError.notFound(
                "no token \"\(name)\"; SDK keys are revoked under their set's /keys", subject: .token)
        }
        try tokens.revoke(
            name: name, set: nil,
            note: ChangeNote(actor: call.actor, action: "token.revoke", subject: name, reason: request.reason))
        return Reply(RevokedToken(name: name))
    }
}

extension TokenInfo {
    /// A token of the admin API, of `role` and `sets`, as the tokens routes answer it (never its secret, which is not
    /// stored).
    init(_ token: StoredToken, role: AdminRole, sets: [String]?) {
        self.init(
            name: token.name, role: role.rawValue, sets: sets, createdAt: token.createdAt, expiresAt: token.expiresAt,
            lastUsedAt: token.lastUsedAt, revokedAt: token.revokedAt, sessionOf: token.sessionOf)
    }
}

extension TokenRole {
    /// Whether the role is an SDK key's.
    var isSDKKey: Bool {
        if case .sdk = self { return true }
        return false
    }
}
