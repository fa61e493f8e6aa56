import FlagCore
import FlagLock
import Foundation

/// Where evaluations come from: one flag set, in whichever form is ready.
///
/// Three forms, because the speed targets pull apart: a whole `CompiledFlagSet` is the fastest to evaluate but takes
/// ~15 ms to build from a 1 MB document, too slow for the first value at launch (lazy, per flag) and for a one-flag
/// patch (an overlay of the changed flags over the previous set).
///
/// Class-bound: copying the source out of the client's lock at every first read is then one retain, where a
/// copy of an unconstrained existential went through its value witnesses (~140 instructions, twice a read).
protocol EvaluationSource: AnyObject, Sendable {
    /// The set's version.
    var version: Int { get }
    /// Evaluates the flag `handle` names as `type`, reading `now` only for a flag whose value can depend on the
    /// time; never throws. The result is valid while this source is alive (see `Resolution`).
    func resolve(
        _ handle: FlagHandle, type: FlagType, context: EvaluationContext, clock now: () -> Date
    ) -> Resolution
    /// The killed flags with their kill values, when known without decoding the whole set; `nil` for the lazy form.
    var killed: [String: JSONValue]? { get }
}

/// An evaluation's outcome as numbers and the compiled set that holds what they index.
///
/// The set is unretained: the source that returned the resolution holds it, and a caller keeps that source alive
/// (`withExtendedLifetime`, `_fixLifetime`) while it reads here. Reading through `_withUnsafeGuaranteedRef` then retains nothing
/// (an `unowned(unsafe)` field was retained and released at every read: ~90 instructions per first read).
struct Resolution {
    let outcome: Outcome
    private let compiled: Unmanaged<CompiledFlagSet>

    init(outcome: Outcome, compiled: CompiledFlagSet) {
        self.outcome = outcome
        self.compiled = .passUnretained(compiled)
    }

    /// The served value, or `fallback` when the evaluation failed.
    func value(default fallback: JSONValue) -> JSONValue {
        compiled._withUnsafeGuaranteedRef { $0.value(outcome) } ?? fallback
    }

    /// The variant name; `nil` on a failure.
    var variant: String? { compiled._withUnsafeGuaranteedRef { $0.variant(outcome) } }

    /// The failure's message for flag `key` asked for as `type`; `nil` when it did not fail.
    func message(key: String, type: FlagType) -> String? {
        compiled._withUnsafeGuaranteedRef { $0.message(outcome, key: key, type: type) }
    }

    /// The public detail, with the version of the source that resolved it.
    func detail(key: String, type: FlagType, default fallback: JSONValue, version: Int) -> EvaluationDetail<JSONValue> {
        var detail = compiled._withUnsafeGuaranteedRef {
            $0.detail(outcome, key: key, type: type, default: fallback)
        }
        detail.version = version
        return detail
    }
}

extension EvaluationSource {
    /// Evaluates `key` as `type` at `now` into a detail, hashing the key for this call only.
    func evaluate(
        _ key: String, type: FlagType, default fallback: JSONValue, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<JSONValue> {
        withExtendedLifetime(self) {
            resolve(FlagHandle(key), type: type, context: context, clock: { now })
                .detail(key: key, type: type, default: fallback, version: version)
        }
    }
}

/// A whole compiled set. A class, so that copying the current source out of the client's lock retains one
/// reference instead of each of a struct's fields.
final class CompiledSource: EvaluationSource {
    let compiled: CompiledFlagSet
    let killed: [String: JSONValue]?

    init(_ compiled: CompiledFlagSet) {
        self.compiled = compiled
        self.killed = Self.killed(in: compiled.flagSet)
    }

    /// The killed flags of `set` and the values they serve.
    static func killed(in set: FlagSet) -> [String: JSONValue] {
        var killed: [String: JSONValue] = [:]
        for (key, flag) in set.flags where flag.killed && !flag.archived {
            killed[key] = flag.killValue ?? flag.defaultValue
        }
        return killed
    }

    var version: Int { compiled.version }

    func resolve(_ handle: FlagHandle, type: FlagType, context: EvaluationContext, clock now: () -> Date) -> Resolution {
        Resolution(outcome: compiled.outcome(handle, type: type, context: context, clock: now), compiled: compiled)
    }
}

/// The flags a patch changed, compiled with every cohort of the new set, over the previous source.
final class OverlaySource: EvaluationSource {
    let base: any EvaluationSource
    let overlay: CompiledFlagSet
    let changed: Set<String>
    let removed: Set<String>
    let version: Int
    let killed: [String: JSONValue]?

    init(
        base: any EvaluationSource, overlay: CompiledFlagSet, changed: Set<String>, removed: Set<String>, version: Int,
        killed: [String: JSONValue]?
    ) {
        self.base = base
        self.overlay = overlay
        self.changed = changed
        self.removed = removed
        self.version = version
        self.killed = killed
    }

    /// The set that resolves a flag is the overlay or the base; the version reported is this source's (callers
    /// take it from `version`).
    func resolve(_ handle: FlagHandle, type: FlagType, context: EvaluationContext, clock now: () -> Date) -> Resolution {
        if changed.contains(handle.key) || removed.contains(handle.key) {
            return Resolution(outcome: overlay.outcome(handle, type: type, context: context, clock: now), compiled: overlay)
        }
        return base.resolve(handle, type: type, context: context, clock: now)
    }
}

/// A cached document evaluated flag by flag: only the header and the byte range of each flag are read at launch;
/// a flag is decoded and compiled (with the cohorts) at its first evaluation. The refresh loop replaces it with a
/// `CompiledSource` as soon as the whole set is compiled in the background.
final class LazySource: EvaluationSource {
    let index: DocumentIndex
    private let compiledFlags = Locked<[String: CompiledFlagSet]>([:])
    private let cohortSet = Locked<FlagSet?>(nil)

    init(index: DocumentIndex) {
        self.index = index
    }

    var version: Int { index.version }
    var killed: [String: JSONValue]? { nil }

    /// The resolving set is kept in `compiledFlags` for this source's life.
    func resolve(_ handle: FlagHandle, type: FlagType, context: EvaluationContext, clock now: () -> Date) -> Resolution {
        let compiled = compiled(for: handle.key)
        return Resolution(outcome: compiled.outcome(handle, type: type, context: context, clock: now), compiled: compiled)
    }

    /// The set holding only `key` and the cohorts, compiled once.
    func compiled(for key: String) -> CompiledFlagSet {
        if let done = compiledFlags.withLock({ $0[key] }) { return done }
        var set = cohorts()
        if let bytes = index.flag(key) {
            do {
                let (flag, problems) = try Flag.decode(bytes, key: key)
                if let flag { set.flags[key] = flag } else { set.unreadableFlags[key] = problems }
            } catch {
                set.unreadableFlags[key] = [Problem(path: "flags.\(key)", message: "\(error)")]
            }
        }
        let compiled = CompiledFlagSet(set)
        // The first set stored wins, so that a resolution from one a racing thread compiled stays valid.
        return compiledFlags.withLock { stored in
            if let done = stored[key] { return done }
            stored[key] = compiled
            return compiled
        }
    }

    private func cohorts() -> FlagSet {
        if let done = cohortSet.withLock({ $0 }) { return done }
        var set = FlagSet(name: index.name, version: index.version, updatedAt: nil, schema: index.schema)
        let cohorts = index.cohorts
        var writer = JSONWriter(reservingCapacity: cohorts.count + 64)
        writer.beginObject()
        writer.key("schema")
        writer.int(index.schema)
        writer.key("cohorts")
        writer.raw(cohorts)
        writer.endObject()
        do {
            let decoded = try FlagSet.decode(writer.bytes)
            set.cohorts = decoded.cohorts
            set.unreadableCohorts = decoded.unreadableCohorts
        } catch {
            // The document was validated before it was cached, so this means the cache file changed under us:
            // every flag using a cohort then reports PARSE_ERROR until the background decode replaces this source.
            set.readProblems = [Problem(path: "cohorts", message: "\(error)")]
        }
        cohortSet.withLock { $0 = set }
        return set
    }
}
