import FlagClient
import FlagCore

/// A `FeatureFlags` with fixed values, for tests and SwiftUI previews: no server, no cache, no clock.
///
/// ```swift
/// let flags = FixedFeatureFlags([.newCheckout: true])            // by key
/// let flags = FixedFeatureFlags(values: ["max-items": .int(5)])   // by name
/// let service = CheckoutService(flags: flags)
/// ```
public struct FixedFeatureFlags: FeatureFlags {
    private var values: [String: JSONValue]
    /// The version reported in details; `nil` by default, as when no set is used.
    public var version: Int?

    /// Flags with these values by key name; every other flag serves its compiled-in default.
    public init(values: [String: JSONValue] = [:], version: Int? = nil) {
        self.values = values
        self.version = version
    }

    /// Flags with these `bool` values; every other flag serves its default.
    public init(_ values: [FlagKey<Bool>: Bool]) {
        self.init(values: Dictionary(uniqueKeysWithValues: values.map { ($0.key.name, JSONValue.bool($0.value)) }))
    }

    /// The same flags with `key` set to `value`.
    public func with<Value: FlagValue>(_ key: FlagKey<Value>, _ value: Value) -> FixedFeatureFlags {
        var copy = self
        copy.values[key.name] = value.flagValue
        return copy
    }

    /// The same flags with the enum key `key` set to `value`.
    public func with<Value: RawRepresentable>(_ key: FlagKey<Value>, _ value: Value) -> FixedFeatureFlags
    where Value.RawValue == String {
        var copy = self
        copy.values[key.name] = .string(value.rawValue)
        return copy
    }

    /// The fixed value (reason `STATIC`), the default (`DEFAULT` / `FLAG_NOT_FOUND`) when none is set, or the
    /// default with `TYPE_MISMATCH` when the fixed value does not convert.
    public func detail<Value>(_ key: FlagKey<Value>) -> EvaluationDetail<Value> {
        guard let json = values[key.name] else {
            return EvaluationDetail(
                value: key.defaultValue, reason: .default, errorCode: .flagNotFound,
                errorMessage: "no fixed value for '\(key.name)'", version: version)
        }
        guard let value = key.converted(json) else {
            return EvaluationDetail(
                value: key.defaultValue, reason: .error, errorCode: .typeMismatch,
                errorMessage: "the fixed value of '\(key.name)' is not a \(Value.self)", version: version)
        }
        return EvaluationDetail(value: value, reason: .static, variant: "fixed", version: version)
    }
}
