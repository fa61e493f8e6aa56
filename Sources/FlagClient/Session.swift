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
    private let frozen: Locked<FrozenValues>

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
        if key.isPrimitive,
            let json = frozenValue(key.handle, slot: key.slot, type: key.type, default: key.defaultJSON)
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
        if let overrides = core.overrides, let overridden = overrides.detail(for: key) { return overridden }
        let decode: ((JSONValue) -> (any Sendable)?)? = key.isPrimitive ? nil : { key.convert($0) }
        let evaluation =
            frozen.withLock { $0[key.slot] }
            ?? freeze(key.handle, slot: key.slot, type: key.type, default: key.defaultJSON, decode: decode)
        if !key.isPrimitive, let value = evaluation.decoded as? Value {
            return evaluation.detail(default: key.defaultJSON).map { _ in value }
        }
        return key.typed(evaluation.detail(default: key.defaultJSON))
    }

    /// The value frozen in `slot` for the flag `handle` names, freezing it now at its first read: the served value,
    /// or `fallback` (the key's default as JSON) when the caller's default is due; `nil` when a local override may
    /// apply (the caller then takes `detail`).
    @usableFromInline
    func frozenValue(_ handle: FlagHandle, slot: Int, type: FlagType, default fallback: JSONValue) -> JSONValue? {
        if let overrides = core.overrides, overrides.isActive { return nil }
        // The value is copied out inside the lock, so that a frozen read does not retain the evaluation.
        if let frozen = frozen.withLock({ $0[slot].map { $0.served ?? fallback } }) { return frozen }
        return freeze(handle, slot: slot, type: type, default: fallback, decode: nil).served ?? fallback
    }

    /// Evaluates the flag `handle` names and freezes the result in `slot` unless another thread (or a kill) froze
    /// the flag meanwhile; returns the evaluation that stays (the first stored wins). `decode` decodes the value for
    /// a `Decodable` key; `nil` for the primitive types; `fallback` is the value a persisted session stores when the
    /// caller's default is due. Both `value` and `detail` freeze here.
    private func freeze(
        _ handle: FlagHandle, slot: Int, type: FlagType, default fallback: JSONValue,
        decode: ((JSONValue) -> (any Sendable)?)?
    ) -> Evaluation {
        let (source, skew) = core.sourceAndSkew()
        var evaluation = Evaluation.notReady
        if let source {
            // The clock is read only for a flag whose value can depend on the time.
            evaluation = source.evaluation(handle, type: type, context: context) {
                self.core.dependencies.now().addingTimeInterval(skew)
            }
            // Decoded before the lock is taken: it runs the caller's `Decodable` code, which may read this session.
            if let decode, let served = evaluation.served, let decoded = decode(served) {
                evaluation = evaluation.decoding(decoded)
            }
        }
        let (kept, inserted) = frozen.withLock { values in
            if let earlier = values[slot] { return (earlier, false) }
            values[slot] = evaluation
            return (evaluation, true)
        }
        if inserted, let id, source != nil {
            core.persist(sessionID: id, values: [(handle.key, kept.detail(default: fallback))])
        }
        return kept
    }

    /// Replaces the values of flags killed in a new set (read or not yet read) in an open session by their kill
    /// values.
    static func applyKills(_ killed: [Kill], version: Int, to session: OpenSession, core: ClientCore) {
        var changed: [(key: String, detail: EvaluationDetail<JSONValue>)] = []
        session.frozen.withLock { values in
            for kill in killed where values[kill.slot]?.killed != true {
                let evaluation = Evaluation.kill(kill.value, version: version)
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
