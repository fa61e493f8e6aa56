import FlagClient
import FlagCore
import FlagDebugMenu
import FlagLock
import FlagTestSupport
import Foundation
import Observation
import Testing

@MainActor
@Suite struct FlagDebugModelTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    private func row(_ model: FlagDebugModel, _ key: String) throws -> FlagDebugModel.Row {
        try #require(model.rows.first { $0.key == key }, "no row for \(key)")
    }

    @Test func listsTheSetsFlagsAndTheDeclaredKeysItLacks() throws {
        let model = FlagDebugModel(client: try offlineClient(directory), keys: AppFlags.all, context: germanUser)
        #expect(
            model.rows.map(\.key) == [
                "checkout-theme", "checkout-title", "discount-rate", "home-banner", "layout", "limits", "max-items",
                "new-checkout", "search-v2",
            ])

        let maxItems = try row(model, "max-items")
        #expect(maxItems.type == "int")
        #expect(maxItems.description == "Items per page")
        #expect(maxItems.value == "50")
        #expect(maxItems.reason == "TARGETING_MATCH")
        #expect(maxItems.variant == "germany")
        #expect(maxItems.version == TestSet.version)
        #expect(maxItems.compiledDefault == "10")
        #expect(maxItems.isInSet && !maxItems.isOverridden && maxItems.error == nil)
        #expect(maxItems.summary == "int · TARGETING_MATCH · germany · v7 · default 10")

        let theme = try row(model, "checkout-theme")
        #expect(theme.type == "string")
        #expect(theme.values == ["blue", "green", "orange"])
        #expect(theme.value == "green")
        #expect(theme.reason == "STATIC")
        #expect(theme.compiledDefault == "blue")

        // Every kind of declared key shows its compiled-in default.
        #expect(try row(model, "new-checkout").compiledDefault == "false")
        #expect(try row(model, "discount-rate").compiledDefault == "0.25")
        #expect(try row(model, "checkout-title").compiledDefault == "Checkout")
        #expect(try row(model, "limits").compiledDefault == #"{"daily":3}"#)
        #expect(try row(model, "limits").value == #"{"daily":5}"#)

        // A flag of the set the app does not declare: the set's facts, no compiled default.
        let search = try row(model, "search-v2")
        #expect(search.isInSet && search.compiledDefault == nil)
        #expect(search.type == "bool" && search.value == "false" && search.description == "New search backend")

        // Declared keys the set lacks serve their compiled-in default, and say why.
        let banner = try row(model, "home-banner")
        #expect(!banner.isInSet)
        #expect(banner.type == "json")
        #expect(banner.compiledDefault == #"{"title":"Welcome"}"#)
        #expect(banner.value == #"{"title":"Welcome"}"#)
        #expect(banner.reason == "DEFAULT")
        #expect(banner.error?.hasPrefix("FLAG_NOT_FOUND") == true)
        let layout = try row(model, "layout")
        #expect(!layout.isInSet && layout.values == ["list", "grid"] && layout.value == "list")
        #expect(layout.summary.hasSuffix("default list · not in the set"))

        // An archived flag is gone for clients, so it is not listed.
        #expect(model.rows.contains { $0.key == "retired" } == false)
        #expect(model.version == TestSet.version)
        #expect(model.setName == "ios-prod")
        #expect(model.server == "https://flags.example.test:8443")
    }

    @Test func searchesKeysAndDescriptionsIgnoringCase() throws {
        let model = FlagDebugModel(client: try offlineClient(directory), keys: AppFlags.all)
        #expect(model.visibleRows.count == model.rows.count)
        model.searchText = "CHECKOUT"
        #expect(model.visibleRows.map(\.key) == ["checkout-theme", "checkout-title", "new-checkout"])
        model.searchText = "pay button"  // in checkout-theme's description only
        #expect(model.visibleRows.map(\.key) == ["checkout-theme"])
        model.searchText = "backend"
        #expect(model.visibleRows.map(\.key) == ["search-v2"])
        model.searchText = "  "
        #expect(model.visibleRows.count == model.rows.count)
        model.searchText = "no-such-flag"
        #expect(model.visibleRows.isEmpty)
    }

    @Test func setsTypedOverridesThatSessionsRead() throws {
        let client = try offlineClient(directory)
        let model = FlagDebugModel(client: client, keys: AppFlags.all, context: germanUser)
        let session = client.session(unitID: "u-1")
        #expect(session.value(AppFlags.maxItems) == 20)

        try model.setOverride("max-items", text: "5")
        try model.setOverride("new-checkout", text: "off")
        try model.setOverride("discount-rate", text: "0.5")
        try model.setOverride("checkout-title", text: "\"Pay now\"")
        try model.setOverride("checkout-theme", text: "orange")
        try model.setOverride("limits", text: #"{"daily": 9}"#)
        try model.setOverride("home-banner", text: #"{"title": "Sale"}"#)
        try model.setOverride("layout", text: "grid")
        try model.setOverride("search-v2", text: "true")  // in the set only: typed by the set

        let maxItems = try row(model, "max-items")
        #expect(maxItems.value == "5" && maxItems.reason == "OVERRIDE" && maxItems.isOverridden)
        #expect(maxItems.overrideSource == "setOverride" && maxItems.canClearOverride)
        #expect(try row(model, "checkout-title").value == "Pay now")
        #expect(try row(model, "home-banner").value == #"{"title":"Sale"}"#)
        #expect(try row(model, "search-v2").value == "true")
        #expect(model.rows.allSatisfy { $0.isOverridden })

        // The app's sessions read them at once, typed.
        #expect(session.value(AppFlags.maxItems) == 5)
        #expect(session.value(AppFlags.newCheckout) == false)
        #expect(session.value(AppFlags.discountRate) == 0.5)
        #expect(session.value(AppFlags.checkoutTitle) == "Pay now")
        #expect(session.value(AppFlags.checkoutTheme) == .orange)
        #expect(session.value(AppFlags.homeBanner) == AppFlags.Banner(title: "Sale"))
        #expect(session.value(AppFlags.layout) == .grid)
    }

    @Test(arguments: [
        ("max-items", "many", "'many' is not a 64-bit integer ('max-items' is an int flag)"),
        ("new-checkout", "maybe", "'maybe' is not a bool (true or false) ('new-checkout' is a bool flag)"),
        ("discount-rate", "lots", "'lots' is not a finite number ('discount-rate' is a double flag)"),
        (
            "checkout-theme", "purple",
            "'purple' is not one of the values of 'checkout-theme': use one of blue, green, orange"
        ),
        ("layout", "table", "'table' is not one of the values of 'layout': use one of list, grid"),
        (
            "home-banner", #"{"headline": "Sale"}"#,
            #"'{"headline": "Sale"}' is not a value of Banner, the type the app reads 'home-banner' as"#
        ),
    ])
    func refusesTextThatIsNotAValueOfTheFlag(key: String, text: String, message: String) throws {
        let client = try offlineClient(directory)
        let model = FlagDebugModel(client: client, keys: AppFlags.all)
        let before = try row(model, key)
        #expect(throws: FlagDebugError.self) { try model.setOverride(key, text: text) }
        do {
            try model.setOverride(key, text: text)
        } catch {
            #expect(error.code == .invalidValue)
            #expect(error.key == key)
            #expect(error.message == message)
        }
        #expect(try row(model, key) == before)
        #expect(client.session(unitID: "u-1").detail(AppFlags.maxItems).reason != .override)
    }

    @Test func refusesAnUnknownFlag() throws {
        let model = FlagDebugModel(client: try offlineClient(directory), keys: AppFlags.all)
        do {
            try model.setOverride("no-such-flag", text: "1")
            Issue.record("an override of an unknown flag was set")
        } catch {
            #expect(error.code == .unknownFlag)
            #expect(error.message.contains("no flag 'no-such-flag' in set ios-prod"))
        }
    }

    @Test func theEditSheetKeepsARefusedTextWithItsError() throws {
        let model = FlagDebugModel(client: try offlineClient(directory), keys: AppFlags.all)
        model.beginEditing("max-items")
        #expect(model.isEditing && model.editText == "20" && model.editingRow?.key == "max-items")
        model.editText = "lots"
        model.commitEdit()
        #expect(model.isEditing)
        #expect(model.editError == "'lots' is not a 64-bit integer ('max-items' is an int flag)")
        model.editText = "3"
        model.commitEdit()
        #expect(!model.isEditing && model.editError == nil)
        #expect(try row(model, "max-items").value == "3")
        model.beginEditing("max-items")
        #expect(model.editText == "3")  // the override's text
        model.isEditing = false
        #expect(model.editingKey == nil)
    }

    @Test func clearsOneOverrideOrAllSetFromTheApp() throws {
        let client = try offlineClient(directory, environment: ["FLAG_DISCOUNT_RATE": "0.75"])
        let model = FlagDebugModel(client: client, keys: AppFlags.all)
        try model.setOverride("max-items", text: "5")
        try model.setOverride("new-checkout", text: "false")
        try model.setOverride("checkout-theme", text: "blue")

        try model.clearOverride("max-items")
        let maxItems = try row(model, "max-items")
        #expect(maxItems.value == "20" && maxItems.reason == "DEFAULT" && maxItems.overrideText == nil)
        #expect(client.session(unitID: "u-1").value(AppFlags.maxItems) == 20)
        try model.clearOverride("max-items")  // none left: nothing to do
        #expect(try row(model, "new-checkout").isOverridden)

        // An override from the environment is listed, but only the environment changes it.
        let discount = try row(model, "discount-rate")
        #expect(discount.value == "0.75" && discount.overrideSource == "environment FLAG_DISCOUNT_RATE")
        #expect(!discount.canClearOverride)
        do {
            try model.clearOverride("discount-rate")
            Issue.record("an override from the environment was cleared")
        } catch {
            #expect(error.code == .notSetFromApp)
            #expect(
                error.message
                    == "the override of 'discount-rate' comes from environment FLAG_DISCOUNT_RATE: remove it there "
                    + "and restart the app")
        }

        try model.clearAllOverrides()
        #expect(model.rows.filter(\.isOverridden).map(\.key) == ["discount-rate"])
        #expect(client.session(unitID: "u-1").value(AppFlags.newCheckout) == true)
        #expect(client.session(unitID: "u-1").value(AppFlags.checkoutTheme) == .green)
    }

    @Test func anOverrideThatDoesNotReadIsShownIgnored() throws {
        let model = FlagDebugModel(
            client: try offlineClient(directory, environment: ["FLAG_MAX_ITEMS": "plenty"]), keys: AppFlags.all)
        let maxItems = try row(model, "max-items")
        #expect(!maxItems.isOverridden && maxItems.value == "20")
        #expect(maxItems.overrideText == "plenty")
        #expect(maxItems.overrideProblem == "'plenty' is not a 64-bit integer")
    }

    @Test func isReadOnlyWhenOverridesAreDisabled() throws {
        let client = try offlineClient(directory, environment: ["FLAG_MAX_ITEMS": "3"]) {
            $0.overridesEnabled = false
        }
        let model = FlagDebugModel(client: client, keys: AppFlags.all)
        #expect(model.isReadOnly)
        #expect(model.readOnlyReason?.contains("Configuration.overridesEnabled is false") == true)
        #expect(try row(model, "max-items").value == "20")  // the environment's override does not apply either
        #expect(model.rows.allSatisfy { !$0.canClearOverride })
        func expectReadOnly(_ action: () throws -> Void) {
            do {
                try action()
                Issue.record("a read-only menu changed an override")
            } catch let error as FlagDebugError {
                #expect(error.code == .readOnly)
                #expect(error.message == model.readOnlyReason)
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        expectReadOnly { try model.setOverride("max-items", text: "5") }
        expectReadOnly { try model.clearOverride("max-items") }
        expectReadOnly { try model.clearAllOverrides() }
        model.perform { try $0.clearAllOverrides() }
        #expect(model.actionError == model.readOnlyReason && model.isShowingActionError)
        model.isShowingActionError = false
        #expect(model.actionError == nil)
        #expect(model.diagnostics.contains("overrides: disabled\n"))
        let writable = FlagDebugModel(client: try offlineClient(directory))
        #expect(!writable.isReadOnly && writable.readOnlyReason == nil)
    }

    @Test func diagnosticsHoldNoSecret() throws {
        let client = try offlineClient(directory, environment: ["FLAG_DISCOUNT_RATE": "0.75"]) {
            $0.server = URL(string: "https://menu-user:menu-password@flags.example.test:8443/base?token=query-token")!
            $0.app = TelemetryReport.Software(name: "Shop", version: "5.3.0")
        }
        let model = FlagDebugModel(client: client, keys: AppFlags.all, context: germanUser)
        try model.setOverride("checkout-title", text: "override-text-secret")
        let text = model.diagnostics
        for secret in [
            Secrets.sdkKey, Secrets.unitID, "DE", "menu-user", "menu-password", "query-token", "/base",
            "override-text-secret",
        ] {
            #expect(!text.contains(secret), "the diagnostics hold \(secret)")
        }
        #expect(
            text == """
                FlagClient 2.0.0
                app: Shop 5.3.0
                state: cached: version 7 from the disk, not confirmed by the server yet
                version: 7
                last update: \(model.lastUpdateText)
                server: https://flags.example.test:8443
                set: ios-prod
                refresh: off
                flags: 7 in the set, 2 declared by the app only, 0 unreadable
                overrides: 2 (1 set from the app, 1 from the environment or a file)

                """)
        #expect(model.lastUpdate != nil)
    }

    @Test func anOverrideChangeNotifiesObservers() throws {
        let model = FlagDebugModel(client: try offlineClient(directory), keys: AppFlags.all)
        let changes = Counter()
        func track() {
            withObservationTracking {
                _ = model.rows
            } onChange: {
                changes.add()
            }
        }
        track()
        try model.setOverride("max-items", text: "5")
        #expect(changes.value == 1)
        track()
        try model.clearOverride("max-items")
        #expect(changes.value == 2)
        track()
        #expect(throws: FlagDebugError.self) { try model.setOverride("max-items", text: "x") }
        #expect(changes.value == 2)  // a refused text changes nothing
    }

    @Test func letsGoOfTheClientsUpdatesWhenReleased() async throws {
        let client = try offlineClient(directory)
        var model: FlagDebugModel? = FlagDebugModel(client: client)
        weak let released = model
        #expect(released != nil)
        model = nil
        #expect(released == nil)
    }
}

/// Counts calls from any thread (observation's `onChange` is `@Sendable`).
final class Counter: Sendable {
    private let box = Locked(0)
    var value: Int { box.withLock { $0 } }
    func add() { box.withLock { $0 += 1 } }
}
