/// The data of a stream's `patch` event (SPEC §4): what one version changed over the version before it.
///
/// ```json
/// {"version":43,"base":42,"flags":{"new-checkout":{…}},"cohorts":{},"removed":{"flags":[],"cohorts":["qa"]}}
/// ```
///
/// The changed items travel as their canonical bytes (`Flag.encoded()`, `Cohort.encoded()`): the server builds a
/// patch from the bytes it stores, so its cost is the change's and not the set's, and a client reads the items
/// with `changes()`.
public struct SetPatch: Sendable, Hashable {
    /// The version the patch makes.
    public var version: Int
    /// The version it applies to; a client at another version fetches the whole document instead.
    public var base: Int
    /// The flags added or changed, by key: each one's JSON object.
    public var flags: [String: [UInt8]]
    /// The cohorts added or changed, by name: each one's JSON object.
    public var cohorts: [String: [UInt8]]
    /// The keys of the flags removed.
    public var removedFlags: Set<String>
    /// The names of the cohorts removed.
    public var removedCohorts: Set<String>

    /// A patch from `base` to `version`.
    public init(
        version: Int, base: Int, flags: [String: [UInt8]] = [:], cohorts: [String: [UInt8]] = [:],
        removedFlags: Set<String> = [], removedCohorts: Set<String> = []
    ) {
        self.version = version
        self.base = base
        self.flags = flags
        self.cohorts = cohorts
        self.removedFlags = removedFlags
        self.removedCohorts = removedCohorts
    }

    private static let fields = WireFields(format: "patch")

    // MARK: - Encoding

    /// The patch's JSON: members in the order above, items and removed names sorted by their UTF-8 bytes, every
    /// member written even when empty. The same patch always gives the same bytes.
    public func encoded() -> [UInt8] {
        var size = 128 + 40 * (removedFlags.count + removedCohorts.count)
        for bytes in flags.values { size += bytes.count + 40 }
        for bytes in cohorts.values { size += bytes.count + 40 }
        var writer = JSONWriter(reservingCapacity: size)
        // Nested functions rather than a loop over a literal array of the members, whose boxes showed in the
        // profile of a one-flag patch (built once per version, on the write path).
        func names(_ field: String, _ names: Set<String>) {
            writer.key(field)
            writer.strings(names.sorted(by: utf8Less))
        }
        writer.beginObject()
        writer.key("version")
        writer.int(version)
        writer.key("base")
        writer.int(base)
        writer.rawMembers("flags", flags)
        writer.rawMembers("cohorts", cohorts)
        writer.key("removed")
        writer.beginObject()
        names("flags", removedFlags)
        names("cohorts", removedCohorts)
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }

    // MARK: - Decoding

    /// Reads a patch: unknown members are ignored; `version` and `base` are required, versions only grow, and
    /// every member present must have its shape (an item is an object, a removed name a string).
    ///
    /// The items are kept as their bytes, checked to be well-formed JSON objects; `changes()` reads them.
    /// - Throws: `WireFormatError` naming the first bad member.
    public static func decode(_ bytes: [UInt8]) throws(WireFormatError) -> SetPatch {
        let fields = Self.fields
        var version: Int?
        var base: Int?
        var patch = SetPatch(version: 0, base: 0)
        try fields.read(bytes) { reader in
            try reader.readObject { reader, field in
                switch field {
                case "version": version = try fields.int(&reader, "version")
                case "base": base = try fields.int(&reader, "base")
                case "flags": patch.flags = try fields.rawObjects(&reader, "flags")
                case "cohorts": patch.cohorts = try fields.rawObjects(&reader, "cohorts")
                case "removed":
                    try fields.expect(&reader, .object, "an object", "removed")
                    try reader.readObject { reader, field in
                        switch field {
                        case "flags": patch.removedFlags = Set(try fields.strings(&reader, "removed.flags"))
                        case "cohorts": patch.removedCohorts = Set(try fields.strings(&reader, "removed.cohorts"))
                        default: try reader.skipValue()
                        }
                    }
                default: try reader.skipValue()
                }
            }
        }
        guard let version else { throw fields.error("version", "is missing; a patch names the version it makes") }
        guard let base else { throw fields.error("base", "is missing; a patch names the version it applies to") }
        guard version >= 1 else { throw fields.error("version", "must be 1 or more, found \(version)") }
        // Versions only grow: a patch that would take a set back to (or keep it at) its base is damaged.
        guard version > base else {
            throw fields.error("version", "must be above \"base\" (\(base)), found \(version)")
        }
        patch.version = version
        patch.base = base
        return patch
    }

    /// The changed flags and cohorts, read as a document's are (SPEC §3): leniently, an item of the wrong shape
    /// listed in `unreadableFlags` / `unreadableCohorts` with its problems (paths as in a document,
    /// `flags.KEY.rules[0]`), so that only it falls back. The set has no name and this patch's version.
    public func changes() -> FlagSet {
        var set = FlagSet(name: "", version: version)
        for (name, bytes) in cohorts { set.readCohort(name, from: bytes) }
        for (key, bytes) in flags { set.readFlag(key, from: bytes) }
        return set
    }
}
