import FlagCore
import Foundation

/// The answers of the telemetry routes (docs/telemetry.md), read once here: unknown members are ignored, and a
/// member the commands rely on that is missing or of the wrong type fails with the route and the member named.
struct TelemetryAnswers {
    /// The route, for messages: `GET /v1/admin/sets/t/clients`.
    let route: String

    /// A failure naming the route and the member.
    func bad(_ member: String, _ problem: String) -> CLIError {
        .failure(
            "the server's answer to \(route) cannot be read: \"\(member)\" \(problem); "
                + "is it a flagserver with client telemetry?")
    }

    /// A count: a whole number of 0 or more.
    func count(_ value: JSONValue, _ member: String) throws(CLIError) -> Int {
        guard let number = value.int, number >= 0 else { throw bad(member, "is not a count (\(value.compactText))") }
        return number
    }

    /// A count that may be missing or `null` (0 then).
    func optionalCount(_ value: JSONValue, _ member: String) throws(CLIError) -> Int {
        value == .null ? 0 : try count(value, member)
    }

    /// A string.
    func text(_ value: JSONValue, _ member: String) throws(CLIError) -> String {
        guard let text = value.string else { throw bad(member, "is not a string (\(value.compactText))") }
        return text
    }

    /// A time that may be `null`.
    func optionalDate(_ value: JSONValue, _ member: String) throws(CLIError) -> Date? {
        if value == .null { return nil }
        guard let date = value.date else { throw bad(member, "is not an RFC 3339 time (\(value.compactText))") }
        return date
    }

    /// A version that may be `null` (an instance that has applied none yet).
    func optionalVersion(_ value: JSONValue, _ member: String) throws(CLIError) -> Int? {
        if value == .null { return nil }
        guard let version = value.int, version >= 1 else {
            throw bad(member, "is not a version (\(value.compactText))")
        }
        return version
    }

    /// `{"name","version"}`.
    func software(_ value: JSONValue, _ member: String) throws(CLIError) -> TelemetryReport.Software {
        TelemetryReport.Software(
            name: try text(value["name"], member + ".name"), version: try text(value["version"], member + ".version"))
    }

    /// `{"name","version"}` or `null`.
    func optionalSoftware(_ value: JSONValue, _ member: String) throws(CLIError) -> TelemetryReport.Software? {
        value == .null ? nil : try software(value, member)
    }

    /// The elements of an array.
    func array(_ value: JSONValue, _ member: String) throws(CLIError) -> [JSONValue] {
        guard let elements = value.array else { throw bad(member, "is not an array (\(value.compactText))") }
        return elements
    }
}

/// One client instance, as `clients` lists it and `propagation` names a lagging one.
struct ClientInstance: Equatable {
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

    /// Reads one instance; `capabilities` is required in a `clients` answer only.
    static func read(_ json: JSONValue, _ member: String, _ answers: TelemetryAnswers, needsCapabilities: Bool)
        throws(CLIError) -> ClientInstance
    {
        var capabilities: ClientCapabilities?
        if needsCapabilities || json["capabilities"] != .null {
            let value = json["capabilities"]
            guard let schema = value["schema"].int else {
                throw answers.bad(member + ".capabilities.schema", "is not a number (\(value["schema"].compactText))")
            }
            var operators: Set<String> = []
            for (index, name) in try answers.array(value["operators"], member + ".capabilities.operators").enumerated()
            {
                operators.insert(try answers.text(name, member + ".capabilities.operators[\(index)]"))
            }
            capabilities = ClientCapabilities(schema: schema, operators: operators)
        }
        return ClientInstance(
            id: try answers.text(json["id"], member + ".id"), sdk: try answers.software(json["sdk"], member + ".sdk"),
            app: try answers.optionalSoftware(json["app"], member + ".app"),
            version: try answers.optionalVersion(json["version"], member + ".version"),
            appliedAt: try answers.optionalDate(json["appliedAt"], member + ".appliedAt"),
            lastSeen: try answers.optionalDate(json["lastSeen"], member + ".lastSeen"), capabilities: capabilities)
    }
}

/// `GET /v1/admin/sets/{set}/clients`: the instances that reported in the last 10 minutes.
struct ClientsAnswer: Equatable {
    /// The set.
    let set: String
    /// The instances.
    let instances: [ClientInstance]
    /// Connections this server holds whose client does not report.
    let silent: Int

    /// Reads the answer.
    static func read(_ json: JSONValue, route: String) throws(CLIError) -> ClientsAnswer {
        let answers = TelemetryAnswers(route: route)
        var instances: [ClientInstance] = []
        for (index, instance) in try answers.array(json["instances"], "instances").enumerated() {
            instances.append(
                try ClientInstance.read(instance, "instances[\(index)]", answers, needsCapabilities: true))
        }
        return ClientsAnswer(
            set: try answers.text(json["set"], "set"), instances: instances,
            silent: try answers.optionalCount(json["silent"], "silent"))
    }
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
struct UsageAnswer: Equatable {
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
            return UsageAnswer.ordered(totals)
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

    /// Reads the answer.
    static func read(_ json: JSONValue, route: String) throws(CLIError) -> UsageAnswer {
        let answers = TelemetryAnswers(route: route)
        var flags: [FlagUsage] = []
        for (index, flag) in try answers.array(json["flags"], "flags").enumerated() {
            let member = "flags[\(index)]"
            var days: [DayUsage] = []
            let dayList = flag["days"] == .null ? [] : try answers.array(flag["days"], member + ".days")
            for (dayIndex, day) in dayList.enumerated() {
                let dayMember = "\(member).days[\(dayIndex)]"
                guard let variantObject = day["variants"] == .null ? [:] : day["variants"].object else {
                    throw answers.bad(dayMember + ".variants", "is not an object (\(day["variants"].compactText))")
                }
                var variants: [String: Int] = [:]
                for (name, count) in variantObject {
                    variants[name] = try answers.count(count, "\(dayMember).variants.\(name)")
                }
                days.append(
                    DayUsage(
                        day: try answers.text(day["day"], dayMember + ".day"),
                        evaluations: try answers.count(day["evaluations"], dayMember + ".evaluations"),
                        variants: ordered(variants).map { Variant(name: $0.name, count: $0.count) }))
            }
            flags.append(
                FlagUsage(
                    key: try answers.text(flag["key"], member + ".key"),
                    lastEvaluated: try answers.optionalDate(flag["lastEvaluated"], member + ".lastEvaluated"),
                    days: days))
        }
        var sdks: [SDKCount] = []
        let sdkList = json["sdks"] == .null ? [] : try answers.array(json["sdks"], "sdks")
        for (index, sdk) in sdkList.enumerated() {
            sdks.append(
                SDKCount(
                    sdk: try answers.software(sdk, "sdks[\(index)]"),
                    instances: try answers.count(sdk["instances"], "sdks[\(index)].instances")))
        }
        return UsageAnswer(
            set: try answers.text(json["set"], "set"), days: try answers.count(json["days"], "days"), flags: flags,
            sdks: sdks)
    }

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
    let lagging: [ClientInstance]

    /// Reads the answer.
    static func read(_ json: JSONValue, route: String) throws(CLIError) -> Propagation {
        let answers = TelemetryAnswers(route: route)
        func milliseconds(_ value: JSONValue, _ member: String) throws(CLIError) -> Double? {
            if value == .null { return nil }
            guard let number = value.double, number >= 0 else {
                throw answers.bad(member, "is not a number of milliseconds (\(value.compactText))")
            }
            return number
        }
        var written: Written?
        if json["written"] != .null {
            let streams = try answers.count(json["written"]["streams"], "written.streams")
            guard let ms = try milliseconds(json["written"]["ms"], "written.ms") else {
                throw answers.bad("written.ms", "is missing")
            }
            written = Written(streams: streams, milliseconds: ms)
        }
        var lagging: [ClientInstance] = []
        let laggingList = json["lagging"] == .null ? [] : try answers.array(json["lagging"], "lagging")
        for (index, instance) in laggingList.enumerated() {
            lagging.append(try ClientInstance.read(instance, "lagging[\(index)]", answers, needsCapabilities: false))
        }
        guard let version = json["version"].int else {
            throw answers.bad("version", "is not a version (\(json["version"].compactText))")
        }
        return Propagation(
            version: version, active: try answers.count(json["active"], "active"),
            applied: try answers.count(json["applied"], "applied"),
            p50Milliseconds: try milliseconds(json["p50Ms"], "p50Ms"),
            p99Milliseconds: try milliseconds(json["p99Ms"], "p99Ms"), written: written,
            silent: try answers.optionalCount(json["silent"], "silent"), lagging: lagging)
    }
}
