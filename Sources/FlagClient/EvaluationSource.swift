import FlagCore
import FlagLock
import Foundation

/// Where evaluations come from: one flag set, in whichever form is ready.
///
/// Three forms, because the speed targets pull apart: a whole `CompiledFlagSet` is the fastest to evaluate but is
/// too slow to build from a large document for the first value at launch (lazy, per flag) and for a one-flag patch
/// (an overlay of the changed flags over the previous set).
///
/// Class-bound: copying the source out of the client's lock at every first read is then one retain, where a copy of
/// an unconstrained existential goes through its value witnesses.
protocol EvaluationSource: AnyObject, Sendable {
    /// The set's version.
    var version: Int { get }
    /// The compiled set that evaluates the flag `key`; it holds the flag and every cohort of this version.
    func compiled(for key: String) -> CompiledFlagSet
    /// The killed flags with their kill values, when known without decoding the whole set; `nil` for the lazy form.
    var killed: [String: JSONValue]? { get }
    /// The key of every flag of the set, readable or not: for the debug menu and a read-only client's search for
    /// kills, the readers that list a set (evaluation looks flags up one at a time).
    var flagKeys: Set<String> { get }
    /// Evaluates the flag `handle` names as `type`, reading `now` only for a flag whose value can depend on the
    /// time, and taking what a session `frozen` for the flags it requires; never throws. The result carries this
    /// source's version. Every form but the kills of waiting sets over the set in use (`KilledOverSource`) evaluates
    /// as the extension below does.
    func evaluation(
        _ handle: FlagHandle, type: FlagType, context: EvaluationContext, frozen: PrerequisiteLookup,
        clock now: () -> Date
    ) -> Evaluation
}

extension EvaluationSource {
    func evaluation(
        _ handle: FlagHandle, type: FlagType, context: EvaluationContext, frozen: PrerequisiteLookup,
        clock now: () -> Date
    ) -> Evaluation {
        evaluation(in: compiled(for: handle.key), handle, type: type, context: context, frozen: frozen, clock: now)
    }

    /// The evaluation of `handle` in `compiled`, one of this source's compiled sets, carrying this source's version.
    func evaluation(
        in compiled: CompiledFlagSet, _ handle: FlagHandle, type: FlagType, context: EvaluationContext,
        frozen: PrerequisiteLookup, clock now: () -> Date
    ) -> Evaluation {
        let outcome = compiled.outcome(handle, type: type, context: context, clock: now, frozen: frozen)
        let error = outcome.errorCode
        return Evaluation(
            served: compiled.value(outcome), reason: outcome.reason, variant: compiled.variant(outcome), error: error,
            message: error == nil ? nil : compiled.message(outcome, key: handle.key, type: type), version: version)
    }

    /// Evaluates `key` as `type` at `now` into a detail, hashing the key for this call only.
    func evaluate(
        _ key: String, type: FlagType, default fallback: JSONValue, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<JSONValue> {
        evaluation(FlagHandle(key), type: type, context: context, frozen: { _, _ in .notFrozen }, clock: { now })
            .detail(default: fallback)
    }
}

/// One flag's evaluation: what a session freezes, what its reads return and what its detail is built from.
/// A value stored in the session's array itself, so that freezing a flag allocates nothing of its own; a kill
/// replaces it (SPEC §6.3).
struct Evaluation: Sendable {
    /// The served value; `nil` when the caller's default is due (`error` says why).
    let served: JSONValue?
    let reason: ReasonCode
    let variant: String?
    let error: ErrorCodeValue?
    let message: String?
    /// The version of the set it came from; `nil` when no set was used.
    let version: Int?
    /// Set by a kill: a later restore does not undo it in this session.
    let killed: Bool
    /// Set by a kill while evaluations are counted, until a read serves the kill value: that first read counts as an
    /// evaluation (`DISABLED`), though nothing was evaluated.
    let uncounted: Bool
    /// The served value decoded for a `Decodable` key, so that it decodes once.
    let decoded: Decoded?

    init(
        served: JSONValue?, reason: ReasonCode, variant: String? = nil, error: ErrorCodeValue? = nil,
        message: String? = nil, version: Int?, killed: Bool = false, uncounted: Bool = false, decoded: Decoded? = nil
    ) {
        self.served = served
        self.reason = reason
        self.variant = variant
        self.error = error
        self.message = message
        self.version = version
        self.killed = killed
        self.uncounted = uncounted
        self.decoded = decoded
    }

    /// What a read finds before any set is available: the caller's default.
    static var notReady: Evaluation {
        Evaluation(
            served: nil, reason: .default, error: .providerNotReady,
            message: "no flag set yet: serving the compiled-in default", version: nil)
    }

    /// The kill value of a flag killed in set `version`; `uncounted` when its first read is to be counted.
    static func kill(_ value: JSONValue, version: Int, uncounted: Bool = false) -> Evaluation {
        Evaluation(
            served: value, reason: .disabled, variant: "kill", version: version, killed: true, uncounted: uncounted)
    }

    /// The evaluation of a persisted detail; `nil` when its reason or error code is not one this build gives (the
    /// flag is then evaluated afresh, as for a persisted value that no longer parses).
    init?(detail: EvaluationDetail<JSONValue>) {
        guard let reason = ReasonCode(detail.reason) else { return nil }
        var error: ErrorCodeValue?
        if let code = detail.errorCode {
            guard let known = ErrorCodeValue(code) else { return nil }
            error = known
        }
        self.init(
            served: error == nil ? detail.value : nil, reason: reason, variant: detail.variant, error: error,
            message: detail.errorMessage, version: detail.version, killed: reason == .disabled)
    }

    /// This evaluation with `decoded` as its decoded value.
    func decoding(_ decoded: Decoded) -> Evaluation {
        Evaluation(
            served: served, reason: reason, variant: variant, error: error, message: message, version: version,
            killed: killed, uncounted: uncounted, decoded: decoded)
    }

    /// This evaluation, its first read counted.
    func counted() -> Evaluation {
        Evaluation(
            served: served, reason: reason, variant: variant, error: error, message: message, version: version,
            killed: killed, decoded: decoded)
    }

    /// A decoded value in a box of its own: an `any Sendable` stored inline would make every copy of an evaluation
    /// go through the value's witness table, even in a session that reads only Bool flags.
    final class Decoded: Sendable {
        let value: any Sendable

        init(_ value: any Sendable) {
            self.value = value
        }
    }

    /// The public detail, with `fallback` as the value when the caller's default is due.
    func detail(default fallback: JSONValue) -> EvaluationDetail<JSONValue> {
        EvaluationDetail(
            value: served ?? fallback, reason: reason.reason, variant: variant, errorCode: error?.errorCode,
            errorMessage: message, version: version)
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

    var flagKeys: Set<String> { Set(compiled.flagSet.flags.keys).union(compiled.flagSet.unreadableFlags.keys) }

    func compiled(for key: String) -> CompiledFlagSet { compiled }
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

    /// The overlay for a flag the patch changed or removed, the base for every other.
    func compiled(for key: String) -> CompiledFlagSet {
        changed.contains(key) || removed.contains(key) ? overlay : base.compiled(for: key)
    }

    var flagKeys: Set<String> { base.flagKeys.union(changed).subtracting(removed) }
}

/// A cached document evaluated flag by flag: only the header and the byte range of each flag are read at launch;
/// a flag is decoded and compiled (with the cohorts) at its first evaluation. With trusted keys the cache holds the
/// signed document and the signed patches applied since: a flag a patch changed is read from the last patch that
/// names it. The refresh loop replaces it with a `CompiledSource` as soon as the whole set is compiled in the
/// background.
final class LazySource: EvaluationSource {
    let index: DocumentIndex
    /// The patches applied since the document, in order.
    let patches: [SetPatch]
    private let compiledFlags = Locked<[String: CompiledFlagSet]>([:])
    private let cohortSet = Locked<FlagSet?>(nil)

    /// The killed flags, when the one who made this source looked for them (`withKills`); `nil` at launch.
    let killed: [String: JSONValue]?

    init(index: DocumentIndex, patches: [SetPatch] = [], killed: [String: JSONValue]? = nil) {
        self.index = index
        self.patches = patches
        self.killed = killed
    }

    var flagKeys: Set<String> {
        var keys = Set(index.layout.flagRanges.keys)
        for patch in patches {
            keys.formUnion(patch.flags.keys)
            keys.subtract(patch.removedFlags)
        }
        return keys
    }

    /// This source with its killed flags known, so that publishing it applies them to open sessions at once: for a
    /// read-only client, which puts the sets the app stored in use lazily and has no background compile after.
    /// Only the flags whose bytes say `"killed": true` are decoded.
    func withKills() -> LazySource {
        var killed: [String: JSONValue] = [:]
        for key in flagKeys {
            guard let bytes = flagBytes(key), Self.mayBeKilled(bytes) else { continue }
            do {
                if let flag = try Flag.decode(bytes, key: key).flag, flag.killed, !flag.archived {
                    killed[key] = flag.killValue ?? flag.defaultValue
                }
            } catch {
                // Handled where the flag is read: its evaluation reports the parse error.
                continue
            }
        }
        return LazySource(index: index, patches: patches, killed: killed)
    }

    /// Whether `bytes` hold a `"killed"` member whose value is `true` (spaces allowed around the colon); a flag
    /// without one is not killed. A match inside another member only costs a decode.
    static func mayBeKilled(_ bytes: [UInt8]) -> Bool {
        let name = Array("\"killed\"".utf8)
        let space: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        var start = 0
        while start + name.count <= bytes.count {
            guard bytes[start] == name[0], bytes[start..<start + name.count].elementsEqual(name) else {
                start += 1
                continue
            }
            var position = start + name.count
            while position < bytes.count, space.contains(bytes[position]) { position += 1 }
            if position < bytes.count, bytes[position] == UInt8(ascii: ":") {
                position += 1
                while position < bytes.count, space.contains(bytes[position]) { position += 1 }
                if bytes[position...].starts(with: Array("true".utf8)) { return true }
            }
            start += 1
        }
        return false
    }

    var version: Int { patches.last?.version ?? index.version }

    /// The bytes of flag `key` in the set this source serves: from the last patch that changed or removed it, else
    /// from the document.
    private func flagBytes(_ key: String) -> [UInt8]? {
        for patch in patches.reversed() {
            if let bytes = patch.flags[key] { return bytes }
            if patch.removedFlags.contains(key) { return nil }
        }
        return index.flag(key)
    }

    /// The set holding only `key`, the flags it requires (transitively) and the cohorts, compiled once and kept for
    /// this source's life.
    func compiled(for key: String) -> CompiledFlagSet {
        if let done = compiledFlags.withLock({ $0[key] }) { return done }
        var set = cohorts()
        set.add([key]) { key, set in
            guard let bytes = flagBytes(key) else { return }
            do {
                let (flag, problems) = try Flag.decode(bytes, key: key)
                if let flag { set.flags[key] = flag } else { set.unreadableFlags[key] = problems }
            } catch {
                set.unreadableFlags[key] = [Problem(path: "flags.\(key)", message: "\(error)")]
            }
        }
        let compiled = CompiledFlagSet(set, sessionSlots: FlagSlots.slot)
        // The first set stored wins, so that every evaluation of `key` comes from one compiled set.
        return compiledFlags.withLock { stored in
            if let done = stored[key] { return done }
            stored[key] = compiled
            return compiled
        }
    }

    private func cohorts() -> FlagSet {
        if let done = cohortSet.withLock({ $0 }) { return done }
        var set = FlagSet(name: index.name, version: version, updatedAt: nil, schema: index.schema)
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
        // Patches that touch cohorts are rare; only they pay for reading their items here.
        for patch in patches where !patch.cohorts.isEmpty || !patch.removedCohorts.isEmpty {
            set.applyCohorts(of: patch.changes(), removing: patch.removedCohorts)
        }
        cohortSet.withLock { $0 = set }
        return set
    }
}
