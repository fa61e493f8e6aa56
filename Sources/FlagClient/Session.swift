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
    private let frozen: Locked<FrozenTable>

    init(core: ClientCore, id: String?, context: EvaluationContext, frozen: [String: EvaluationDetail<JSONValue>]) {
        self.core = core
        self.id = id
        self.context = context
        self.frozen = Locked(FrozenTable(frozen))
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
        if key.isPrimitive {
            switch frozenOrFirstValue(key.handle, hash: key.nameHash, type: key.type, default: key.defaultJSON) {
            case .value(let json): return key.convert(json) ?? key.defaultValue
            // Folds to a plain return when the caller's `Value` is `Bool` (this function is inlined and specialized).
            case .bool(let bool): return bool as? Value ?? key.convert(.bool(bool)) ?? key.defaultValue
            case .fallback: return key.defaultValue
            case .missing: break
            }
        }
        return detail(key).value
    }

    /// The flag's value with the reason, the variant or rule that decided, any error code and the set version.
    public func detail<Value>(_ key: FlagKey<Value>) -> EvaluationDetail<Value> {
        if let overrides = core.overrides, let overridden = overrides.detail(for: key) { return overridden }
        let typed: ((JSONValue) -> Annex?)? = key.isPrimitive ? nil : { key.convert($0).map { Annex(typed: $0) } }
        let frozen = frozenEntry(key.handle, hash: key.nameHash, type: key.type, default: key.defaultJSON, typed: typed)
        if !key.isPrimitive, frozen.error == nil, let value = frozen.annex?.typed as? Value {
            return frozen.detail.map { _ in value }
        }
        return key.typed(frozen.detail)
    }

    /// The frozen value of `name` (freezing it now at its first read); `.missing` when a local override may apply.
    @usableFromInline
    func frozenOrFirstValue(
        _ handle: FlagHandle, hash: Int, type: FlagType, default fallback: JSONValue
    ) -> FrozenLookup {
        if let overrides = core.overrides, overrides.isActive { return .missing }
        let found = frozen.withLock { $0.find(handle.key, hash: hash) }
        if case .missing = found { return firstValue(handle, hash: hash, type: type, default: fallback) }
        return found
    }

    /// The first read of a primitive flag. Out of line so that the frozen read above stays small: inlined, it cost
    /// every frozen read 6 instructions (of ~140).
    @inline(never)
    private func firstValue(
        _ handle: FlagHandle, hash: Int, type: FlagType, default fallback: JSONValue
    ) -> FrozenLookup {
        freeze(handle, hash: hash, type: type, default: fallback, typed: nil) { table, position in
            table.lookup(at: position)
        }
    }

    /// The frozen entry of the flag `handle` names, evaluating and freezing it at the first read.
    private func frozenEntry(
        _ handle: FlagHandle, hash: Int, type: FlagType, default fallback: JSONValue,
        typed: ((JSONValue) -> Annex?)?
    ) -> Frozen {
        if let entry = frozen.withLock({ $0.frozen(handle.key, hash: hash) }) { return entry }
        return freeze(handle, hash: hash, type: type, default: fallback, typed: typed) { table, position in
            table.frozen(at: position)
        }
    }

    /// Evaluates the flag `handle` names and freezes the result unless another thread (or a kill) froze the flag
    /// meanwhile (the first stored value wins); `read` gets the entry that stays, inside the lock. `typed` decodes
    /// the value for a `Decodable` key; `nil` for the primitive types.
    private func freeze<Result>(
        _ handle: FlagHandle, hash: Int, type: FlagType, default fallback: JSONValue,
        typed: ((JSONValue) -> Annex?)?, read: (FrozenTable, Int) -> Result
    ) -> Result {
        let name = handle.key
        let (source, skew) = core.sourceAndSkew()
        guard let source else {
            let entry = Frozen(
                value: fallback, reason: .default, error: .providerNotReady,
                message: "no flag set yet: serving the compiled-in default", version: nil)
            return frozen.withLock { table in
                let position = table.insertIfAbsent(name, hash: hash) { $0 = entry }.position
                return read(table, position)
            }
        }
        // The clock is read only for a flag whose value can depend on the time; the closure captures only `self`
        // (copying `core.dependencies.now` out first retained and released it).
        let resolution = source.resolve(handle, type: type, context: context) {
            self.core.dependencies.now().addingTimeInterval(skew)
        }
        let version = source.version
        // Decoded before the lock is taken: it runs the caller's `Decodable` code, which may read this session.
        var decoded: Annex?
        if let typed, resolution.outcome.errorCode == nil { decoded = typed(resolution.value(default: fallback)) }
        let (result, persisted) = frozen.withLock { table in
            let (position, inserted) = table.insertIfAbsent(name, hash: hash) {
                $0.set(resolution, key: name, type: type, default: fallback, version: version, typed: decoded)
            }
            return (read(table, position), inserted && id != nil ? table.frozen(at: position).detail : nil)
        }
        // The resolution reads the source's compiled set without retaining it: the source lives until here.
        _fixLifetime(source)
        if let persisted, let id {
            core.persist(sessionID: id, values: [(name, persisted)])
        }
        return result
    }

    /// Replaces the values of flags killed in a new set (read or not yet read) in an open session by their kill
    /// values.
    static func applyKills(_ killed: [String: JSONValue], version: Int, to session: OpenSession, core: ClientCore) {
        var changed: [(key: String, detail: EvaluationDetail<JSONValue>)] = []
        session.frozen.withLock { values in
            for (key, value) in killed where values[key]?.killed != true {
                let entry = Frozen(value: value, reason: .disabled, variant: "kill", version: version, killed: true)
                values[key] = entry
                changed.append((key, entry.detail))
            }
        }
        if let id = session.id { core.persist(sessionID: id, values: changed) }
    }
}
