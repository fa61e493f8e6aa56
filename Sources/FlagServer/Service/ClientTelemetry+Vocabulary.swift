import FlagCore
import Foundation

/// What client telemetry keeps counts of: flags of the set, now or in its versions of the last day, and
/// only the variants such a flag can report. A holder of the public SDK key could otherwise store counts for any
/// name, kept 90 days.
struct TelemetryVocabulary: Sendable {
    /// What a count was found to be.
    enum Verdict: Equatable {
        case kept
        case unknownFlag
        case unknownVariant
    }

    /// The version `current` belongs to.
    private var version = -1
    /// The variants of the current version's flags, worked out at the first report that names each.
    private var current: [String: Set<String>] = [:]
    /// The variants of flag definitions a version replaced or removed, and until when they still count.
    private var retired: [String: (variants: Set<String>, until: Date)] = [:]

    /// Whether a count of `flag` × `variant` is kept, against `flags` (the current version). `""` stands for no
    /// variant (a local override, an error), which any flag the set has may report.
    mutating func check(flag: String, variant: String, in flags: CompiledFlagSet, now: Date) -> Verdict {
        if flags.version != version {
            version = flags.version
            current = [:]
        }
        var known = current[flag]
        if known == nil, let model = flags.flag(flag) {
            known = model.reportableVariants
            current[flag] = known
        }
        var retiredVariants: Set<String>?
        if let entry = retired[flag] {
            if entry.until > now {
                retiredVariants = entry.variants
            } else {
                retired[flag] = nil
            }
        }
        guard known != nil || retiredVariants != nil else { return .unknownFlag }
        if variant.isEmpty || known?.contains(variant) == true || retiredVariants?.contains(variant) == true {
            return .kept
        }
        return .unknownVariant
    }

    /// Keeps the variants of `flags`, definitions a new version replaced or removed, for `window` from `now`.
    mutating func retire(_ flags: [Flag], now: Date, window: TimeInterval) {
        for flag in flags {
            var entry = retired[flag.key] ?? ([], now)
            entry.variants.formUnion(flag.reportableVariants)
            entry.until = now.addingTimeInterval(window)
            retired[flag.key] = entry
        }
        // Expired entries also go when a report names them; this bounds those never named again.
        if retired.count > 1024 { retired = retired.filter { $0.value.until > now } }
    }
}

extension ClientTelemetry {
    /// A version of `set` replaced `flags` (their definitions before it, changed or removed): their variants stay
    /// countable for `retiredFlagWindow`. Called by every publication of a version, local or another server's.
    func retire(set: String, flags: [Flag]) {
        guard !flags.isEmpty else { return }
        let now = clock.now()
        vocabularies.withLock { vocabularies in
            vocabularies[set, default: TelemetryVocabulary()].retire(
                flags, now: now, window: limits.retiredFlagWindow)
        }
    }
}
