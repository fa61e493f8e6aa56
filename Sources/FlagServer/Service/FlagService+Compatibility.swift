import FlagCore
import Foundation

/// The compatibility gate (docs/telemetry.md): a write that introduces an operator or a schema that more than 0.1 %
/// of the active client instances cannot evaluate, or makes a flag able to serve a value that as many instances
/// reading it as an enum do not know, is refused (`CompatibilityGate`, FlagCore's rules, which
/// `flagctl lint --against` applies too), unless the set's `compatibility` setting says otherwise or the note
/// allows it.
extension FlagService {
    /// Checks a write from `current` to `next` that changes `change` against the active instances of the set, and
    /// returns the note to audit it with (its reason saying so when the write goes ahead over the gate) and the
    /// warnings to answer with. Kills, restores and deletions introduce nothing, so they never meet it; a default,
    /// a rule or a rollout meets it only with a value that the flag could not serve before.
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
    /// what its rules and cohorts need now and did not, and the values it can serve now and could not; per cohort
    /// written, the operators it uses now and did not.
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
                introduced =
                    CompatibilityGate.introduced(needing: now, before: before)
                    + CompatibilityGate.introduced(serving: flag, before: current.compiled.flag(item.key))
            case .cohort:
                guard let cohort = next.compiled.cohort(item.key) else { continue }
                introduced = CompatibilityGate.introduced(by: cohort, before: current.compiled.cohort(item.key))
            }
            constructs += introduced.map { IncompatibleClients.Construct(kind: $0, item: item) }
        }
        return constructs
    }
}
