import FlagCore
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
    /// time; never throws.
    func evaluate(
        _ handle: FlagHandle, type: FlagType, default fallback: JSONValue, context: EvaluationContext,
        clock now: () -> Date
    ) -> EvaluationDetail<JSONValue>
    /// The killed flags with their kill values, when known without decoding the whole set; `nil` for the lazy form.
    var killed: [String: JSONValue]? { get }
}

extension EvaluationSource {
    /// Evaluates `key` as `type` at `now`, hashing the key for this call only.
    func evaluate(
        _ key: String, type: FlagType, default fallback: JSONValue, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<JSONValue> {
        evaluate(FlagHandle(key), type: type, default: fallback, context: context, clock: { now })
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

    func evaluate(
        _ handle: FlagHandle, type: FlagType, default fallback: JSONValue, context: EvaluationContext,
        clock now: () -> Date
    ) -> EvaluationDetail<JSONValue> {
        compiled.evaluate(handle, type: type, default: fallback, context: context, clock: now)
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

    func evaluate(
        _ handle: FlagHandle, type: FlagType, default fallback: JSONValue, context: EvaluationContext,
        clock now: () -> Date
    ) -> EvaluationDetail<JSONValue> {
        var detail: EvaluationDetail<JSONValue>
        if changed.contains(handle.key) || removed.contains(handle.key) {
            detail = overlay.evaluate(handle, type: type, default: fallback, context: context, clock: now)
        } else {
            detail = base.evaluate(handle, type: type, default: fallback, context: context, clock: now)
        }
        detail.version = version
        return detail
    }
}

/// A cached document evaluated flag by flag: only the header and the byte range of each flag are read at launch;
/// a flag is decoded and compiled (with the cohorts) at its first evaluation. The refresh loop replaces it with a
/// `CompiledSource` as soon as the whole set is compiled in the background.
final class LazySource: EvaluationSource {
    let index: DocumentIndex
    private let compiledFlags = LockedBox<[String: CompiledFlagSet]>([:])
    private let cohortSet = LockedBox<FlagSet?>(nil)

    init(index: DocumentIndex) {
        self.index = index
    }

    var version: Int { index.version }
    var killed: [String: JSONValue]? { nil }

    func evaluate(
        _ handle: FlagHandle, type: FlagType, default fallback: JSONValue, context: EvaluationContext,
        clock now: () -> Date
    ) -> EvaluationDetail<JSONValue> {
        compiled(for: handle.key).evaluate(handle, type: type, default: fallback, context: context, clock: now)
    }

    /// The set holding only `key` and the cohorts, compiled once.
    func compiled(for key: String) -> CompiledFlagSet {
        if let done = compiledFlags.withLockedValue({ $0[key] }) { return done }
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
        compiledFlags.withLockedValue { $0[key] = compiled }
        return compiled
    }

    private func cohorts() -> FlagSet {
        if let done = cohortSet.withLockedValue({ $0 }) { return done }
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
        cohortSet.withLockedValue { $0 = set }
        return set
    }
}
