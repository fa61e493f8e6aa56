import FlagClient
import FlagClientTesting
import FlagCore
import Foundation
import Testing

@testable import flagdemo

/// The testing seam the demo shows: the service reads `FeatureFlags`, so a test gives it fixed values, no server.
@Suite struct CheckoutServiceTests {
    @Test func describesTheCheckoutTheFlagsSelect() {
        let flags = FixedFeatureFlags([.newCheckout: true]).with(.checkoutButton, "green").with(.apiRateLimit, 120)
        #expect(CheckoutService(flags: flags).summary() == "one-page checkout, green pay button, 120 requests/min")
    }

    @Test func unsetFlagsServeTheirCompiledDefaults() {
        #expect(
            CheckoutService(flags: FixedFeatureFlags()).summary()
                == "classic checkout, blue pay button, 600 requests/min")
    }

    @Test func paymentsOffClosesTheCheckout() {
        let service = CheckoutService(flags: FixedFeatureFlags([.paymentsEnabled: false, .newCheckout: true]))
        #expect(service.summary() == "payments are off: checkout closed")
        // A fixed value is not a kill: only a server's kill has reason DISABLED.
        #expect(service.killedFlags().isEmpty)
    }

    @Test func describesEachClientState() {
        #expect(describe(.defaultsOnly) == "compiled-in defaults (no flag set yet)")
        #expect(describe(.cached(version: 3)) == "flag set v3 from the cache")
        #expect(describe(.live(version: 4)) == "flag set v4, live from the server")
    }
}

@Suite struct DemoOptionsTests {
    @Test func argumentsBeatTheEnvironment() throws {
        let options = try DemoOptions.parse(
            ["--server", "http://127.0.0.1:9000", "--users", "a,b", "--watch", "5", "--once", "--cache", "/tmp/c"],
            environment: ["FLAGSTAFF_SERVER": "http://flags.example", "FLAGSTAFF_SDK_KEY": "fss_key"])
        #expect(options.server == URL(string: "http://127.0.0.1:9000"))
        #expect(options.sdkKey == "fss_key")
        #expect(options.set == "demo")
        #expect(options.users == ["a", "b"])
        #expect(options.watchSeconds == 5)
        #expect(options.once)
        #expect(options.cacheDirectory.path == "/tmp/c")
        #expect(options.app == nil)
    }

    @Test func theAppInTelemetryIsNameSlashVersion() throws {
        let environment = ["FLAGSTAFF_SERVER": "http://h:1", "FLAGSTAFF_SDK_KEY": "fss_key"]
        let options = try DemoOptions.parse(["--app", "shop/5.3.0"], environment: environment)
        #expect(options.app == .init(name: "shop", version: "5.3.0"))
    }

    @Test(arguments: [
        ([String](), "give the server with --server URL or FLAGSTAFF_SERVER, e.g. http://127.0.0.1:8080"),
        (["--server", "http://h:1"], "give an SDK key of the set with --sdk-key KEY or FLAGSTAFF_SDK_KEY"),
        (["--watch", "soon"], "--watch takes a number of seconds, not 'soon'"),
        (["--set"], "--set needs a value"),
        (["--verbose"], "unknown argument '--verbose'"),
        (["--app", "shop"], "--app takes NAME/VERSION, e.g. shop/5.3.0, not 'shop'"),
    ])
    func badArgumentsSayWhatToFix(arguments: [String], message: String) {
        #expect(throws: DemoUsageError(message)) { try DemoOptions.parse(arguments, environment: [:]) }
    }
}
