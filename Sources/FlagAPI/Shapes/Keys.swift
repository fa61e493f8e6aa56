import Foundation

/// `GET …/keys`: the set's SDK keys, revoked ones included (never the keys themselves).
public struct KeyList: APIAnswer, Codable, Hashable {
    /// The keys.
    public var keys: [KeyInfo]

    /// A list of `keys`.
    public init(keys: [KeyInfo]) {
        self.keys = keys
    }
}

/// An SDK key as stored.
public struct KeyInfo: Sendable, Codable, Hashable {
    /// Its unique name.
    public var name: String
    /// The set it reads.
    public var set: String
    /// When it was made.
    public var createdAt: Date
    /// When it was revoked.
    public var revokedAt: Date?

    /// A key's record.
    public init(name: String, set: String, createdAt: Date, revokedAt: Date?) {
        self.name = name
        self.set = set
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// `POST …/keys`: a new SDK key for the set.
public struct CreateKeyRequest: APIRequest, Hashable {
    /// A name unique on the server.
    public var name: String
    /// Why, for the audit log.
    public var reason: String?

    /// A request for a key.
    public init(name: String, reason: String? = nil) {
        self.name = name
        self.reason = reason
    }

    /// The reason; the name is a key (`^[a-z0-9][a-z0-9._-]{0,127}$`), checked when the key is issued.
    public var writtenText: [WrittenText] { [WrittenText("reason", reason)] }
}

/// The new SDK key: in this answer only.
public struct CreatedKey: APIAnswer, Codable, Hashable {
    /// Its name.
    public var name: String
    /// The set it reads.
    public var set: String
    /// The key itself.
    public var token: String
    /// When it was made.
    public var createdAt: Date

    /// A created key.
    public init(name: String, set: String, token: String, createdAt: Date) {
        self.name = name
        self.set = set
        self.token = token
        self.createdAt = createdAt
    }
}

/// `DELETE …/keys/{name}`: revoked from its next request on.
public struct RevokedKey: APIAnswer, Codable, Hashable {
    /// The key's name.
    public var name: String
    /// The set it read.
    public var set: String
    /// Always `true`.
    public var revoked: Bool

    /// The answer for `name`.
    public init(name: String, set: String, revoked: Bool = true) {
        self.name = name
        self.set = set
        self.revoked = revoked
    }
}
