import Foundation

/// Why an evaluation produced its value, in the OpenFeature vocabulary (an open set over the spec's strings).
///
/// The known reasons are computed, not stored: a `static let` is a lazily initialized global, checked on every read
/// of an evaluation's detail, where a string literal costs nothing.
public struct Reason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The string on the wire, e.g. `TARGETING_MATCH`.
    public let rawValue: String
    /// Creates a reason from its wire string.
    @inlinable public init(rawValue: String) { self.rawValue = rawValue }

    /// The flag has no targeting: its default (or its expired value) is the value for everyone.
    @inlinable public static var `static`: Reason { Reason(rawValue: "STATIC") }
    /// Nothing matched, or the flag is missing: a default was served.
    @inlinable public static var `default`: Reason { Reason(rawValue: "DEFAULT") }
    /// An override or a rule matched.
    @inlinable public static var targetingMatch: Reason { Reason(rawValue: "TARGETING_MATCH") }
    /// The unit's bucket put it inside a rollout or a split arm.
    @inlinable public static var split: Reason { Reason(rawValue: "SPLIT") }
    /// The flag is killed.
    @inlinable public static var disabled: Reason { Reason(rawValue: "DISABLED") }
    /// A local override (env file, environment, debug menu) decided.
    @inlinable public static var override: Reason { Reason(rawValue: "OVERRIDE") }
    /// Something went wrong; see the error code. The caller's default was served.
    @inlinable public static var error: Reason { Reason(rawValue: "ERROR") }
    /// A flag the flag requires did not serve one of the values listed: the flag's default was served, and the
    /// variant names that flag.
    @inlinable public static var prerequisiteFailed: Reason { Reason(rawValue: "PREREQUISITE_FAILED") }

    public var description: String { rawValue }
}

/// What went wrong in an evaluation, in the OpenFeature vocabulary.
public struct ErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The string on the wire, e.g. `FLAG_NOT_FOUND`.
    public let rawValue: String
    /// Creates an error code from its wire string.
    @inlinable public init(rawValue: String) { self.rawValue = rawValue }

    /// The set has no such flag, or it is archived.
    @inlinable public static var flagNotFound: ErrorCode { ErrorCode(rawValue: "FLAG_NOT_FOUND") }
    /// The flag's type is not the one the caller asked for.
    @inlinable public static var typeMismatch: ErrorCode { ErrorCode(rawValue: "TYPE_MISMATCH") }
    /// The flag uses a construct this build does not know, or is malformed.
    @inlinable public static var parseError: ErrorCode { ErrorCode(rawValue: "PARSE_ERROR") }
    /// No flag set is available yet.
    @inlinable public static var providerNotReady: ErrorCode { ErrorCode(rawValue: "PROVIDER_NOT_READY") }
    /// The evaluation context has no targeting key (server-side evaluation: OFREP).
    @inlinable public static var targetingKeyMissing: ErrorCode { ErrorCode(rawValue: "TARGETING_KEY_MISSING") }
    /// The evaluation context is malformed (server-side evaluation: OFREP).
    @inlinable public static var invalidContext: ErrorCode { ErrorCode(rawValue: "INVALID_CONTEXT") }
    /// Anything else.
    @inlinable public static var general: ErrorCode { ErrorCode(rawValue: "GENERAL") }

    public var description: String { rawValue }
}

/// The result of evaluating one flag: the value, why, and which variant or rule decided.
public struct EvaluationDetail<Value: Sendable>: Sendable {
    /// The value to use.
    public var value: Value
    /// Why this value.
    public var reason: Reason
    /// The rule, split arm or step that decided: a rule's name, a variant's name, `override`, `override:COHORT`,
    /// `rollout`, `kill`, `expired` or `default`. `nil` on errors and for local overrides.
    public var variant: String?
    /// What went wrong, when something did.
    public var errorCode: ErrorCode?
    /// A message for people, when something went wrong.
    public var errorMessage: String?
    /// The flag-set version the value came from; `nil` when no set was used.
    public var version: Int?

    /// Creates a detail.
    @inlinable
    public init(
        value: Value, reason: Reason, variant: String? = nil, errorCode: ErrorCode? = nil,
        errorMessage: String? = nil, version: Int? = nil
    ) {
        self.value = value
        self.reason = reason
        self.variant = variant
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.version = version
    }

    /// The same detail with the value mapped.
    // `consuming`: the strings move into the new detail instead of being copied (retained) and released.
    @inlinable
    public consuming func map<Other: Sendable>(_ transform: (Value) -> Other) -> EvaluationDetail<Other> {
        EvaluationDetail<Other>(
            value: transform(value), reason: reason, variant: variant, errorCode: errorCode,
            errorMessage: errorMessage, version: version)
    }
}

extension EvaluationDetail: Equatable where Value: Equatable {}

/// A Swift type a flag can have: `Bool`, `Int`, `Double`, `String`, or `JSONValue` for `json` flags.
public protocol FlagValue: Sendable {
    /// The flag type holding values of this Swift type.
    static var flagType: FlagType { get }
    /// Converts a served value; `nil` if it is not of this type.
    init?(flagValue: JSONValue)
    /// The value as JSON.
    var flagValue: JSONValue { get }
}

extension Bool: FlagValue {
    public static var flagType: FlagType { .bool }
    public init?(flagValue: JSONValue) {
        guard case .bool(let value) = flagValue else { return nil }
        self = value
    }
    public var flagValue: JSONValue { .bool(self) }
}

extension Int: FlagValue {
    public static var flagType: FlagType { .int }
    public init?(flagValue: JSONValue) {
        guard case .int(let value) = flagValue, let int = Int(exactly: value) else { return nil }
        self = int
    }
    public var flagValue: JSONValue { .int(Int64(self)) }
}

extension Double: FlagValue {
    public static var flagType: FlagType { .double }
    public init?(flagValue: JSONValue) {
        switch flagValue {
        case .double(let value): self = value
        case .int(let value): self = Double(value)
        default: return nil
        }
    }
    public var flagValue: JSONValue { .double(self) }
}

extension String: FlagValue {
    public static var flagType: FlagType { .string }
    public init?(flagValue: JSONValue) {
        guard case .string(let value) = flagValue else { return nil }
        self = value
    }
    public var flagValue: JSONValue { .string(self) }
}

extension JSONValue: FlagValue {
    public static var flagType: FlagType { .json }
    public init?(flagValue: JSONValue) { self = flagValue }
    public var flagValue: JSONValue { self }
}

extension JSONValue {
    /// Whether two values are the same, numbers compared by value: a `double` flag's `1.0` is a listed `1`.
    func isSameValue(as other: JSONValue) -> Bool {
        switch (self, other) {
        case (.int(let left), .double(let right)), (.double(let right), .int(let left)): Double(left) == right
        default: self == other
        }
    }

    /// Whether this value can be served by a flag of `type`.
    public func conforms(to type: FlagType) -> Bool {
        switch (type, self) {
        case (.bool, .bool), (.int, .int), (.double, .double), (.double, .int), (.string, .string): true
        case (.json, _): true
        default: false
        }
    }
}
