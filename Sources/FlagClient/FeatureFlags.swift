import FlagCore

/// What services depend on to read flags: a `FlagSession` in the app, a fixed in-memory implementation
/// (`FlagClientTesting.FixedFeatureFlags`) in tests and previews.
///
/// ```swift
/// struct CheckoutService {
///     let flags: any FeatureFlags
///     func title() -> String { flags.value(.newCheckout) ? "Pay now" : "Checkout" }
/// }
/// ```
public protocol FeatureFlags: Sendable {
    /// The flag's value; never throws.
    func value<Value>(_ key: FlagKey<Value>) -> Value
    /// The flag's value with the reason, variant, error code and set version.
    func detail<Value>(_ key: FlagKey<Value>) -> EvaluationDetail<Value>
}

extension FeatureFlags {
    /// The flag's value, taken from `detail(_:)`.
    public func value<Value>(_ key: FlagKey<Value>) -> Value {
        detail(key).value
    }
}
