import FlagCore
import Foundation

/// A frozen view of the flags for one unit: each flag keeps the value of its first read for the session's life,
/// except that a kill applies at once (SPEC §6.3). Cheap to create; safe to share between threads.
///
/// ```swift
/// let session = client.session(unitID: "u-42", attributes: ["country": "DE"])
/// if session.value(.newCheckout) { showNewCheckout() }
/// ```
public final class FlagSession: FeatureFlags, Sendable {
    struct Frozen: Sendable {
        var detail: EvaluationDetail<JSONValue>
        /// The decoded value of a `Decodable` key, kept so that it is decoded once.
        var typed: (any Sendable)?
        /// Set by a kill: a later restore does not undo it in this session.
        var killed = false
    }

    /// The frozen details, and beside them just the values, so that a frozen read copies one small enum.
    struct FrozenTable: Sendable {
        private(set) var details: [String: Frozen] = [:]
        private(set) var values = FrozenValues()

        init(_ details: [String: EvaluationDetail<JSONValue>]) {
            for (name, detail) in details { self[name] = Frozen(detail: detail, killed: detail.reason == .disabled) }
        }

        subscript(name: String) -> Frozen? {
            get { details[name] }
            set {
                details[name] = newValue
                guard let newValue else {
                    values.set(name, .missing)
                    return
                }
                values.set(name, newValue.detail.errorCode == nil ? .value(newValue.detail.value) : .fallback)
            }
        }
    }

    /// The persisted session's id, or `nil` for a session that lives in memory only.
    public let id: String?
    /// Who the flags are evaluated for.
    public let context: EvaluationContext
    private let core: ClientCore
    private let frozen: LockedBox<FrozenTable>

    init(core: ClientCore, id: String?, context: EvaluationContext, frozen: [String: EvaluationDetail<JSONValue>]) {
        self.core = core
        self.id = id
        self.context = context
        self.frozen = LockedBox(FrozenTable(frozen))
        core.register(self)
    }

    deinit {
        core.unregister(ObjectIdentifier(self))
    }

    /// The flag's value: its local override, its frozen value, or (at the first read) its evaluation. Never throws.
    @inlinable
    public func value<Value>(_ key: FlagKey<Value>) -> Value {
        // Inlined into the caller so that a frozen read of a Bool, Int, Double or String touches no generic
        // metadata: the lookup itself is not generic.
        if key.isPrimitive {
            switch frozenValue(key.name, hash: key.nameHash) {
            case .value(let json): return key.convert(json) ?? key.defaultValue
            case .fallback: return key.defaultValue
            case .missing: break
            }
        }
        return readValue(key)
    }

    /// The frozen value of the flag `name`, without copying the rest of its detail.
    @usableFromInline
    func frozenValue(_ name: String, hash: Int) -> FrozenLookup {
        if let overrides = core.overrides, overrides.isActive { return .missing }
        return frozen.withLockedValue { $0.values.find(name, hash: hash) }
    }

    /// The full path of `value(_:)`: overrides, then the frozen detail or a first evaluation.
    @usableFromInline
    func readValue<Value>(_ key: FlagKey<Value>) -> Value {
        if let overrides = core.overrides, let overridden = overrides.detail(for: key) { return overridden.value }
        return freeze(key).value
    }

    /// The flag's value with the reason, the variant or rule that decided, any error code and the set version.
    public func detail<Value>(_ key: FlagKey<Value>) -> EvaluationDetail<Value> {
        if let overrides = core.overrides, let overridden = overrides.detail(for: key) { return overridden }
        return freeze(key)
    }

    /// The frozen detail of `key`, evaluating and freezing it at the first read.
    private func freeze<Value>(_ key: FlagKey<Value>) -> EvaluationDetail<Value> {
        if let entry = frozen.withLockedValue({ $0[key.name] }) { return typed(entry, key) }
        let (source, now) = core.sourceAndTime()
        let detail: EvaluationDetail<JSONValue>
        if let source {
            detail = source.evaluate(key.name, type: key.type, default: key.defaultJSON, context: context, at: now)
        } else {
            detail = EvaluationDetail(
                value: key.defaultJSON, reason: .default, errorCode: .providerNotReady,
                errorMessage: "no flag set yet: serving the compiled-in default")
        }
        var entry = Frozen(detail: detail)
        if !key.isPrimitive, detail.errorCode == nil { entry.typed = key.convert(detail.value) }
        // Another thread (or a kill) may have frozen the flag meanwhile: the first stored value wins.
        let (stored, inserted) = frozen.withLockedValue { values -> (Frozen, Bool) in
            if let existing = values[key.name] { return (existing, false) }
            values[key.name] = entry
            return (entry, true)
        }
        if inserted, let id, detail.errorCode != .providerNotReady {
            core.persist(sessionID: id, values: [(key.name, detail)])
        }
        return typed(stored, key)
    }

    private func typed<Value>(_ entry: Frozen, _ key: FlagKey<Value>) -> EvaluationDetail<Value> {
        if !key.isPrimitive, entry.detail.errorCode == nil {
            if let value = entry.typed as? Value { return entry.detail.map { _ in value } }
        }
        return key.typed(entry.detail)
    }

    /// Replaces the values of flags killed in a new set (read or not yet read) by their kill values.
    func applyKills(_ killed: [String: JSONValue], version: Int) {
        var changed: [(key: String, detail: EvaluationDetail<JSONValue>)] = []
        frozen.withLockedValue { values in
            for (key, value) in killed where values[key]?.killed != true {
                let detail = EvaluationDetail(value: value, reason: .disabled, variant: "kill", version: version)
                values[key] = Frozen(detail: detail, killed: true)
                changed.append((key, detail))
            }
        }
        if let id { core.persist(sessionID: id, values: changed) }
    }
}
