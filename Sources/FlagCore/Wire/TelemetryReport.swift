import Foundation

/// What a client reports about itself (`POST /v1/sets/{set}/telemetry`): who it is, what it can evaluate, which
/// version it applied, and how often it evaluated each flag since its last report. Never a unit id, an attribute or
/// a served value.
///
/// ```json
/// {"instance":"in_4f…","sdk":{"name":"FlagClient","version":"2.0.0"},"app":{"name":"Shop","version":"5.3.0"},
///  "version":41,"appliedAt":"2026-12-02T10:00:00Z","capabilities":{"schema":1,"operators":["eq","in",…]},
///  "enums":{"checkout-theme":{"values":["blue","green"],"default":"blue"}},
///  "counts":{"new-checkout":{"on":{"TARGETING_MATCH":12},"":{"ERROR":1}}}}
/// ```
///
/// A shipped SDK key is public, so the server reads a report as untrusted input: `decode` bounds every part of it
/// (`TelemetryReport.Limits`) and names the first member that is wrong.
public struct TelemetryReport: Sendable, Hashable {
    /// A program's name and version: the SDK's, or the app's.
    public struct Software: Sendable, Hashable {
        /// Its name, e.g. `FlagClient`.
        public var name: String
        /// Its version, e.g. `2.0.0`.
        public var version: String

        /// A name and a version.
        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }

        /// Writes `{"name","version"}`, as a report carries it and the admin API answers it.
        public func write(to writer: inout JSONWriter) {
            writer.beginObject()
            writer.key("name")
            writer.string(name)
            writer.key("version")
            writer.string(version)
            writer.endObject()
        }
    }

    /// What an app knows of a `string` flag it reads as an enum: the raw values of the enum's cases, and the
    /// compiled-in default it serves in place of any other value.
    public struct KnownValues: Sendable, Hashable {
        /// The raw values, in the order the enum declares its cases.
        public var values: [String]
        /// The raw value of the default compiled into the app; `nil` when the client does not say.
        public var defaultValue: String?

        /// Known values.
        public init(values: [String], defaultValue: String? = nil) {
            self.values = values
            self.defaultValue = defaultValue
        }

        /// Writes `{"values":[…],"default"}`, as a report carries it and the admin API answers it.
        public func write(to writer: inout JSONWriter) {
            writer.beginObject()
            writer.key("values")
            writer.beginArray()
            for value in values { writer.string(value) }
            writer.endArray()
            if let defaultValue {
                writer.key("default")
                writer.string(defaultValue)
            }
            writer.endObject()
        }
    }

    /// Evaluations since the last report: flag key → variant (`""` where there is none) → reason → count.
    public typealias Counts = [String: [String: [String: Int]]]

    /// The instance id the server issued to this client's connection.
    public var instance: String
    /// The SDK.
    public var sdk: Software
    /// The app embedding it, when known.
    public var app: Software?
    /// The set version the client has applied; `nil` before its first.
    public var version: Int?
    /// When it applied that version, on the device's clock (the server judges propagation on its own clock).
    public var appliedAt: Date?
    /// What the client can evaluate.
    public var capabilities: ClientCapabilities
    /// The flags the app reads as enums, by key, with the values it knows of each: the compatibility gate refuses
    /// to make a flag serve a value that too many active instances do not know.
    public var enums: [String: KnownValues]
    /// Evaluations since the last report.
    public var counts: Counts

    /// A report.
    public init(
        instance: String, sdk: Software, app: Software? = nil, version: Int? = nil, appliedAt: Date? = nil,
        capabilities: ClientCapabilities = .current, enums: [String: KnownValues] = [:], counts: Counts = [:]
    ) {
        self.instance = instance
        self.sdk = sdk
        self.app = app
        self.version = version
        self.appliedAt = appliedAt
        self.capabilities = capabilities
        self.enums = enums
        self.counts = counts
    }

    /// How large a report may be; each bound is named in the error that refuses a report over it.
    public struct Limits: Sendable, Hashable {
        /// The body's bytes.
        public var maxBytes = 256 * 1024
        /// Flags in `counts`.
        public var maxFlags = 2_000
        /// Variants of one flag in `counts`.
        public var maxVariants = 64
        /// Reasons under one variant.
        public var maxReasons = 16
        /// Operators in `capabilities`.
        public var maxOperators = 256
        /// Flags in `enums`.
        public var maxEnumFlags = 200
        /// Values of one flag in `enums`: as many as an enum flag may list.
        public var maxEnumValues = Flag.maxValues
        /// Characters of one value (or default) in `enums`: as many as an enum flag's value may have.
        public var maxEnumValueLength = Flag.maxValueLength
        /// UTF-8 bytes of any one name, id or version string.
        public var maxStringBytes = 256
        /// One count (a client reports at least once a minute; this is far above any real minute).
        public var maxCount = 1_000_000_000_000

        /// The defaults above.
        public init() {}
    }

    private static let fields = WireFields(format: "telemetry report")

    // MARK: - Encoding

    /// The report's JSON, members in the order above and names sorted, so that the same report gives the same bytes.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 256 + 64 * counts.count)
        writer.beginObject()
        writer.key("instance")
        writer.string(instance)
        writer.key("sdk")
        sdk.write(to: &writer)
        if let app {
            writer.key("app")
            app.write(to: &writer)
        }
        if let version {
            writer.key("version")
            writer.int(version)
        }
        if let appliedAt {
            writer.key("appliedAt")
            writer.string(ISO8601.format(appliedAt))
        }
        writer.key("capabilities")
        capabilities.write(to: &writer)
        // Left out when empty, so that a report of an app without enum keys reads as it did before them.
        if !enums.isEmpty {
            writer.key("enums")
            writer.beginObject()
            for (flag, known) in enums.sorted(by: { utf8Less($0.key, $1.key) }) {
                writer.key(flag)
                known.write(to: &writer)
            }
            writer.endObject()
        }
        writer.key("counts")
        writer.beginObject()
        for (flag, variants) in counts.sorted(by: { utf8Less($0.key, $1.key) }) {
            writer.key(flag)
            writer.beginObject()
            for (variant, reasons) in variants.sorted(by: { utf8Less($0.key, $1.key) }) {
                writer.key(variant)
                writer.beginObject()
                for (reason, count) in reasons.sorted(by: { utf8Less($0.key, $1.key) }) {
                    writer.key(reason)
                    writer.int(count)
                }
                writer.endObject()
            }
            writer.endObject()
        }
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }

    // MARK: - Decoding

    /// Reads a report strictly: `instance`, `sdk` and `capabilities` (with `schema` and `operators`) are required,
    /// every member present must have its shape, a name given twice in one object is refused, a string or a member
    /// name with a control character (C0, DEL, C1) is refused, a value listed twice in `enums` is refused, and every
    /// part is bounded by `limits`. Unknown
    /// members are ignored (a newer SDK may send more). `appliedAt` is floored to the whole second, as `encoded()`
    /// writes it.
    /// - Throws: `WireFormatError` naming the first bad member, or the limit a report is over.
    public static func decode(_ bytes: [UInt8], limits: Limits = Limits()) throws(WireFormatError) -> TelemetryReport {
        let fields = Self.fields
        guard bytes.count <= limits.maxBytes else {
            throw fields.error(nil, "is \(bytes.count) bytes, over the limit of \(limits.maxBytes)")
        }
        // What a report names reaches people (`flagctl clients` and `usage`, the dashboard), and a shipped SDK key
        // is public: a control character, such as an ESC that rewrites an admin's terminal, is refused where it
        // enters. `what` leads the message: "contains", or "has a name with" for a member name.
        func printable(_ value: String, _ field: String?, _ what: String) throws {
            guard let (character, position) = value.firstControlCharacter else { return }
            throw fields.error(
                field,
                "\(what) the control character \(character.codePointNotation) at position \(position); send printable text"
            )
        }
        // Reads the members of the object at `field` (`nil`: the report itself). A name with a control character is
        // refused, even an unknown member's. A name given twice is refused: readers that keep the first and readers
        // that keep the last would see different reports, and a second `counts` would slip past `maxFlags`. Bad
        // JSON inside a member (nesting past the reader's depth limit, a number out of range) is reported at that
        // member.
        func object(
            _ reader: inout JSONReader, _ field: String?, _ body: (inout JSONReader, String, String) throws -> Void
        ) throws {
            var seen: Set<String> = []
            try reader.readObject { reader, name in
                try printable(name, field, "has a name with")
                let path = field.map { "\($0).\(name)" } ?? name
                guard seen.insert(name).inserted else { throw fields.error(path, "is given twice") }
                do {
                    try body(&reader, name, path)
                } catch let error as JSONError {
                    throw fields.error(path, "is not valid JSON: \(error)")
                }
            }
        }
        func text(_ reader: inout JSONReader, _ field: String) throws -> String {
            let value = try fields.string(&reader, field)
            guard !value.isEmpty, value.utf8.count <= limits.maxStringBytes else {
                throw fields.error(field, "must have 1 to \(limits.maxStringBytes) bytes, found \(value.utf8.count)")
            }
            try printable(value, field, "contains")
            return value
        }
        // An integer in `range`, which `bound` names; a fraction, an exponent or a number past Int64 is refused
        // with the same bound.
        func integer(_ reader: inout JSONReader, _ field: String, _ range: ClosedRange<Int>, _ bound: String) throws
            -> Int
        {
            try fields.expect(&reader, .number, "an integer, \(bound)", field)
            let number: JSONValue
            do {
                number = try reader.readNumber()
            } catch let error as JSONError {
                throw fields.error(field, "must be an integer, \(bound): \(error.message)")
            }
            switch number {
            case .int(let value):
                guard let int = Int(exactly: value), range.contains(int) else {
                    throw fields.error(field, "must be \(bound), found \(value)")
                }
                return int
            case .double(let value): throw fields.error(field, "must be an integer, \(bound), found \(value)")
            default: throw fields.error(field, "must be an integer, \(bound)")
            }
        }
        func software(_ reader: inout JSONReader, _ field: String) throws -> Software {
            try fields.expect(&reader, .object, "an object with \"name\" and \"version\"", field)
            var name: String?
            var version: String?
            try object(&reader, field) { reader, member, path in
                switch member {
                case "name": name = try text(&reader, path)
                case "version": version = try text(&reader, path)
                default: try reader.skipValue()
                }
            }
            guard let name else { throw fields.error("\(field).name", "is missing") }
            guard let version else { throw fields.error("\(field).version", "is missing") }
            return Software(name: name, version: version)
        }
        func members(
            _ reader: inout JSONReader, _ field: String, limit: Int, what: String,
            _ body: (inout JSONReader, String, String) throws -> Void
        ) throws {
            try fields.expect(&reader, .object, "an object", field)
            var count = 0
            try object(&reader, field) { reader, name, path in
                count += 1
                guard count <= limit else { throw fields.error(field, "has more than \(limit) \(what)") }
                guard name.utf8.count <= limits.maxStringBytes else {
                    throw fields.error(field, "has a name of \(name.utf8.count) bytes, over \(limits.maxStringBytes)")
                }
                try body(&reader, name, path)
            }
        }
        // A value of an enum flag, bounded as the flag's own values are: in characters.
        func enumValue(_ reader: inout JSONReader, _ field: String) throws -> String {
            let value = try fields.string(&reader, field)
            guard !value.isEmpty, value.count <= limits.maxEnumValueLength else {
                throw fields.error(
                    field, "must have 1 to \(limits.maxEnumValueLength) characters, found \(value.count)")
            }
            try printable(value, field, "contains")
            return value
        }
        func knownValues(_ reader: inout JSONReader, _ field: String) throws -> KnownValues {
            try fields.expect(&reader, .object, "an object with \"values\"", field)
            var values: [String]?
            var defaultValue: String?
            try object(&reader, field) { reader, member, path in
                switch member {
                case "values":
                    try fields.expect(&reader, .array, "an array of strings", path)
                    var listed: [String] = []
                    var seen: Set<String> = []
                    try reader.readArray { reader, index in
                        guard index < limits.maxEnumValues else {
                            throw fields.error(path, "has more than \(limits.maxEnumValues) values")
                        }
                        let value = try enumValue(&reader, "\(path)[\(index)]")
                        guard seen.insert(value).inserted else {
                            throw fields.error("\(path)[\(index)]", "is \"\(value)\" again; list each value once")
                        }
                        listed.append(value)
                    }
                    values = listed
                case "default": defaultValue = try enumValue(&reader, path)
                default: try reader.skipValue()
                }
            }
            guard let values else { throw fields.error("\(field).values", "is missing") }
            guard !values.isEmpty else { throw fields.error("\(field).values", "must list at least one value") }
            return KnownValues(values: values, defaultValue: defaultValue)
        }
        let countBound = "from 0 to \(limits.maxCount)"
        var instance: String?
        var sdk: Software?
        var capabilities: ClientCapabilities?
        var report = TelemetryReport(instance: "", sdk: Software(name: "", version: ""))
        try fields.read(bytes) { reader in
            try object(&reader, nil) { reader, field, _ in
                // `null` for an optional member is its absence, as the admin API writes it (`"app": null`).
                if ["app", "version", "appliedAt"].contains(field), try reader.readNull() { return }
                switch field {
                case "instance": instance = try text(&reader, "instance")
                case "sdk": sdk = try software(&reader, "sdk")
                case "app": report.app = try software(&reader, "app")
                case "version": report.version = try integer(&reader, "version", 1...Int.max, "1 or more")
                case "appliedAt":
                    let text = try fields.string(&reader, "appliedAt")
                    guard let date = ISO8601.parse(text) else {
                        throw fields.error("appliedAt", "must be an RFC 3339 time such as 2026-12-02T10:00:00Z")
                    }
                    report.appliedAt = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
                case "capabilities":
                    try fields.expect(&reader, .object, "an object with \"schema\" and \"operators\"", "capabilities")
                    var schema: Int?
                    var operators: Set<String>?
                    try object(&reader, "capabilities") { reader, member, path in
                        switch member {
                        case "schema": schema = try integer(&reader, path, 1...Int.max, "1 or more")
                        case "operators":
                            try fields.expect(&reader, .array, "an array of strings", path)
                            var names: Set<String> = []
                            try reader.readArray { reader, index in
                                guard index < limits.maxOperators else {
                                    throw fields.error(path, "has more than \(limits.maxOperators) operators")
                                }
                                names.insert(try text(&reader, "\(path)[\(index)]"))
                            }
                            operators = names
                        default: try reader.skipValue()
                        }
                    }
                    guard let schema else { throw fields.error("capabilities.schema", "is missing") }
                    // Read as "knows no operator", a missing list would refuse every rule for this client.
                    guard let operators else { throw fields.error("capabilities.operators", "is missing") }
                    capabilities = ClientCapabilities(schema: schema, operators: operators)
                case "enums":
                    try members(&reader, "enums", limit: limits.maxEnumFlags, what: "flags") { reader, flag, path in
                        guard !flag.isEmpty else { throw fields.error("enums", "has an empty flag key") }
                        report.enums[flag] = try knownValues(&reader, path)
                    }
                case "counts":
                    try members(&reader, "counts", limit: limits.maxFlags, what: "flags") { reader, flag, path in
                        guard !flag.isEmpty else { throw fields.error("counts", "has an empty flag key") }
                        var variants: [String: [String: Int]] = [:]
                        try members(&reader, path, limit: limits.maxVariants, what: "variants") {
                            reader, variant, path in
                            var reasons: [String: Int] = [:]
                            try members(&reader, path, limit: limits.maxReasons, what: "reasons") {
                                reader, reason, path in
                                reasons[reason] = try integer(&reader, path, 0...limits.maxCount, countBound)
                            }
                            variants[variant] = reasons
                        }
                        report.counts[flag] = variants
                    }
                default: try reader.skipValue()
                }
            }
        }
        guard let instance else { throw fields.error("instance", "is missing; send the id from the stream's answer") }
        guard let sdk else { throw fields.error("sdk", "is missing") }
        guard let capabilities else { throw fields.error("capabilities", "is missing") }
        report.instance = instance
        report.sdk = sdk
        report.capabilities = capabilities
        return report
    }
}

/// What a client can evaluate: the highest document schema it reads, and the condition operators it knows.
public struct ClientCapabilities: Sendable, Hashable {
    /// The highest document schema it reads.
    public var schema: Int
    /// The operators it can evaluate, by their wire names (`eq`, `semver_gte`, …).
    public var operators: Set<String>

    /// A client's capabilities.
    public init(schema: Int, operators: Set<String>) {
        self.schema = schema
        self.operators = operators
    }

    /// This build's: schema 1 and every operator it knows.
    public static let current = ClientCapabilities(
        schema: FlagSet.currentSchema, operators: Set(Operator.known.map(\.name)))

    /// What of `needs` these capabilities lack: the operators they do not know, and the schema if it is newer.
    public func lacking(_ needs: ClientCapabilities) -> ClientCapabilities {
        ClientCapabilities(
            schema: needs.schema > schema ? needs.schema : 0, operators: needs.operators.subtracting(operators))
    }

    /// Whether nothing is lacking (the result of `lacking`).
    public var isEmpty: Bool { schema == 0 && operators.isEmpty }

    /// Writes `{"schema","operators":[…]}`, operators sorted, as a report carries it and the admin API answers it.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("schema")
        writer.int(schema)
        writer.key("operators")
        writer.beginArray()
        for name in operators.sorted(by: utf8Less) { writer.string(name) }
        writer.endArray()
        writer.endObject()
    }
}
