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
            writer.strings(values)
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
        writer.strings(operators.sorted(by: utf8Less))
        writer.endObject()
    }
}
