import FlagClient
import FlagCore
import FlagTestSupport
import Foundation

/// The keys an app declares, of every kind a `FlagKey` takes.
enum AppFlags {
    enum Theme: String, CaseIterable, Sendable { case blue, green, orange }
    enum Layout: String, CaseIterable, Sendable { case list, grid }
    struct Banner: Codable, Sendable, Equatable { var title: String }

    static let newCheckout = FlagKey<Bool>("new-checkout", default: false)
    static let maxItems = FlagKey<Int>("max-items", default: 10)
    static let discountRate = FlagKey<Double>("discount-rate", default: 0.25)
    static let checkoutTitle = FlagKey<String>("checkout-title", default: "Checkout")
    static let checkoutTheme = FlagKey<Theme>("checkout-theme", default: .blue)
    static let limits = FlagKey<JSONValue>("limits", default: .object(["daily": .int(3)]))
    /// Not in the set: the app declares it ahead of the flag.
    static let homeBanner = FlagKey<Banner>("home-banner", default: Banner(title: "Welcome"))
    /// Not in the set either, and an enum whose cases the set cannot list.
    static let layout = FlagKey<Layout>("layout", default: .list)

    static let all: [AnyFlagKey] = [
        AnyFlagKey(newCheckout), AnyFlagKey(maxItems), AnyFlagKey(discountRate), AnyFlagKey(checkoutTitle),
        AnyFlagKey(checkoutTheme), AnyFlagKey(limits), AnyFlagKey(homeBanner), AnyFlagKey(layout),
    ]
}

/// Set `ios-prod` version 7, as the offline tests start from it.
enum TestSet {
    static let version = 7

    static var document: [UInt8] {
        let germany = Rule(
            name: "germany", target: .conditions([Condition(attribute: "country", op: .eq, values: ["DE"])]),
            serve: .value(.int(50)))
        let flags = [
            Flag(
                key: "new-checkout", type: .bool, defaultValue: .bool(true),
                description: "The one-page checkout"),
            Flag(
                key: "max-items", type: .int, kind: .ops, defaultValue: .int(20), description: "Items per page",
                rules: [germany]),
            Flag(key: "discount-rate", type: .double, defaultValue: .double(0.1)),
            Flag(key: "checkout-title", type: .string, defaultValue: .string("Pay")),
            Flag(
                key: "checkout-theme", type: .string, defaultValue: .string("green"),
                description: "Colour of the pay button", values: ["blue", "green", "orange"]),
            Flag(key: "limits", type: .json, defaultValue: .object(["daily": .int(5)])),
            Flag(key: "search-v2", type: .bool, defaultValue: .bool(false), description: "New search backend"),
            Flag(key: "retired", type: .bool, defaultValue: .bool(true), archived: true),
        ]
        let set = FlagSet(
            name: "ios-prod", version: version, updatedAt: Date(timeIntervalSince1970: 1_795_000_000),
            flags: Dictionary(uniqueKeysWithValues: flags.map { ($0.key, $0) }))
        return set.encoded()
    }
}

/// Secrets that must never reach the diagnostics.
enum Secrets {
    static let sdkKey = "fss_debug-menu-secret-sdk-key-4711"
    static let unitID = "user-secret-unit-0815"
}

/// A client that never touches the network: it starts from `TestSet` as its bootstrap document, cached in
/// `directory`, and reads no environment but `environment`.
func offlineClient(
    _ directory: TemporaryDirectory, environment: [String: String] = [:],
    configure: (inout FlagClient.Configuration) -> Void = { _ in }
) throws -> FlagClient {
    var configuration = FlagClient.Configuration(
        server: URL(string: "https://flags.example.test:8443/base")!, set: "ios-prod", sdkKey: Secrets.sdkKey,
        cacheDirectory: directory.url)
    configuration.refresh = .off
    configuration.telemetry = .off
    configuration.environment = environment
    configuration.bootstrap = TestSet.document
    configure(&configuration)
    return try FlagClient(configuration: configuration)
}

/// The context the tests evaluate for: German, so that `max-items` matches its rule.
let germanUser = EvaluationContext(unitID: Secrets.unitID, attributes: ["country": "DE"])
