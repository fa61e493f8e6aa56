import FlagCore
import FlagLock
import Foundation

/// A frozen view of the flags for one unit: each flag keeps the value of its first read for the session's life,
/// except that a kill applies at once (SPEC §6.3). Cheap to create; safe to share between threads.
///
/// ```swift
/// let session = client.session(unitID: "u-42", attributes: ["country": "DE"])
/// if session.value(.newCheckout) { showNewCheckout() }
/// ```
public final class FlagSession: FeatureFlags, Sendable {
    /// The persisted session's id, or `nil` for a session that lives in memory only.
    public let id: String?
    /// Who the flags are evaluated for.
    public let context: EvaluationContext
    private let core: ClientCore
    /// The values read so far; a kill of a new version replaces them under this lock.
    let frozen: Locked<FrozenValues>

    init(core: ClientCore, id: String?, context: EvaluationContext, frozen: [String: EvaluationDetail<JSONValue>]) {
        self.core = core
        self.id = id
        self.context = context
        self.frozen = Locked(FrozenValues(frozen))
        core.register(ObjectIdentifier(self), OpenSession(id: id, frozen: self.frozen))
    }

    deinit {
        core.unregister(ObjectIdentifier(self))
    }

    /// The flag's value: its local override, its frozen value, or (at the first read) its evaluation. Never throws.
    @inlinable
    public func value<Value>(_ key: FlagKey<Value>) -> Value {
        // Inlined into the caller so that reading a Bool, Int, Double or String touches no generic metadata: the
        // lookup and the first evaluation are not generic.
        // An enum key's frozen read takes the case its first read found, by index: `init(rawValue:)` compares strings
        // and costs more than the rest of the read.
        if let cases = key.unretainedCases,
            let index = frozenCase(key.handle, slot: key.slot, type: key.type, default: key.defaultJSON, cases: cases)
        {
            return key.caseValues[index]
        }
        if key.isPrimitive,
            let json = frozenValue(
                key.handle, slot: key.slot, type: key.type, default: key.defaultJSON, cases: key.cases)
        {
            // Folds to a plain return when the caller's `Value` is `Bool` (this function is inlined and specialized),
            // without calling the key's conversion closure.
            if case .bool(let bool) = json, let value = bool as? Value { return value }
            return key.convert(json) ?? key.defaultValue
        }
        return detail(key).value
    }

    /// The flag's value with the reason, the variant or rule that decided, any error code and the set version.
    public func detail<Value>(_ key: FlagKey<Value>) -> EvaluationDetail<Value> {
        if let overrides = core.overrides, let overridden = overrides.detail(for: key) {
            // Not frozen: each read of an overridden flag is an evaluation the app made, counted as such.
            core.counter?.count(key.name, slot: key.slot, variant: nil, reason: .override, declaring: key.cases)
            return overridden
        }
        let evaluation = frozen.withLock { values in
            guard let frozen = values[key.slot] else {
                return freeze(
                    key.handle, slot: key.slot, type: key.type, default: key.defaultJSON, cases: key.cases,
                    in: &values)
            }
            guard frozen.uncounted else { return frozen }
            return countKillRead(key.name, slot: key.slot, cases: key.cases, in: &values) ?? frozen
        }
        if !key.isPrimitive { return decoded(evaluation, key) }
        return key.typed(evaluation.detail(default: key.defaultJSON))
    }

    /// The detail of a `Decodable` key's frozen `evaluation`: its value decodes once and is kept beside it.
    private func decoded<Value>(_ evaluation: Evaluation, _ key: FlagKey<Value>) -> EvaluationDetail<Value> {
        if let value = evaluation.decoded?.value as? Value {
            return evaluation.detail(default: key.defaultJSON).map { _ in value }
        }
        // Decoded outside the lock: it runs the caller's `Decodable` code, which may read this session.
        guard evaluation.error == nil, let served = evaluation.served, let value = key.convert(served) else {
            return key.typed(evaluation.detail(default: key.defaultJSON))
        }
        frozen.withLock { $0.keep(Evaluation.Decoded(value), decoding: served, at: key.slot) }
        return evaluation.detail(default: key.defaultJSON).map { _ in value }
    }

    /// An enum key's read: the index among `cases` of the case frozen in `slot` for that key, freezing the flag now at
    /// its first read, in one lock as `frozenValue` does; `nil` when a local override may apply, or when what is
    /// frozen is not a case this key found (another key of the flag froze it, a kill waits for its first read, the
    /// caller's default is due), which the read then takes from `frozenValue`.
    @usableFromInline
    func frozenCase(
        _ handle: FlagHandle, slot: Int, type: FlagType, default fallback: JSONValue, cases: Unmanaged<EnumCases>
    ) -> Int? {
        if let overrides = core.overrides, overrides.isActive { return nil }
        return frozen.withLock { values in
            if let index = values.caseIndex(at: slot, of: cases) { return index }
            guard !values.isFrozen(at: slot) else { return nil }
            // Lent, not taken: taking it retained and released it around the freeze, two atomic operations that were
            // most of what an enum key's first read cost over a `String` key's. The key holds it meanwhile.
            _ = cases._withUnsafeGuaranteedRef {
                freeze(handle, slot: slot, type: type, default: fallback, cases: $0, in: &values)
            }
            return values.caseIndex(at: slot, of: cases)
        }
    }

    /// The value frozen in `slot` for the flag `handle` names, freezing it now at its first read: the served value,
    /// or `fallback` (the key's default as JSON) when the caller's default is due; `nil` when a local override may
    /// apply (the caller then takes `detail`). `cases` are an enum key's.
    @usableFromInline
    func frozenValue(
        _ handle: FlagHandle, slot: Int, type: FlagType, default fallback: JSONValue, cases: EnumCases?
    ) -> JSONValue? {
        if let overrides = core.overrides, overrides.isActive { return nil }
        return frozen.withLock { values in
            // Only the value is copied out, so that a frozen read copies no other field of the evaluation.
            if let frozen = values.value(at: slot, default: fallback) { return frozen }
            if values.isUncountedKill(at: slot) {
                return countKillRead(handle.key, slot: slot, cases: cases, in: &values)?.served ?? fallback
            }
            return freeze(handle, slot: slot, type: type, default: fallback, cases: cases, in: &values).served
                ?? fallback
        }
    }

    /// Evaluates the flag `handle` names and freezes the result in `slot` of `values`, the session's values inside
    /// their lock: the lock is held from the lookup to the store, so that a flag is evaluated once per session and a
    /// kill waits for a first read in progress. Returns the evaluation frozen; `fallback` is the value a persisted
    /// session stores when the caller's default is due. Both `value` and `detail` freeze here. An enum key's
    /// `cases` turn a string that is not a case into `TYPE_MISMATCH` before it is frozen, counted and persisted, and
    /// the counter learns the values it knows.
    @discardableResult
    private func freeze(
        _ handle: FlagHandle, slot: Int, type: FlagType, default fallback: JSONValue, cases: EnumCases?,
        in values: inout FrozenValues
    ) -> Evaluation {
        let (source, skew) = core.sourceAndSkew()
        guard let source else {
            let notReady = Evaluation.notReady
            values[slot] = notReady
            core.counter?.count(
                handle.key, slot: slot, variant: notReady.variant, reason: notReady.reason, declaring: cases)
            return notReady
        }
        // The clock is read only for a flag whose value can depend on the time. A flag it requires that the session
        // froze keeps its frozen value here: what the session showed for it and what it decides now agree.
        let evaluation = source.evaluation(
            handle, type: type, context: context, frozen: { values.prerequisite(slot: $0, key: $1) },
            clock: { self.core.dependencies.now().addingTimeInterval(skew) })
        guard let cases else {
            keep(evaluation, of: handle.key, slot: slot, default: fallback, in: &values)
            return evaluation
        }
        switch cases.match(evaluation.served) {
        case .listed(let index):
            let found = EnumCase(cases: cases, index: index)
            keep(evaluation, of: handle.key, slot: slot, default: fallback, declaring: cases, case: found, in: &values)
            return evaluation
        case .unlisted:
            keep(evaluation, of: handle.key, slot: slot, default: fallback, declaring: cases, in: &values)
            return evaluation
        case .notACase(let raw):
            let mismatch = cases.mismatch(evaluation, serving: raw, key: handle.key)
            keep(mismatch, of: handle.key, slot: slot, default: fallback, declaring: cases, in: &values)
            return mismatch
        }
    }

    /// Counts, persists and freezes `evaluation`, the first read of the flag `key` in `slot`, with `enumCase`, the
    /// case an enum key with `cases` found in it.
    private func keep(
        _ evaluation: Evaluation, of key: String, slot: Int, default fallback: JSONValue,
        declaring cases: EnumCases? = nil, case enumCase: EnumCase? = nil, in values: inout FrozenValues
    ) {
        core.counter?.count(key, slot: slot, variant: evaluation.variant, reason: evaluation.reason, declaring: cases)
        // Queued in lock order, so that a persisted session's writes follow its values' order.
        if let id { core.persist(sessionID: id, values: [(key, evaluation.detail(default: fallback))]) }
        values.freeze(evaluation, case: enumCase, at: slot)
    }

    /// Counts the session's first read of the kill value a kill put in `slot` of `values`, and returns it: the kill
    /// changed what the session serves, so the read is an evaluation, though nothing was evaluated. Later reads are
    /// frozen reads. An enum key's `cases` check the kill value as they check an evaluation.
    private func countKillRead(
        _ key: String, slot: Int, cases: EnumCases?, in values: inout FrozenValues
    ) -> Evaluation? {
        guard var killed = values[slot]?.counted() else { return nil }
        var found: EnumCase?
        switch cases?.match(killed.served) {
        case .listed(let index)?: found = cases.map { EnumCase(cases: $0, index: index) }
        case .notACase(let raw)?: killed = cases?.mismatch(killed, serving: raw, key: key) ?? killed
        case .unlisted?, nil: break
        }
        values.freeze(killed, case: found, at: slot)
        core.counter?.count(key, slot: slot, variant: killed.variant, reason: killed.reason, declaring: cases)
        return killed
    }

    /// Replaces the values of flags killed in a new set (read or not yet read) in an open session by their kill
    /// values.
    static func applyKills(_ killed: [Kill], version: Int, to session: OpenSession, core: ClientCore) {
        var changed: [(key: String, detail: EvaluationDetail<JSONValue>)] = []
        let counting = core.counter != nil
        session.frozen.withLock { values in
            for kill in killed where values[kill.slot]?.killed != true {
                let evaluation = Evaluation.kill(kill.value, version: version, uncounted: counting)
                values[kill.slot] = evaluation
                changed.append((kill.name, evaluation.detail(default: kill.value)))
            }
        }
        if let id = session.id { core.persist(sessionID: id, values: changed) }
    }

    /// A flag killed in a new set: its name, its slot and the value it serves.
    struct Kill {
        let name: String
        let slot: Int
        let value: JSONValue
    }
}
