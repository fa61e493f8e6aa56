import Foundation

/// An evaluation as plain numbers: which served value, variant name, reason and failure, as indexes into the
/// program that produced it. Nothing in it is reference-counted, so evaluating, returning and storing one copies a
/// few words; `CompiledFlagSet` turns it into an `EvaluationDetail` only when someone asks for the detail, and the
/// client turns it into the `Evaluation` a session freezes, without building the detail's strings.
package struct Outcome: Sendable {
    /// Why an evaluation fell back to the caller's default.
    package enum Failure: UInt8, Sendable {
        case none, missing, archived, broken, typeMismatch
    }

    /// The served value's index in the program's values; -1 when the caller's default is served.
    package var value: Int32
    /// The variant's index in the program's names; -1 for none.
    package var variant: Int32
    package var reason: ReasonCode
    package var failure: Failure
    /// The flag's position in its set (`KeyedMap.Position`); -1 when the set has no such flag.
    package var flag: Int32

    /// The outcome for a flag the set does not have.
    static let missing = Outcome(value: -1, variant: -1, reason: .default, failure: .missing, flag: -1)

    /// The error code a failure reports; `nil` when the evaluation served a value of the flag.
    package var errorCode: ErrorCodeValue? {
        switch failure {
        case .none: nil
        case .missing, .archived: .flagNotFound
        case .broken: .parseError
        case .typeMismatch: .typeMismatch
        }
    }
}

/// The number a client keeps a session's frozen value of the flag `key` under (FlagClient's `FlagSlots`): given to
/// each flag a flag requires when the set is compiled, so that evaluating a prerequisite finds what the session froze
/// for it by index, without looking its key up.
package typealias SessionSlots = @Sendable (_ key: String) -> Int

/// How evaluation asks a session what it froze for a flag that another flag requires: by the flag's `SessionSlots`
/// number, -1 when the set was compiled without them, and by its key where the number is not enough (-1, or a source
/// that knows flags by key). The key comes through a closure, so that the usual answer copies no string.
package typealias PrerequisiteLookup = (_ slot: Int, _ key: () -> String) -> FrozenPrerequisite

/// What a session froze for a flag that another flag requires, so that the two agree (docs/client.md, "Sessions").
package enum FrozenPrerequisite {
    /// The session has not read it: it is evaluated.
    case notFrozen
    case served(JSONValue)
    /// The session froze the caller's default for it (it was missing, broken, or of another type): it fails.
    case nothing
}

/// A `Reason` of this build as one byte.
package enum ReasonCode: UInt8, Sendable, CaseIterable {
    case `static`, `default`, targetingMatch, split, disabled, override, error, prerequisiteFailed

    /// The reason with its wire string.
    package var reason: Reason {
        switch self {
        case .static: .static
        case .default: .default
        case .targetingMatch: .targetingMatch
        case .split: .split
        case .disabled: .disabled
        case .override: .override
        case .error: .error
        case .prerequisiteFailed: .prerequisiteFailed
        }
    }

    /// The code of `reason`; `nil` for a reason this build does not produce.
    package init?(_ reason: Reason) {
        guard let code = Self.allCases.first(where: { $0.reason == reason }) else { return nil }
        self = code
    }
}

/// An `ErrorCode` of this build as one byte.
package enum ErrorCodeValue: UInt8, Sendable, CaseIterable {
    case flagNotFound, typeMismatch, parseError, providerNotReady, general

    /// The error code with its wire string.
    package var errorCode: ErrorCode {
        switch self {
        case .flagNotFound: .flagNotFound
        case .typeMismatch: .typeMismatch
        case .parseError: .parseError
        case .providerNotReady: .providerNotReady
        case .general: .general
        }
    }

    /// The code of `errorCode`; `nil` for a code this build does not produce.
    package init?(_ errorCode: ErrorCode) {
        guard let code = Self.allCases.first(where: { $0.errorCode == errorCode }) else { return nil }
        self = code
    }
}

extension CompiledFlagSet {
    /// Evaluates the flag a handle names as `type`, reading the time from `now` only when a step compares with it
    /// (`Program.resolve`), and returns the outcome as numbers (see `Outcome`). Never throws.
    package func outcome(
        _ handle: FlagHandle, type: FlagType, context: EvaluationContext, clock now: () -> Date,
        frozen: PrerequisiteLookup = { _, _ in .notFrozen }
    ) -> Outcome {
        guard let position = flags.position(of: handle.key, hash: handle.hash) else { return .missing }
        var seconds: Double?
        return flags[position].program.resolve(
            type: type, context: context, at: &seconds, clock: { now().timeIntervalSince1970 },
            cohorts: cohorts.program, position: position, set: self, frozen: frozen, trace: nil)
    }

    /// The value the flag `key` (numbered `slot`, hashed `hash`) serves `context` in its own type, as a prerequisite
    /// `depth` links down a chain, or the one a session froze for it; `nil` when it serves none of its own (missing,
    /// archived, broken) or the chain is deeper than validation allows (a set that reached a client without being
    /// validated). The time is read and kept as `Program.resolve` does.
    func prerequisiteValue(
        _ key: String, slot: Int, hash: UInt64, context: EvaluationContext, at seconds: inout Double?,
        clock: () -> Double, depth: Int, frozen: PrerequisiteLookup
    ) -> JSONValue? {
        switch frozen(slot, { key }) {
        case .served(let value): return value
        case .nothing: return nil
        case .notFrozen: break
        }
        guard depth <= Prerequisite.maxDepth, let position = flags.position(of: key, hash: hash) else {
            return nil
        }
        let program = flags[position].program
        let record = program.flags[0]
        guard record.state == .ready else { return nil }
        let outcome = program.resolve(
            type: program.types[record.type], context: context, at: &seconds, clock: clock, cohorts: cohorts.program,
            position: position, set: self, depth: depth, frozen: frozen, trace: nil)
        return outcome.value >= 0 ? program.values[outcome.value] : nil
    }

    /// Evaluates the flag a handle names as `type` at `now` into an outcome. Never throws.
    @inline(__always)
    func outcome(_ handle: FlagHandle, type: FlagType, context: EvaluationContext, at now: Date) -> Outcome {
        guard let position = flags.position(of: handle.key, hash: handle.hash) else { return .missing }
        return flags[position].program.resolve(
            type: type, context: context, at: now.timeIntervalSince1970, cohorts: cohorts.program,
            position: position, set: self, trace: nil)
    }

    /// The flag's value for a caller expecting `Value`, without the detail: no reason, variant or message is built
    /// (OpenFeature's `getBooleanValue` next to `getBooleanDetails`). `fallback` when the flag is missing, archived,
    /// broken, of another type, or serves a value that is not a `Value`. Never throws.
    @inlinable
    public func value<Value: FlagValue>(
        _ key: String, default fallback: Value, context: EvaluationContext, at now: Date
    ) -> Value {
        value(FlagHandle(key), default: fallback, context: context, at: now)
    }

    /// `value(_:default:context:at:)` for the flag a handle names: no hashing of the key.
    @inlinable
    public func value<Value: FlagValue>(
        _ handle: FlagHandle, default fallback: Value, context: EvaluationContext, at now: Date
    ) -> Value {
        guard let served = servedValue(handle, type: Value.flagType, context: context, at: now) else { return fallback }
        return Value(flagValue: served) ?? fallback
    }

    /// The value the flag serves a caller expecting `type`; `nil` when the caller's default is due.
    @usableFromInline
    func servedValue(_ handle: FlagHandle, type: FlagType, context: EvaluationContext, at now: Date) -> JSONValue? {
        guard let position = flags.position(of: handle.key, hash: handle.hash) else { return nil }
        let program = flags[position].program
        let outcome = program.resolve(
            type: type, context: context, at: now.timeIntervalSince1970, cohorts: cohorts.program,
            position: position, set: self, trace: nil)
        return outcome.value >= 0 ? program.values[outcome.value] : nil
    }

    /// The value `outcome` serves; `nil` when it serves the caller's default.
    @inline(__always)
    package func value(_ outcome: Outcome) -> JSONValue? {
        outcome.value >= 0 ? flags[outcome.flag].program.values[outcome.value] : nil
    }

    /// The variant name of `outcome`; `nil` on a failure.
    @inline(__always)
    package func variant(_ outcome: Outcome) -> String? {
        outcome.variant >= 0 ? flags[outcome.flag].program.names[outcome.variant] : nil
    }

    /// The message of a failed `outcome` for flag `key` asked for as `type`; `nil` when it did not fail.
    package func message(_ outcome: Outcome, key: String, type: FlagType) -> String? {
        guard outcome.flag >= 0 else {
            return outcome.failure == .missing ? "flag '\(key)' is not in set '\(name)' v\(version)" : nil
        }
        return flags[outcome.flag].program.message(outcome, key: key, type: type)
    }

    /// The public detail of `outcome`, with this set's version.
    @inline(__always)
    package func detail(
        _ outcome: Outcome, key: String, type: FlagType, default fallback: JSONValue
    ) -> EvaluationDetail<JSONValue> {
        guard let value = value(outcome) else {
            return EvaluationDetail(
                value: fallback, reason: outcome.reason.reason, errorCode: outcome.errorCode?.errorCode,
                errorMessage: message(outcome, key: key, type: type), version: version)
        }
        return EvaluationDetail(
            value: value, reason: outcome.reason.reason, variant: variant(outcome), version: version)
    }
}
