import FlagClient
import FlagCore
import Foundation
import Observation

/// The debug menu's state and actions over one `FlagClient`: every flag of the set in use and every key
/// the app declared, with its value for one context, its reason and its override; the client's state; overrides set
/// and cleared from text; and a diagnostics text to paste into a bug report. `FlagDebugView` shows it on Apple
/// platforms; the model itself runs anywhere Observation does.
///
/// ```swift
/// #if DEBUG
/// import FlagDebugMenu
///
/// let keys = [AnyFlagKey(.newCheckout), AnyFlagKey(.maxItems), AnyFlagKey(.checkoutTheme)]
/// let model = FlagDebugModel(client: client, keys: keys, context: EvaluationContext(unitID: user.id))
/// try model.setOverride("max-items", text: "5")
/// #endif
/// ```
///
/// It follows `client.updates` for as long as it lives, and reads the client again on each update and after each of
/// its own changes. An override set by other code (`client.setOverride`) shows after ``reload()``.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class FlagDebugModel {
    /// One flag as the menu lists it.
    public struct Row: Identifiable, Sendable, Hashable {
        /// The flag's key, which identifies the row.
        public var id: String { key }
        /// The flag's key, e.g. `new-checkout`.
        public var key: String
        /// The flag's type: `bool`, `int`, `double`, `string` or `json` (the declared key's type when the app
        /// declared one, else the set's); `unreadable` for a flag of the set this client cannot read.
        public var type: String
        /// The values an enum flag may serve (the set's list, else the declared enum's cases); `nil` for any other.
        public var values: [String]?
        /// What the flag does, from the set; `nil` when the set has none.
        public var description: String?
        /// The value a session's first read would find now, as text: a string as it is, anything else as JSON.
        public var value: String
        /// Why it is that value: `TARGETING_MATCH`, `SPLIT`, `DISABLED`, `OVERRIDE`, `ERROR`…
        public var reason: String
        /// The variant or rule that decided, when the set names one.
        public var variant: String?
        /// The error code and message when the compiled-in default is served because of an error.
        public var error: String?
        /// The version of the set the value came from; `nil` when none was used.
        public var version: Int?
        /// Whether a local override decides the value.
        public var isOverridden: Bool
        /// The text of the flag's local override, in force or ignored; `nil` when it has none.
        public var overrideText: String?
        /// Where the override was set: `setOverride` (this menu or the app), an overrides file line, or
        /// `environment FLAG_…`.
        public var overrideSource: String?
        /// Why the override is ignored; `nil` when it is in force or there is none.
        public var overrideProblem: String?
        /// Whether ``FlagDebugModel/clearOverride(_:)`` can clear the override: it was set from the app and the
        /// menu is not read-only.
        public var canClearOverride: Bool
        /// The compiled-in default of the key the app declared, as text; `nil` for a flag it did not declare.
        public var compiledDefault: String?
        /// Whether the set in use has the flag; `false` for a key only the app declares.
        public var isInSet: Bool

        /// The row's facts after the value, in one line: `bool · TARGETING_MATCH · rule-2 · v12 · default false`.
        public var summary: String {
            var parts = [type, reason]
            if let variant { parts.append(variant) }
            if let version { parts.append("v\(version)") }
            if let compiledDefault { parts.append("default \(compiledDefault)") }
            if !isInSet { parts.append("not in the set") }
            return parts.joined(separator: " · ")
        }
    }

    /// The client the menu reads and changes.
    public let client: FlagClient
    /// Who the values are evaluated for.
    public let context: EvaluationContext
    /// Every flag, sorted by key: the set's and the declared keys the set lacks.
    public private(set) var rows: [Row] = []
    /// What the search field holds; ``visibleRows`` are the rows whose key or description contains it.
    public var searchText = ""
    /// The client's state at the last update.
    public private(set) var state: ClientState
    /// The version of the set in use; `nil` when only compiled-in defaults are served.
    public private(set) var version: Int?
    /// When the client last stored a version of the set from the server (the cache's time); `nil` without a cache
    /// or before the first.
    public private(set) var lastUpdate: Date?
    /// Whether overrides cannot be set or cleared here; ``readOnlyReason`` says why.
    public let isReadOnly: Bool
    /// Why the menu is read-only, for the view to show; `nil` when it is not.
    public let readOnlyReason: String?
    /// The key of the flag whose override the edit sheet is editing; `nil` when the sheet is closed.
    public var editingKey: String?
    /// The override text in the edit sheet.
    public var editText = ""
    /// Why the edit sheet's text was refused; `nil` before a refusal.
    public internal(set) var editError: String?
    /// The last action's error for the view to show (an alert); `nil` when there is none to show.
    public var actionError: String?
    /// Whether ``refresh()`` is waiting for the server.
    public private(set) var isRefreshing = false
    /// What the last ``refresh()`` found, in words; `nil` before the first.
    public private(set) var refreshResult: String?

    @ObservationIgnored let keys: [String: AnyFlagKey]
    /// The set's flags at the last ``reload()`` (`nil` for one this client cannot read), by key.
    @ObservationIgnored var setFlags: [String: Flag?] = [:]
    /// Follows `client.updates`; cancelled on deinit, which ends the client's stream for it.
    @ObservationIgnored private var updates: Task<Void, Never>?

    /// A menu over `client`, listing the set's flags and `keys`, the keys the app declared (`AnyFlagKey(.newCheckout)`:
    /// the client cannot list an app's static keys), with values evaluated for `context`. Pass the signed-in user's
    /// context to see what they see.
    public init(
        client: FlagClient, keys: [AnyFlagKey] = [],
        context: EvaluationContext = EvaluationContext(unitID: "flag-debug-menu")
    ) {
        // Subscribed before the state is read: a change between the two would otherwise never reach the model.
        let stream = client.updates
        self.client = client
        self.context = context
        // A key declared twice lists once; the first declaration's default is shown.
        self.keys = Dictionary(keys.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        state = client.state
        isReadOnly = !client.configuration.overridesEnabled
        readOnlyReason =
            isReadOnly
            ? "Overrides are disabled in this build (Configuration.overridesEnabled is false): the menu shows the "
                + "flags but cannot change them."
            : nil
        reload()
        updates = Task { [weak self] in
            for await update in stream {
                guard let self else { return }
                self.state = update.state
                self.reload()
            }
        }
    }

    deinit {
        updates?.cancel()
    }

    /// The rows whose key or description contains ``searchText`` (ignoring case); every row when it is empty.
    public var visibleRows: [Row] {
        let query = searchText.trimmingCharacters(in: .whitespaces).lowercased()
        guard !query.isEmpty else { return rows }
        return rows.filter { row in
            row.key.lowercased().contains(query) || (row.description?.lowercased().contains(query) ?? false)
        }
    }

    /// The server the client reads from: scheme, host and port, without any path, query or user.
    public var server: String {
        let url = client.configuration.server
        var text = "\(url.scheme ?? "http")://\(url.host ?? "?")"
        if let port = url.port { text += ":\(port)" }
        return text
    }

    /// The flag set the client subscribes to, e.g. `ios-prod`.
    public var setName: String { client.configuration.set }

    /// ``version`` as text: the number, or `none`.
    public var versionText: String { version.map(String.init) ?? "none" }

    /// ``lastUpdate`` as text: ISO 8601 in UTC, or `unknown`.
    public var lastUpdateText: String { lastUpdate?.ISO8601Format() ?? "unknown" }

    /// The row of the flag ``editingKey`` names, while the edit sheet is open.
    public var editingRow: Row? { editingKey.flatMap { key in rows.first { $0.key == key } } }

    /// Whether the edit sheet is open; setting it to `false` closes it as ``cancelEditing()`` does.
    public var isEditing: Bool {
        get { editingKey != nil }
        set { if !newValue { cancelEditing() } }
    }

    /// Whether ``actionError`` is to be shown; setting it to `false` dismisses it.
    public var isShowingActionError: Bool {
        get { actionError != nil }
        set { if !newValue { actionError = nil } }
    }

    /// The client's state in words: where the values come from.
    public var stateText: String {
        switch state {
        case .defaultsOnly:
            return "defaults only: no flag set yet, every flag serves its compiled-in default"
        case .cached(let version):
            return "cached: version \(version) from the disk, not confirmed by the server yet"
        case .live(let version):
            return "live: version \(version), confirmed by the server"
        case .stale(let since):
            let serving = version.map { "version \($0)" } ?? "compiled-in defaults"
            return "stale: the connection failed at \(since.ISO8601Format()); serving \(serving)"
        case .refused(let version, let refusal):
            let serving = version.map { "version \($0)" } ?? "compiled-in defaults"
            return "refused: \(refusal); serving \(serving)"
        }
    }

    /// Fetches the set from the server now (`client.refresh()`, in every refresh mode), then reads the client
    /// again; whether the client is live after it. ``refreshResult`` says what happened.
    @discardableResult
    public func refresh() async -> Bool {
        isRefreshing = true
        let live = await client.refresh()
        isRefreshing = false
        state = client.state
        reload()
        refreshResult =
            live ? "refreshed: live, version \(versionText)" : "the refresh did not reach the server; \(stateText)"
        return live
    }

    /// Reads the client again: the set's flags, each row's value, the version and the last update.
    public func reload() {
        let flags = client.flagsInUse()
        setFlags = flags
        let names = Set(flags.keys).union(keys.keys)
        rows = names.sorted(by: utf8Less).map { name in
            row(name, inSet: flags[name], declared: keys[name])
        }
        version = client.versionInUse
        lastUpdate = client.lastStored()
    }

    /// `inSet` is `nil` for a flag the set lacks, `.some(nil)` for one it has but this client cannot read.
    private func row(_ name: String, inSet: Flag??, declared: AnyFlagKey?) -> Row {
        let flag = inSet ?? nil
        let key = declared ?? AnyFlagKey(name: name, type: flag?.type ?? .json)
        let reading = client.reading(key, context: context)
        let detail = reading.detail
        var value = AnyFlagKey.text(detail.value)
        var error: String?
        if let code = detail.errorCode {
            value = key.defaultText ?? "no value"
            error = [code.rawValue, detail.errorMessage].compactMap { $0 }.joined(separator: ": ")
        }
        return Row(
            key: name, type: declared != nil || flag != nil ? key.type.name : "unreadable",
            values: flag?.values ?? key.cases, description: flag?.description, value: value,
            reason: detail.reason.rawValue, variant: detail.variant, error: error, version: detail.version,
            isOverridden: detail.reason == .override, overrideText: reading.override?.text,
            overrideSource: reading.override?.source, overrideProblem: reading.overrideProblem,
            canClearOverride: !isReadOnly && reading.override?.isFromAPI == true, compiledDefault: key.defaultText,
            isInSet: inSet != nil)
    }
}
