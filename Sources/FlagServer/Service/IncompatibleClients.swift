import FlagCore
import Foundation

/// What the compatibility gate found: the constructs a write introduces, and the active instances that lack them.
struct IncompatibleClients: Sendable {
    /// One thing a write introduces, and the flag or cohort that introduces it.
    struct Construct: Sendable, Hashable {
        let kind: CompatibilityGate.Construct
        let item: ItemKey

        /// `operator "semver_gte" in flag "new-checkout"`, `value "orange" in flag "checkout-theme"`.
        var description: String {
            "\(kind.description) in \(item.kind == .flag ? "flag" : "cohort") \"\(item.key)\""
        }

        /// Whether it is a value an enum flag can newly serve, rather than something to evaluate.
        var isValue: Bool {
            if case .value = kind { return true }
            return false
        }
    }

    /// Instances of one version of a program (an SDK or an app).
    struct Tally: Sendable, Hashable {
        let name: String
        let version: String
        let instances: Int

        /// The tallies of `programs`, one per name and version, the most instances first.
        static func of(_ programs: [TelemetryReport.Software]) -> [Tally] {
            var counts: [TelemetryReport.Software: Int] = [:]
            for program in programs { counts[program, default: 0] += 1 }
            return counts.map { Tally(name: $0.key.name, version: $0.key.version, instances: $0.value) }.sorted {
                ($1.instances, $0.name, $0.version) < ($0.instances, $1.name, $1.version)
            }
        }
    }

    let set: String
    /// What the write introduces that some active instance lacks.
    let constructs: [Construct]
    /// Active instances.
    let active: Int
    /// Those that lack at least one construct.
    let lacking: Int
    /// Their SDKs: name, version, how many.
    let sdks: [Tally]
    /// Their apps, for those that named theirs.
    let apps: [Tally]
    /// Each construct with the reports of the instances that lack it.
    private let lackers: [(construct: Construct, reports: [TelemetryReport])]

    /// The findings, or `nil` when no active instance lacks anything.
    init?(constructs all: [Construct], active reports: [TelemetryReport], set: String) {
        var lackers: [(construct: Construct, reports: [TelemetryReport])] = []
        for construct in all {
            let lacking = reports.filter { construct.kind.isLacking(in: $0.capabilities, enums: $0.enums) }
            if !lacking.isEmpty { lackers.append((construct, lacking)) }
        }
        guard !lackers.isEmpty else { return nil }
        var lackingInstances: [String: TelemetryReport] = [:]
        for (_, lacking) in lackers {
            for report in lacking { lackingInstances[report.instance] = report }
        }
        self.set = set
        self.constructs = lackers.map(\.construct)
        self.lackers = lackers
        self.active = reports.count
        self.lacking = lackingInstances.count
        self.sdks = Tally.of(lackingInstances.values.map(\.sdk))
        self.apps = Tally.of(lackingInstances.values.compactMap(\.app))
    }

    /// One line: what, how many, which SDKs (and, for values, which apps and what they serve instead).
    var summary: String {
        var parts: [String] = []
        let evaluated = lackers.filter { !$0.construct.isValue }
        if !evaluated.isEmpty {
            let what = evaluated.map(\.construct.description).joined(separator: ", ")
            var instances: [String: TelemetryReport] = [:]
            for (_, lacking) in evaluated {
                for report in lacking { instances[report.instance] = report }
            }
            let sdks = instances.values.map { "\($0.sdk.name) \($0.sdk.version)" }
            parts.append(
                "\(what) cannot be evaluated by \(Self.share(instances.count, of: active)): \(Self.list(sdks))")
        }
        for (construct, lacking) in lackers where construct.isValue {
            guard case .value(_, let flag) = construct.kind else { continue }
            var defaults: [String?: Int] = [:]
            for report in lacking { defaults[report.enums[flag]?.defaultValue, default: 0] += 1 }
            let builds = lacking.map { CompatibilityGate.build(sdk: $0.sdk, app: $0.app) }
            parts.append(
                "\(construct.description) is not known to \(Self.share(lacking.count, of: active)): "
                    + "\(Self.list(builds)); they will serve \(CompatibilityGate.servedInstead(defaults)) instead")
        }
        return parts.joined(separator: "; ")
    }

    /// The refusal's message: the summary, what those instances will get, and how to write it anyway.
    var message: String {
        // A value's part says what its instances serve; an operator's or a schema's says it here.
        let evaluated = lackers.contains { !$0.construct.isValue }
        return "\(summary).\(evaluated ? " They will serve the flag's compiled-in default." : "") Pass "
            + "allowIncompatible=true (flagctl --force) to write it anyway, or set the set's compatibility to warn."
    }

    /// `1 of 2 active instances (50.00 %)`.
    private static func share(_ part: Int, of whole: Int) -> String {
        let percent = String(format: "%.2f", whole == 0 ? 0 : Double(part) / Double(whole) * 100)
        return "\(part) of \(whole) active instances (\(percent) %)"
    }

    /// `FlagClient 1.2.0 (3), FlagClient 1.1.0 (1)`: each label with how many times it is given, the most first, the
    /// first five.
    private static func list(_ labels: [String]) -> String {
        var counts: [String: Int] = [:]
        for label in labels { counts[label, default: 0] += 1 }
        let sorted = counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
        let named = sorted.prefix(5).map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
        return named + (sorted.count > 5 ? ", …" : "")
    }

    /// The members an `incompatible_clients` error adds to the error object.
    func write(members writer: inout JSONWriter) {
        writer.key("constructs")
        writer.beginArray()
        for construct in constructs { writer.string(construct.description) }
        writer.endArray()
        writer.key("lacking")
        writer.int(lacking)
        writer.key("active")
        writer.int(active)
        writer.key("sdks")
        Self.write(sdks, to: &writer)
        writer.key("apps")
        Self.write(apps, to: &writer)
    }

    private static func write(_ tallies: [Tally], to writer: inout JSONWriter) {
        writer.beginArray()
        for tally in tallies {
            writer.beginObject()
            writer.key("name")
            writer.string(tally.name)
            writer.key("version")
            writer.string(tally.version)
            writer.key("instances")
            writer.int(tally.instances)
            writer.endObject()
        }
        writer.endArray()
    }
}
