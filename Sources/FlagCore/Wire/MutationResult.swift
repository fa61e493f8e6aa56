/// What every mutating admin route answers (docs/admin-api.md, "The mutation response"): the set, the version it
/// is at after the write, whether the write made that version, and for flag and cohort routes the item after it.
///
/// ```json
/// {"set":"ios-prod","version":43,"changed":true,"key":"new-checkout","flag":{…the flag after…}}
/// ```
public struct MutationResult: Sendable, Hashable {
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

    /// A mutation result.
    public init(set: String, version: Int, changed: Bool, item: Item? = nil, warnings: [String] = []) {
        self.set = set
        self.version = version
        self.changed = changed
        self.item = item
        self.warnings = warnings
    }

    private static let fields = WireFields(format: "mutation response")

    /// The compact JSON of the answer.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 128 + (item?.json.count ?? 0))
        write(to: &writer)
        return writer.bytes
    }

    /// Writes the answer's object: `set`, `version`, `changed`, then `key`/`flag` or `name`/`cohort`; with `closing`
    /// false the object is left open for a route's own members.
    public func write(to writer: inout JSONWriter, closing: Bool = true) {
        writer.beginObject()
        writer.key("set")
        writer.string(set)
        writer.key("version")
        writer.int(version)
        writer.key("changed")
        writer.bool(changed)
        switch item {
        case .flag(let key, let json)?:
            writer.key("key")
            writer.string(key)
            writer.key("flag")
            writer.raw(json)
        case .cohort(let name, let json)?:
            writer.key("name")
            writer.string(name)
            writer.key("cohort")
            writer.raw(json)
        case nil: break
        }
        if !warnings.isEmpty {
            writer.key("warnings")
            writer.beginArray()
            for warning in warnings { writer.string(warning) }
            writer.endArray()
        }
        if closing { writer.endObject() }
    }

    /// Reads an answer: unknown members are ignored; `set`, `version` and `changed` are required, and a `key`
    /// comes with its `flag` (a `name` with its `cohort`).
    /// - Throws: `WireFormatError` naming the first bad member.
    public static func decode(_ bytes: [UInt8]) throws(WireFormatError) -> MutationResult {
        let fields = Self.fields
        var set: String?
        var version: Int?
        var changed: Bool?
        var key: String?
        var flag: [UInt8]?
        var name: String?
        var cohort: [UInt8]?
        var warnings: [String] = []
        try fields.read(bytes) { reader in
            try reader.readObject { reader, field in
                switch field {
                case "set": set = try fields.string(&reader, field)
                case "version": version = try fields.int(&reader, field)
                case "changed": changed = try fields.bool(&reader, field)
                case "key": key = try fields.string(&reader, field)
                case "flag": flag = try fields.rawObject(&reader, field)
                case "name": name = try fields.string(&reader, field)
                case "cohort": cohort = try fields.rawObject(&reader, field)
                case "warnings": warnings = try fields.strings(&reader, field)
                default: try reader.skipValue()
                }
            }
        }
        guard let set else { throw fields.error("set", "is missing; it names the set written to") }
        guard let version else { throw fields.error("version", "is missing; it is the set's version after the write") }
        guard let changed else {
            throw fields.error("changed", "is missing; it tells whether the write made a version")
        }
        let item: Item?
        switch (key, flag, name, cohort) {
        case (nil, nil, nil, nil): item = nil
        case (let key?, let flag?, nil, nil): item = .flag(key: key, json: flag)
        case (nil, nil, let name?, let cohort?): item = .cohort(name: name, json: cohort)
        case (_?, nil, _, _): throw fields.error("flag", "is missing; it comes with \"key\"")
        case (nil, _?, _, _): throw fields.error("key", "is missing; it comes with \"flag\"")
        case (_, _, _?, nil): throw fields.error("cohort", "is missing; it comes with \"name\"")
        case (_, _, nil, _?): throw fields.error("name", "is missing; it comes with \"cohort\"")
        default: throw fields.error("cohort", "cannot come with a \"flag\": an answer carries one item")
        }
        return MutationResult(set: set, version: version, changed: changed, item: item, warnings: warnings)
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
