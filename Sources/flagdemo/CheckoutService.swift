import FlagClient
import FlagCore

extension FlagKey where Value == Bool {
    /// Checkout v2, the one-page checkout: a release toggle on a phased rollout.
    static let newCheckout = FlagKey("new-checkout", default: false)
    /// Whether payments are taken at all: a kill switch for a provider outage.
    static let paymentsEnabled = FlagKey("payments-enabled", default: true)
}

extension FlagKey where Value == String {
    /// The pay button's colour: an experiment.
    static let checkoutButton = FlagKey("checkout-button", default: "blue")
}

extension FlagKey where Value == Int {
    /// Requests per minute a client may make.
    static let apiRateLimit = FlagKey("api-rate-limit", default: 600)
}

/// The part of a service that flags change: one user's checkout. It depends on `FeatureFlags`, so the program hands
/// it a `FlagSession` and a test hands it `FixedFeatureFlags`.
struct CheckoutService: Sendable {
    let flags: any FeatureFlags

    /// One line describing this user's checkout.
    func summary() -> String {
        guard flags.value(.paymentsEnabled) else { return "payments are off: checkout closed" }
        let page = flags.value(.newCheckout) ? "one-page checkout" : "classic checkout"
        return "\(page), \(flags.value(.checkoutButton)) pay button, \(flags.value(.apiRateLimit)) requests/min"
    }

    /// The flags this service reads that are killed now (reason `DISABLED`).
    func killedFlags() -> [String] {
        var killed: [String] = []
        if flags.detail(.newCheckout).reason == .disabled { killed.append(FlagKey<Bool>.newCheckout.name) }
        if flags.detail(.paymentsEnabled).reason == .disabled { killed.append(FlagKey<Bool>.paymentsEnabled.name) }
        if flags.detail(.checkoutButton).reason == .disabled { killed.append(FlagKey<String>.checkoutButton.name) }
        if flags.detail(.apiRateLimit).reason == .disabled { killed.append(FlagKey<Int>.apiRateLimit.name) }
        return killed
    }
}
