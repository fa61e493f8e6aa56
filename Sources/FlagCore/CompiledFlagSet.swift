import Foundation

/// A flag set prepared for evaluation: cohorts resolved to indexes, operands parsed, regular expressions and
/// bucketing salts compiled once. Immutable and safe to share between threads.
///
/// ```swift
/// let compiled = CompiledFlagSet(try FlagSet.decode(bytes))
/// let detail = compiled.evaluate("new-checkout", default: false,
///                                context: EvaluationContext(unitID: "u-42"), at: Date())
/// ```
public final class CompiledFlagSet: Sendable {
    /// The set this was compiled from.
    public let flagSet: FlagSet
    /// Every problem found in the set: what `lint` prints and what makes a write be rejected.
    /// A flag with a problem of its own (or in a cohort it uses) evaluates to the caller's default with
    /// `PARSE_ERROR`; every other flag evaluates normally.
    public let problems: [Problem]
    let program: Program

    /// Compiles a set; never fails: problems are collected in `problems` and confined to the flags they touch.
    public init(_ set: FlagSet) {
        var compiler = Compiler(set: set)
        let (flags, cohorts) = compiler.run()
        self.flagSet = set
        self.program = Program(ProgramBuilder(flags: flags, cohorts: cohorts))
        self.problems = compiler.problems
    }

    /// The set's version.
    public var version: Int { flagSet.version }

    /// Evaluates a flag for a caller expecting `Value`; never throws (SPEC §2).
    @inlinable
    public func evaluate<Value: FlagValue>(
        _ key: String, default fallback: Value, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<Value> {
        var detail = evaluate(key, type: Value.flagType, default: fallback.flagValue, context: context, at: now)
        return typed(&detail, default: fallback, key: key)
    }

    /// `detail` as a `Value`, or the fallback with `TYPE_MISMATCH` when the served value is not one.
    @inlinable
    func typed<Value: FlagValue>(
        _ detail: inout EvaluationDetail<JSONValue>, default fallback: Value, key: String
    ) -> EvaluationDetail<Value> {
        guard let value = Value(flagValue: detail.value) else {
            return EvaluationDetail(
                value: fallback, reason: .error, errorCode: .typeMismatch,
                errorMessage: "flag '\(key)' served a value that is not a \(Value.flagType.name)", version: version)
        }
        return Self.retyped(&detail, value)
    }

    /// `detail` with `value` for its value, its optional strings moved rather than copied: copying them through
    /// the generic detail cost a retain, a release and a value-witness call each.
    @inlinable
    static func retyped<Value: Sendable>(
        _ detail: inout EvaluationDetail<JSONValue>, _ value: Value
    ) -> EvaluationDetail<Value> {
        EvaluationDetail(
            value: value, reason: detail.reason, variant: detail.variant.take(), errorCode: detail.errorCode.take(),
            errorMessage: detail.errorMessage.take(), version: detail.version)
    }

    /// Evaluates a flag for a caller expecting `type`, with `fallback` as the compiled-in default.
    public func evaluate(
        _ key: String, type: FlagType, default fallback: JSONValue, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<JSONValue> {
        detail(outcome(FlagHandle(key), type: type, context: context, at: now), key: key, type: type, default: fallback)
    }

    /// Evaluates the flag a handle names for a caller expecting `Value`: no hashing of the key. Never throws.
    @inlinable
    public func evaluate<Value: FlagValue>(
        _ handle: FlagHandle, default fallback: Value, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<Value> {
        var detail = evaluate(handle, type: Value.flagType, default: fallback.flagValue, context: context, at: now)
        return typed(&detail, default: fallback, key: handle.key)
    }

    /// Evaluates the flag a handle names for a caller expecting `type`: no hashing of the key. Never throws.
    public func evaluate(
        _ handle: FlagHandle, type: FlagType, default fallback: JSONValue, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<JSONValue> {
        detail(
            outcome(handle, type: type, context: context, at: now), key: handle.key, type: type, default: fallback)
    }

    /// Evaluates the flag a handle names for a caller expecting `type`, reading the time from `now` only when the
    /// flag's value can depend on it (an expiry, an override with an end, a scheduled rollout). Never throws.
    public func evaluate(
        _ handle: FlagHandle, type: FlagType, default fallback: JSONValue, context: EvaluationContext,
        clock now: () -> Date
    ) -> EvaluationDetail<JSONValue> {
        detail(
            outcome(handle, type: type, context: context, clock: now), key: handle.key, type: type, default: fallback)
    }

    /// Evaluates like `evaluate` and also returns each step considered, for `flagctl eval --explain`.
    public func explain(
        _ key: String, type: FlagType? = nil, default fallback: JSONValue? = nil, context: EvaluationContext,
        at now: Date
    ) -> (detail: EvaluationDetail<JSONValue>, steps: [String]) {
        var steps: [String] = []
        let index = program.flagIndex(key, hash: ByteHash.hash(key))
        let flagType: FlagType
        if let type {
            flagType = type
        } else if index >= 0, program.flags[index].state == .ready {
            flagType = program.types[program.flags[index].type]
        } else {
            flagType = .json
        }
        let outcome = program.resolve(
            index, type: flagType, context: context, at: now.timeIntervalSince1970, trace: { steps.append($0) })
        let detail = detail(outcome, key: key, type: flagType, default: fallback ?? .null)
        if let message = detail.errorMessage { steps.append(message) }
        return (detail, steps)
    }
}
