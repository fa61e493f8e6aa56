import FlagAPI
import FlagCore
import Foundation

/// The answers of the telemetry routes (docs/telemetry.md) as the commands use them (`…Report`, `ReportingInstance`):
/// mapped once, here, from the contract's shapes (FlagAPI), which read and check the wire.

/// One client instance, as `clients` lists it and `propagation` names a lagging one.
struct ReportingInstance: Equatable {
    /// The id the server issued to its connection.
    let id: String
    /// The SDK's name and version.
    let sdk: TelemetryReport.Software
    /// The app's, when the client said.
    let app: TelemetryReport.Software?
    /// The set version it last reported as applied.
    let version: Int?
    /// When it applied it, on the device's clock (shown, never judged).
    let appliedAt: Date?
    /// When the server last heard from it, on the server's clock.
    let lastSeen: Date?
    /// What it can evaluate; `nil` in a propagation answer, which does not carry it.
    let capabilities: ClientCapabilities?
    /// The flags it reads as enums, with the values it knows of each; empty when it reported none (and in a
    /// propagation answer).
    var enums: [String: TelemetryReport.KnownValues] = [:]
}

/// `GET /v1/admin/sets/{set}/clients`: the instances that reported in the last 10 minutes.
struct ClientsReport: Equatable {
    /// The set.
    let set: String
    /// The instances.
    let instances: [ReportingInstance]
    /// Connections this server holds whose client does not report.
    let silent: Int
}

/// Instances of one SDK version.
struct SDKCount: Equatable {
    /// The SDK.
    let sdk: TelemetryReport.Software
    /// How many.
    let instances: Int

    /// The most instances first, then by name and version.
    static func ordered(_ counts: [SDKCount]) -> [SDKCount] {
        counts.sorted {
            $0.instances != $1.instances
                ? $0.instances > $1.instances
                : utf8Less("\($0.sdk.name) \($0.sdk.version)", "\($1.sdk.name) \($1.sdk.version)")
        }
    }
}

/// `GET /v1/admin/sets/{set}/usage`: evaluations per flag and day, and the active instances by SDK version.
struct UsageReport: Equatable {
    /// One flag's evaluations.
    struct FlagUsage: Equatable {
        /// The flag's key.
        let key: String
        /// When it was last evaluated; `nil` when not in the window.
        let lastEvaluated: Date?
        /// The days with evaluations, as the server sent them.
        let days: [DayUsage]

        /// The evaluations of every day.
        var evaluations: Int { days.reduce(0) { $0 + $1.evaluations } }

        /// Evaluations by variant over every day, the most served first.
        var variants: [(name: String, count: Int)] {
            var totals: [String: Int] = [:]
            for day in days {
                for variant in day.variants { totals[variant.name, default: 0] += variant.count }
            }
            return UsageReport.ordered(totals)
        }
    }

    /// One UTC day of one flag.
    struct DayUsage: Equatable {
        /// `2026-12-02`.
        let day: String
        /// Evaluations that day.
        let evaluations: Int
        /// Evaluations by variant (`""` for a flag without variants), the most served first.
        let variants: [Variant]
    }

    /// How often a variant was served.
    struct Variant: Equatable {
        /// Its name; `""` where the flag has none.
        let name: String
        /// Evaluations that served it.
        let count: Int
    }

    /// The set.
    let set: String
    /// The window in days.
    let days: Int
    /// Every flag of the set (or the one asked for).
    let flags: [FlagUsage]
    /// Active instances by SDK version.
    let sdks: [SDKCount]

    /// Counts by name, the largest first, ties by name.
    static func ordered(_ counts: [String: Int]) -> [(name: String, count: Int)] {
        counts.map { (name: $0.key, count: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : utf8Less($0.name, $1.name) }
    }
}

/// `GET /v1/admin/sets/{set}/versions/{n}/propagation`: how far version `n` has reached.
struct Propagation: Equatable {
    /// This server's fan-out of the version.
    struct Written: Equatable {
        /// Streams the patch was written to.
        let streams: Int
        /// From the commit to the last write, in milliseconds.
        let milliseconds: Double
    }

    /// The version asked about.
    let version: Int
    /// Instances that reported in the last 5 minutes.
    let active: Int
    /// Those of them whose last report names `version` or later.
    let applied: Int
    /// From commit to the first report at `version`, for the applied instances, on the server's clock.
    let p50Milliseconds: Double?
    /// The same, 99th percentile.
    let p99Milliseconds: Double?
    /// This server's fan-out; `nil` when another replica published it, or it is too old.
    let written: Written?
    /// Connections whose client does not report.
    let silent: Int
    /// Active instances below `version`, oldest report first, at most 100.
    let lagging: [ReportingInstance]
}

extension TelemetryReport.Software {
    /// An SDK's or app's name and version, as the contract writes them.
    init(_ wire: FlagAPI.Software) {
        self.init(name: wire.name, version: wire.version)
    }
}

extension ReportingInstance {
    /// The instance the server described.
    init(_ wire: ClientInstance) {
        self.init(
            id: wire.id, sdk: .init(wire.sdk), app: wire.app.map(TelemetryReport.Software.init), version: wire.version,
            appliedAt: wire.appliedAt, lastSeen: wire.lastSeen,
            capabilities: wire.capabilities.map { ClientCapabilities(schema: $0.schema, operators: Set($0.operators)) },
            enums: (wire.enums ?? [:]).mapValues { .init(values: $0.values, defaultValue: $0.default) })
    }
}

extension ClientsReport {
    /// The answer the server sent; an instance without its capabilities is refused, as the commands judge by them.
    init(_ wire: ClientsAnswer, route: String) throws(CLIError) {
        if let instance = wire.instances.first(where: { $0.capabilities == nil }) {
            throw .failure(
                "the server's answer to \(route) lists instance \(instance.id) without its \"capabilities\"; "
                    + "is it a flagserver with client telemetry?")
        }
        self.init(set: wire.set, instances: wire.instances.map(ReportingInstance.init), silent: wire.silent)
    }
}

extension UsageReport {
    /// The answer the server sent, each day's variants the most served first.
    init(_ wire: UsageAnswer) {
        let flags = wire.flags.map { flag in
            FlagUsage(
                key: flag.key, lastEvaluated: flag.lastEvaluated,
                days: flag.days.map { day in
                    DayUsage(
                        day: day.day, evaluations: day.evaluations,
                        variants: Self.ordered(day.variants).map { Variant(name: $0.name, count: $0.count) })
                })
        }
        let sdks = wire.sdks.map { SDKCount(sdk: .init(name: $0.name, version: $0.version), instances: $0.instances) }
        self.init(set: wire.set, days: wire.days, flags: flags, sdks: sdks)
    }
}

extension Propagation {
    /// The answer the server sent.
    init(_ wire: PropagationAnswer) {
        self.init(
            version: wire.version, active: wire.active, applied: wire.applied,
            p50Milliseconds: wire.p50Ms.map(Double.init), p99Milliseconds: wire.p99Ms.map(Double.init),
            written: wire.written.map { Written(streams: $0.streams, milliseconds: $0.ms) }, silent: wire.silent,
            lagging: wire.lagging.map(ReportingInstance.init))
    }
}
