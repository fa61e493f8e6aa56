import FlagCore
import Foundation

/// What the debug menu (the `FlagDebugMenu` module) reads and changes of a client: the flags of the set in use, a
/// flag's value for a context, read without freezing or counting it, and the local overrides. `package`: an app uses
/// the menu, not these.
extension FlagClient {
    /// A flag's value as a session's first read would find it now, with the local override set for it.
    package struct DebugReading: Sendable {
        /// The value (the compiled-in default as JSON when the default is due, `.null` without one), the reason, the
        /// variant, any error and the set's version.
        package var detail: EvaluationDetail<JSONValue>
        /// The flag's local override, in force or ignored; `nil` when it has none.
        package var override: DebugOverride?
        /// Why `override` is ignored (its text is not a value of the key's type); `nil` when it is in force.
        package var overrideProblem: String?
    }

    /// A local override as it was set.
    package struct DebugOverride: Sendable, Equatable {
        /// The text, typed by the flag's type when read.
        package var text: String
        /// Where it was set: `setOverride` (the API, which the debug menu uses), `FILE:LINE` or
        /// `environment FLAG_…`.
        package var source: String
        /// Whether it was set through the API: only those can be changed from the app.
        package var isFromAPI: Bool
    }

    /// The version of the set in use; `nil` when only compiled-in defaults are served. Unlike `state`, it names the
    /// version while stale too.
    package var versionInUse: Int? { core.source?.version }

    /// Every flag of the set in use by key, with its definition, or `nil` for a flag this client cannot read.
    /// Archived flags are left out: clients no longer see them. Decodes each flag of a set not yet compiled whole.
    package func flagsInUse() -> [String: Flag?] {
        guard let source = core.source else { return [:] }
        var flags: [String: Flag?] = [:]
        for key in source.flagKeys {
            let flag = source.compiled(for: key).flag(key)
            if flag?.archived == true { continue }
            flags[key] = .some(flag)
        }
        return flags
    }

    /// What a session's first read of `key` would find now for `context`, in the same order (a local override
    /// that reads as the key's type, else the set in use, else the compiled-in default), without freezing, counting
    /// or logging anything.
    package func reading(_ key: AnyFlagKey, context: EvaluationContext) -> DebugReading {
        let fallback = key.defaultJSON ?? .null
        var reading = DebugReading(
            detail: EvaluationDetail(value: fallback, reason: .default), override: nil, overrideProblem: nil)
        if let all = core.overrides?.all, let raw = all.overrides[key.name] {
            reading.override = DebugOverride(
                text: raw.text, source: raw.source, isFromAPI: all.api.contains(key.name))
            switch OverridesParser.value(raw.text, as: key.type) {
            case .success(let value) where key.reads(value):
                reading.detail = EvaluationDetail(value: value, reason: .override)
                return reading
            case .success:
                reading.overrideProblem = "'\(raw.text)' is not a value of \(key.valueType)"
            case .failure(let error):
                reading.overrideProblem = error.message
            }
        }
        guard let source = core.source else {
            reading.detail = Evaluation.notReady.detail(default: fallback)
            return reading
        }
        let detail = source.evaluate(key.name, type: key.type, default: fallback, context: context, at: core.now())
        if detail.errorCode == nil, !key.reads(detail.value) {
            reading.detail = EvaluationDetail(
                value: fallback, reason: .error, errorCode: .typeMismatch,
                errorMessage: "flag '\(key.name)' served a value that does not convert to \(key.valueType)",
                version: detail.version)
        } else {
            reading.detail = detail
        }
        return reading
    }

    /// Every local override set, by flag key; empty when overrides are disabled.
    package var overridesSet: [String: DebugOverride] {
        guard let all = core.overrides?.all else { return [:] }
        var result: [String: DebugOverride] = [:]
        for (key, raw) in all.overrides {
            result[key] = DebugOverride(text: raw.text, source: raw.source, isFromAPI: all.api.contains(key))
        }
        return result
    }

    /// Sets the API override of the flag `name` to `value`, or clears it (`nil`), as `setOverride(_:to:)` does a
    /// key's: kept in the cache across restarts. Does nothing when overrides are disabled.
    package func setOverride(named name: String, to value: JSONValue?) {
        setOverride(name, to: value)
    }

    /// Reads an override's text as a value of `type`, as the client reads the overrides it is given; the message
    /// says what is wrong with the text.
    package static func overrideValue(_ text: String, as type: FlagType) -> Result<JSONValue, OverrideTextError> {
        OverridesParser.value(text, as: type).mapError { OverrideTextError(message: $0.message) }
    }

    /// Why an override's text is not a value of the flag's type.
    package struct OverrideTextError: Error, Sendable, Equatable {
        /// What is wrong, naming the text and the type expected.
        package var message: String
    }

    /// When the cache last stored a version of the set from the server (a download or a patch); `nil` without a
    /// cache, before the first, or when the cache cannot be read.
    package func lastStored() -> Date? {
        guard let cache = core.cache ?? sharedReader?.cache else { return nil }
        do {
            return try cache.storedAt(set: configuration.set)
        } catch {
            core.log(.warning, "could not read when the set was last stored: \(error)")
            return nil
        }
    }
}

extension FlagCache {
    /// When the cached document of `set` was last stored or patched.
    func storedAt(set: String) throws -> Date? {
        try database.read { db in
            try db.queryFirst("SELECT stored_at FROM flag_set_cache WHERE set_name = ?", [.text(set)]) { row in
                Date(timeIntervalSince1970: try row.double(0))
            }
        }
    }
}
