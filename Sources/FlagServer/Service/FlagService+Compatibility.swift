import FlagCore
import Foundation

/// The compatibility gate (docs/telemetry.md): a write that introduces an operator or a schema that more than 0.1 %
/// of the active client instances cannot evaluate is refused (`CompatibilityGate`, FlagCore's rules, which
/// `flagctl lint --against` applies too), unless the set's `compatibility` setting says otherwise or the note
/// allows it.
extension FlagService {
    /// Checks a write from `current` to `next` that changes `change` against the active instances of the set, and
    /// returns the note to audit it with (its reason saying so when the write goes ahead over the gate) and the
    /// warnings to answer with. Kills, restores, rollouts and defaults introduce nothing, so they never meet it.
    func checkCompatibility(
        _ next: SetState, from current: SetState, change: [ItemKey: [UInt8]?], _ note: ChangeNote
    ) throws -> (note: ChangeNote, warnings: [String]) {
        let constructs = Self.introduced(next, from: current, change: change)
        guard !constructs.isEmpty else { return (note, []) }
        let mode = try storeCall { try store.settings.read(set: next.name) }.compatibility
        guard mode != .off else { return (note, []) }
        let active = try telemetry.activeInstances(set: next.name)
        guard
            let findings = IncompatibleClients(
                constructs: constructs, active: active.map(\.report), set: next.name)
        else { return (note, []) }
        if mode == .enforce && CompatibilityGate.refuses(lacking: findings.lacking, active: findings.active)
            && !note.allowIncompatible
        {
            throw ServiceError.incompatibleClients(findings)
        }
        var audited = note
        let label = note.allowIncompatible ? "allowIncompatible" : "compatibility warning"
        audited.reason = [note.reason, "\(label): \(findings.summary)"].compactMap { $0 }.joined(separator: "; ")
        return (audited, [findings.message])
    }

    /// What the write needs that the version before did not (`CompatibilityGate.introduced`): per flag written,
    /// what its rules and cohorts need now and did not; per cohort written, the operators it uses now and did not.
    static func introduced(
        _ next: SetState, from current: SetState, change: [ItemKey: [UInt8]?]
    ) -> [IncompatibleClients.Construct] {
        var constructs: [IncompatibleClients.Construct] = []
        for item in change.keys.sorted() {
            let introduced: [CompatibilityGate.Construct]
            switch item.kind {
            case .flag:
                guard let flag = next.compiled.flag(item.key) else { continue }
                let now = ClientCapabilities.needs(of: flag, schema: next.compiled.schema, cohort: next.compiled.cohort)
                let before = current.compiled.flag(item.key).map {
                    ClientCapabilities.needs(of: $0, schema: current.compiled.schema, cohort: current.compiled.cohort)
                }
                introduced = CompatibilityGate.introduced(needing: now, before: before)
            case .cohort:
                guard let cohort = next.compiled.cohort(item.key) else { continue }
                introduced = CompatibilityGate.introduced(by: cohort, before: current.compiled.cohort(item.key))
            }
            constructs += introduced.map { IncompatibleClients.Construct(kind: $0, item: item) }
        }
        return constructs
    }
}

/// What the compatibility gate found: the constructs a write introduces, and the active instances that lack them.
struct IncompatibleClients: Sendable {
    /// One thing a write introduces, and the flag or cohort that introduces it.
    struct Construct: Sendable, Hashable {
        let kind: CompatibilityGate.Construct
        let item: ItemKey

        /// `operator "semver_gte" in flag "new-checkout"`.
        var description: String {
            "\(kind.description) in \(item.kind == .flag ? "flag" : "cohort") \"\(item.key)\""
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
    let sdks: [(name: String, version: String, instances: Int)]

    /// The findings, or `nil` when no active instance lacks anything.
    init?(constructs all: [Construct], active reports: [TelemetryReport], set: String) {
        var lackingReports: [TelemetryReport] = []
        var lackingConstructs: Set<Construct> = []
        for report in reports {
            let missing = all.filter { $0.kind.isLacking(in: report.capabilities) }
            guard !missing.isEmpty else { continue }
            lackingReports.append(report)
            lackingConstructs.formUnion(missing)
        }
        guard !lackingReports.isEmpty else { return nil }
        self.set = set
        self.constructs = all.filter(lackingConstructs.contains)
        self.active = reports.count
        self.lacking = lackingReports.count
        var bySDK: [TelemetryReport.Software: Int] = [:]
        for report in lackingReports { bySDK[report.sdk, default: 0] += 1 }
        self.sdks = bySDK.map { ($0.key.name, $0.key.version, $0.value) }.sorted {
            ($1.instances, $0.name, $0.version) < ($0.instances, $1.name, $1.version)
        }
    }

    /// The share of active instances that lack something.
    var share: Double { active == 0 ? 0 : Double(lacking) / Double(active) }

    /// One line: what, how many, which SDKs.
    var summary: String {
        let what = constructs.map(\.description).joined(separator: ", ")
        let percent = String(format: "%.2f", share * 100)
        let versions = sdks.prefix(5).map { "\($0.name) \($0.version) (\($0.instances))" }.joined(separator: ", ")
        let more = sdks.count > 5 ? ", …" : ""
        return "\(what) cannot be evaluated by \(lacking) of \(active) active instances (\(percent) %): "
            + "\(versions)\(more)"
    }

    /// The refusal's message: the summary, what those instances will get, and how to write it anyway.
    var message: String {
        "\(summary). They will serve the flag's compiled-in default. Pass allowIncompatible=true (flagctl --force) "
            + "to write it anyway, or set the set's compatibility to warn."
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
        writer.beginArray()
        for sdk in sdks {
            writer.beginObject()
            writer.key("name")
            writer.string(sdk.name)
            writer.key("version")
            writer.string(sdk.version)
            writer.key("instances")
            writer.int(sdk.instances)
            writer.endObject()
        }
        writer.endArray()
    }
}
