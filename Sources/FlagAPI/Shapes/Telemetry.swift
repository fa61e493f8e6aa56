import Foundation

/// `GET …/clients?within=SECONDS`.
public struct ClientsQuery: APIRequest, Hashable {
    /// Instances that reported in the last this many seconds (default: the 10 minutes kept).
    public var within: Int?

    /// A query.
    public init(within: Int? = nil) {
        self.within = within
    }
}

/// The client instances that reported to a set, and this server's connections whose clients do not report.
public struct ClientsAnswer: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// The instances.
    public var instances: [ClientInstance]
    /// Connections whose client does not report.
    public var silent: Int

    /// An answer.
    public init(set: String, instances: [ClientInstance], silent: Int) {
        self.set = set
        self.instances = instances
        self.silent = silent
    }
}

/// One client instance, as `clients` lists it and `propagation` names a lagging one.
public struct ClientInstance: Sendable, Codable, Hashable {
    /// The id the server issued to it.
    public var id: String
    /// Its SDK.
    public var sdk: Software
    /// The app, when the client said.
    @ExplicitNull public var app: Software?
    /// The set version it last reported as applied.
    @ExplicitNull public var version: Int?
    /// When it applied it, on the device's clock (shown, never judged).
    @ExplicitNull public var appliedAt: Date?
    /// When the server last heard from it.
    public var lastSeen: Date
    /// What it can evaluate; in a `clients` answer only.
    public var capabilities: Capabilities?
    /// The flags it reads as enums, with the values it knows of each; in a `clients` answer only, and only when it
    /// reported some.
    public var enums: [String: KnownValues]?

    /// An instance.
    public init(
        id: String, sdk: Software, app: Software?, version: Int?, appliedAt: Date?, lastSeen: Date,
        capabilities: Capabilities?, enums: [String: KnownValues]? = nil
    ) {
        self.id = id
        self.sdk = sdk
        self.app = app
        self.version = version
        self.appliedAt = appliedAt
        self.lastSeen = lastSeen
        self.capabilities = capabilities
        self.enums = enums
    }
}

/// What an app knows of a flag it reads as an enum: its cases' raw values and its compiled-in default.
public struct KnownValues: Sendable, Codable, Hashable {
    /// The raw values, in the order the app's enum declares them.
    public var values: [String]
    /// The default compiled into the app, when it said.
    public var `default`: String?

    /// Known values.
    public init(values: [String], default: String? = nil) {
        self.values = values
        self.default = `default`
    }
}

/// An SDK's or an app's name and version.
public struct Software: Sendable, Codable, Hashable {
    /// The name, e.g. `FlagClient`.
    public var name: String
    /// The version, e.g. `2.0.0`.
    public var version: String

    /// A name and version.
    public init(name: String, version: String) {
        self.name = name
        self.version = version
    }
}

/// What a client can evaluate: the schema and the operators it knows.
public struct Capabilities: Sendable, Codable, Hashable {
    /// The highest document schema it reads.
    public var schema: Int
    /// The operators it knows.
    public var operators: [String]

    /// Capabilities.
    public init(schema: Int, operators: [String]) {
        self.schema = schema
        self.operators = operators
    }
}

/// Instances of one SDK version (or of one app version, in an `incompatible_clients` error's `apps`).
public struct SDKInstances: Sendable, Codable, Hashable {
    /// The SDK's name.
    public var name: String
    /// Its version.
    public var version: String
    /// How many instances.
    public var instances: Int

    /// A count.
    public init(name: String, version: String, instances: Int) {
        self.name = name
        self.version = version
        self.instances = instances
    }
}

/// `GET …/usage?key=&days=`.
public struct UsageQuery: APIRequest, Hashable {
    /// One flag (default: every flag).
    public var key: String?
    /// The last this many days (default 30).
    public var days: Int?

    /// A query.
    public init(key: String? = nil, days: Int? = nil) {
        self.key = key
        self.days = days
    }
}

/// Evaluations per flag and day (UTC), and the active instances by SDK version.
public struct UsageAnswer: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// The window in days.
    public var days: Int
    /// Every flag of the set, or the one asked for.
    public var flags: [FlagUsage]
    /// Active instances by SDK version.
    public var sdks: [SDKInstances]

    /// An answer.
    public init(set: String, days: Int, flags: [FlagUsage], sdks: [SDKInstances]) {
        self.set = set
        self.days = days
        self.flags = flags
        self.sdks = sdks
    }
}

/// One flag's evaluations.
public struct FlagUsage: Sendable, Codable, Hashable {
    /// The flag's key.
    public var key: String
    /// When it was last evaluated; `null` when not in the window.
    @ExplicitNull public var lastEvaluated: Date?
    /// The days with evaluations.
    public var days: [DayUsage]

    /// A flag's usage.
    public init(key: String, lastEvaluated: Date?, days: [DayUsage]) {
        self.key = key
        self.lastEvaluated = lastEvaluated
        self.days = days
    }
}

/// One UTC day of one flag.
public struct DayUsage: Sendable, Codable, Hashable {
    /// `2026-12-02`.
    public var day: String
    /// Evaluations that day.
    public var evaluations: Int
    /// Evaluations by variant (`""` for a flag without variants).
    public var variants: [String: Int]

    /// A day.
    public init(day: String, evaluations: Int, variants: [String: Int]) {
        self.day = day
        self.evaluations = evaluations
        self.variants = variants
    }
}

/// `GET …/versions/{n}/propagation`: how far version `n` has reached the active instances.
public struct PropagationAnswer: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// The version asked about.
    public var version: Int
    /// Instances that reported in the last 5 minutes.
    public var active: Int
    /// Those of them at `version` or later.
    public var applied: Int
    /// From the commit to the first report at `version`, median, in milliseconds; `null` without any.
    @ExplicitNull public var p50Ms: Int?
    /// The same, 99th percentile.
    @ExplicitNull public var p99Ms: Int?
    /// This server's fan-out of the version; `null` when another replica published it, or it is too old.
    @ExplicitNull public var written: Fanout?
    /// Connections whose client does not report.
    public var silent: Int
    /// Active instances below `version`, oldest report first, at most 100.
    public var lagging: [ClientInstance]

    /// An answer.
    public init(
        set: String, version: Int, active: Int, applied: Int, p50Ms: Int?, p99Ms: Int?, written: Fanout?,
        silent: Int, lagging: [ClientInstance]
    ) {
        self.set = set
        self.version = version
        self.active = active
        self.applied = applied
        self.p50Ms = p50Ms
        self.p99Ms = p99Ms
        self.written = written
        self.silent = silent
        self.lagging = lagging
    }
}

/// One server's fan-out of a version to its streams.
public struct Fanout: Sendable, Codable, Hashable {
    /// Streams the patch was written to.
    public var streams: Int
    /// From the commit to the last write, in milliseconds.
    public var ms: Double

    /// A fan-out.
    public init(streams: Int, ms: Double) {
        self.streams = streams
        self.ms = ms
    }
}
