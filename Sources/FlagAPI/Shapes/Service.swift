import FlagCore

/// `GET /healthz`: whether the server serves flags, and whether its store answers.
public struct Health: APIAnswer, Codable, Hashable {
    /// `ok`, or `degraded` while the store cannot be reached (reads go on from memory).
    public var status: String
    /// Why it is degraded.
    public var reason: String?
    /// How many sets it serves.
    public var sets: Int

    /// A health answer.
    public init(status: String, reason: String? = nil, sets: Int) {
        self.status = status
        self.reason = reason
        self.sets = sets
    }
}

/// `GET /ui/endpoints.json`: the admin API's endpoints as the dashboard builds its paths and permissions from them.
public struct EndpointTable: APIAnswer, Codable, Hashable {
    /// Every endpoint of `API.all`, by its name.
    public var endpoints: [String: EndpointEntry]

    /// The table of `endpoints`.
    public init(_ endpoints: [EndpointInfo]) {
        var entries: [String: EndpointEntry] = [:]
        for endpoint in endpoints { entries[endpoint.name] = EndpointEntry(endpoint) }
        self.endpoints = entries
    }

    /// The table's canonical JSON, written without the encoder: a table of strings and booleans cannot fail to
    /// write, so that the server serves it without a failure path.
    public func encodedAnswer() -> [UInt8] {
        var members: [String: JSONValue] = [:]
        for (name, entry) in endpoints {
            var entryMembers: [String: JSONValue] = [
                "method": .string(entry.method), "template": .string(entry.template),
                "wholeServer": .bool(entry.wholeServer), "confirmsPerson": .bool(entry.confirmsPerson),
                "writesSet": .bool(entry.writesSet),
            ]
            if let role = entry.role { entryMembers["role"] = .string(role) }
            members[name] = .object(entryMembers)
        }
        return JSONValue.object(["endpoints": .object(members)]).canonicalBytes
    }
}

/// One endpoint in the dashboard's table.
public struct EndpointEntry: Sendable, Codable, Hashable {
    /// `GET`, `POST`, `PUT` or `DELETE`.
    public var method: String
    /// The path template, e.g. `/v1/admin/sets/{set}/flags/{key}/kill`.
    public var template: String
    /// The least role of a token of the admin API that may call it; absent for the routes of clients and anyone.
    public var role: String?
    /// Whether a token limited to sets may not call it: it concerns the whole server.
    public var wholeServer: Bool
    /// Whether a dashboard session must send its person's own token as well.
    public var confirmsPerson: Bool
    /// Whether it writes a version of a set, which may then be proposed (`API.setWrites`).
    public var writesSet: Bool

    /// The entry of `endpoint`.
    public init(_ endpoint: EndpointInfo) {
        method = endpoint.method.rawValue
        template = endpoint.template
        role = endpoint.access.role?.rawValue
        if case .unlimited = endpoint.access { wholeServer = true } else { wholeServer = false }
        confirmsPerson = endpoint.confirmsPerson
        writesSet = API.setWrites.contains(endpoint.name)
    }
}
