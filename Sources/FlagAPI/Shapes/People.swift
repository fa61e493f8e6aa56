import Foundation

/// `GET /v1/admin/whoami`: who the token acts as.
public struct Whoami: APIAnswer, Codable, Hashable {
    /// The token's name (for a session: the person's).
    public var name: String
    /// `viewer`, `editor` or `admin`.
    public var role: String
    /// The sets it is limited to; `null` for every set.
    @ExplicitNull public var sets: [String]?
    /// Whether the token is a dashboard session.
    public var session: Bool
    /// When it stops working; absent when it does not expire.
    public var expiresAt: Date?

    /// A caller.
    public init(name: String, role: String, sets: [String]?, session: Bool, expiresAt: Date?) {
        self.name = name
        self.role = role
        self.sets = sets
        self.session = session
        self.expiresAt = expiresAt
    }
}

/// `POST /v1/admin/sessions`: a dashboard session of the caller's role and sets.
public struct SessionAnswer: APIAnswer, Codable, Hashable {
    /// The session token, in this answer only.
    public var token: String
    /// The session's own name.
    public var name: String
    /// The person it acts as.
    public var actor: String
    /// Its role.
    public var role: String
    /// Its sets; `null` for every set.
    @ExplicitNull public var sets: [String]?
    /// When it ends.
    public var expiresAt: Date?

    /// A new session.
    public init(token: String, name: String, actor: String, role: String, sets: [String]?, expiresAt: Date?) {
        self.token = token
        self.name = name
        self.actor = actor
        self.role = role
        self.sets = sets
        self.expiresAt = expiresAt
    }
}

/// `DELETE /v1/admin/sessions/current`: the session is signed out.
public struct SessionEnded: APIAnswer, Codable, Hashable {
    /// Always `true`.
    public var revoked: Bool

    /// The answer.
    public init(revoked: Bool = true) {
        self.revoked = revoked
    }
}

/// `GET /v1/admin/tokens`: the tokens of the admin API, sessions and revoked ones included.
public struct TokenList: APIAnswer, Codable, Hashable {
    /// The tokens.
    public var tokens: [TokenInfo]

    /// A list of `tokens`.
    public init(tokens: [TokenInfo]) {
        self.tokens = tokens
    }
}

/// A token of the admin API as stored (never its secret).
public struct TokenInfo: Sendable, Codable, Hashable {
    /// Its unique name.
    public var name: String
    /// `viewer`, `editor` or `admin`.
    public var role: String
    /// The sets it is limited to; `null` for every set.
    @ExplicitNull public var sets: [String]?
    /// When it was made.
    public var createdAt: Date
    /// When it stops working, if it does.
    public var expiresAt: Date?
    /// When it was last used (recorded once a minute).
    public var lastUsedAt: Date?
    /// When it was revoked.
    public var revokedAt: Date?
    /// For a dashboard session: the token of the person it was made from.
    public var sessionOf: String?

    /// A token's record.
    public init(
        name: String, role: String, sets: [String]?, createdAt: Date, expiresAt: Date?, lastUsedAt: Date?,
        revokedAt: Date?, sessionOf: String?
    ) {
        self.name = name
        self.role = role
        self.sets = sets
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
        self.sessionOf = sessionOf
    }
}

/// `POST /v1/admin/tokens`: a named token for a person or an automation.
public struct CreateTokenRequest: APIRequest, Hashable {
    /// A name unique on the server.
    public var name: String
    /// `viewer`, `editor` or `admin`.
    public var role: String
    /// The only sets it may act on; absent for every set.
    public var sets: [String]?
    /// How long it works, e.g. `90d`.
    public var expires: String?
    /// Until when it works (instead of `expires`).
    public var expiresAt: Date?
    /// Why, for the audit log.
    public var reason: String?

    /// A request for a token.
    public init(
        name: String, role: String, sets: [String]? = nil, expires: String? = nil, expiresAt: Date? = nil,
        reason: String? = nil
    ) {
        self.name = name
        self.role = role
        self.sets = sets
        self.expires = expires
        self.expiresAt = expiresAt
        self.reason = reason
    }

    /// The reason; the name and the sets are keys (`^[a-z0-9][a-z0-9._-]{0,127}$`), checked when it is issued.
    public var writtenText: [WrittenText] { [WrittenText("reason", reason)] }
}

/// The new token's record and, in this answer only, the token.
public struct CreatedToken: APIAnswer, Codable, Hashable {
    /// Its record.
    public var info: TokenInfo
    /// The token itself: shown once, stored nowhere but as a hash.
    public var token: String

    /// A created token.
    public init(info: TokenInfo, token: String) {
        self.info = info
        self.token = token
    }

    private enum CodingKeys: String, CodingKey {
        case token
    }

    /// The record's members and `token`, in one object.
    public init(from decoder: any Decoder) throws {
        info = try TokenInfo(from: decoder)
        token = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .token)
    }

    /// The record's members and `token`, in one object.
    public func encode(to encoder: any Encoder) throws {
        try info.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(token, forKey: .token)
    }
}

/// `DELETE /v1/admin/tokens/{name}`: revoked, with its sessions.
public struct RevokedToken: APIAnswer, Codable, Hashable {
    /// The token's name.
    public var name: String
    /// Always `true`.
    public var revoked: Bool

    /// The answer for `name`.
    public init(name: String, revoked: Bool = true) {
        self.name = name
        self.revoked = revoked
    }
}
