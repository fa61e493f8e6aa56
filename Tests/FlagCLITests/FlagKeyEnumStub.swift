import FlagCore

@testable import FlagClient

// Stands in for FlagClient's `FlagKey` of a `String` enum (issue 29, the client's part, on its own branch) so that
// the generated enum flags compile here, in the test bundle and in `GenerateSwiftTests.typechecks`. Delete this file
// when that branch is merged: FlagClient's own initializer then takes its place, and a declaration of this module
// would shadow it without a word.
extension FlagKey where Value: RawRepresentable, Value.RawValue == String {
    /// An enum flag read as `Value`: `FlagKey<CheckoutTheme>("checkout-theme", default: .blue)`.
    init(_ name: String, default value: Value) {
        self.init(
            name: name, default: value, type: .string, defaultJSON: .string(value.rawValue), isPrimitive: false
        ) { json in
            guard case .string(let text) = json else { return nil }
            return Value(rawValue: text)
        }
    }
}
