import FlagCore

/// What every mutating admin route answers (docs/admin-api.md, "The mutation response"): the set, the version it
/// is at after the write, whether the write made that version, and for flag and cohort routes the item after it.
///
/// ```json
/// {"changed":true,"flag":{…the flag after…},"key":"new-checkout","set":"ios-prod","version":43}
/// ```
public struct MutationResult: APIAnswer, Codable, Hashable {
    /// The item a flag or cohort route wrote, as its canonical JSON object.
    public enum Item: Sendable, Hashable {
        /// `"key"` and `"flag"`.
        case flag(key: String, json: [UInt8])
        /// `"name"` and `"cohort"`.
        case cohort(name: String, json: [UInt8])
    }

    /// The set written to.
    public var set: String
    /// Its version after the write.
    public var version: Int
    /// Whether the write made `version`; `false` when it changed no byte of any item.
    public var changed: Bool
    /// The flag or cohort after the write; `nil` for deletes, rollbacks, imports and set creation.
    public var item: Item?
    /// What the server warns of although it wrote (the compatibility gate set to `warn`); absent when empty.
    public var warnings: [String]
    /// The change request the write became instead of a version (`?propose=`); `changed` is then `false`.
    public var changeRequest: Int?

    /// A mutation result.
    public init(
        set: String, version: Int, changed: Bool, item: Item? = nil, warnings: [String] = [], changeRequest: Int? = nil
    ) {
        self.set = set
        self.version = version
        self.changed = changed
        self.item = item
        self.warnings = warnings
        self.changeRequest = changeRequest
    }

    enum CodingKeys: String, CodingKey {
        case set, version, changed, key, flag, name, cohort, warnings, changeRequest
    }

    /// Writes `set`, `version`, `changed`, then `key`/`flag` or `name`/`cohort`, `warnings` when there are any, and
    /// `changeRequest` when the write became one.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(set, forKey: .set)
        try container.encode(version, forKey: .version)
        try container.encode(changed, forKey: .changed)
        switch item {
        case .flag(let key, let json)?:
            try container.encode(key, forKey: .key)
            try container.encode(RawJSON(bytes: json), forKey: .flag)
        case .cohort(let name, let json)?:
            try container.encode(name, forKey: .name)
            try container.encode(RawJSON(bytes: json), forKey: .cohort)
        case nil: break
        }
        if !warnings.isEmpty { try container.encode(warnings, forKey: .warnings) }
        try container.encodeIfPresent(changeRequest, forKey: .changeRequest)
    }

    /// Reads an answer: unknown members are ignored; `set`, `version` and `changed` are required, and a `key`
    /// comes with its `flag` (a `name` with its `cohort`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func missing(_ key: CodingKeys, _ why: String) -> DecodingError {
            .keyNotFound(key, .init(codingPath: container.codingPath, debugDescription: "is missing; \(why)"))
        }
        func object(_ key: CodingKeys) throws -> [UInt8]? {
            guard let raw = try container.decodeIfPresent(RawJSON.self, forKey: key) else { return nil }
            guard raw.isObject else {
                throw DecodingError.typeMismatch(
                    RawJSON.self, .init(codingPath: container.codingPath + [key], debugDescription: "must be an object")
                )
            }
            return raw.bytes
        }
        guard let set = try container.decodeIfPresent(String.self, forKey: .set) else {
            throw missing(.set, "it names the set written to")
        }
        guard let version = try container.decodeIfPresent(Int.self, forKey: .version) else {
            throw missing(.version, "it is the set's version after the write")
        }
        guard let changed = try container.decodeIfPresent(Bool.self, forKey: .changed) else {
            throw missing(.changed, "it tells whether the write made a version")
        }
        let key = try container.decodeIfPresent(String.self, forKey: .key)
        let flag = try object(.flag)
        let name = try container.decodeIfPresent(String.self, forKey: .name)
        let cohort = try object(.cohort)
        switch (key, flag, name, cohort) {
        case (nil, nil, nil, nil): item = nil
        case (let key?, let flag?, nil, nil): item = .flag(key: key, json: flag)
        case (nil, nil, let name?, let cohort?): item = .cohort(name: name, json: cohort)
        case (_?, nil, _, _): throw missing(.flag, "it comes with \"key\"")
        case (nil, _?, _, _): throw missing(.key, "it comes with \"flag\"")
        case (_, _, _?, nil): throw missing(.cohort, "it comes with \"name\"")
        case (_, _, nil, _?): throw missing(.name, "it comes with \"cohort\"")
        default:
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: container.codingPath + [CodingKeys.cohort],
                    debugDescription: "cannot come with a \"flag\": an answer carries one item"))
        }
        self.set = set
        self.version = version
        self.changed = changed
        warnings = try container.decodeIfPresent([String].self, forKey: .warnings) ?? []
        changeRequest = try container.decodeIfPresent(Int.self, forKey: .changeRequest)
    }

    /// Reads an answer; messages name it `the mutation response`.
    /// - Throws: `WireFormatError` naming the first bad member.
    public static func decode(answer bytes: [UInt8]) throws(WireFormatError) -> MutationResult {
        try WireDecoder.decode(MutationResult.self, from: bytes, format: "mutation response")
    }
}

extension MutationResult.Item {
    /// The item's JSON object.
    public var json: [UInt8] {
        switch self {
        case .flag(_, let json), .cohort(_, let json): json
        }
    }
}

extension RawJSON {
    /// Whether the value is a JSON object.
    public var isObject: Bool {
        bytes.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) } == UInt8(ascii: "{")
    }
}
