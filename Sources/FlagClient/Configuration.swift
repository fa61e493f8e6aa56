import FlagCore
import FlagSigning
import Foundation

extension FlagClient {
    /// Everything a client needs: the server, the set, the key, where to cache, and how to refresh.
    ///
    /// ```swift
    /// var configuration = FlagClient.Configuration(
    ///     server: URL(string: "https://flags.example.com")!, set: "ios-prod", sdkKey: key, cacheDirectory: caches)
    /// configuration.refresh = .poll
    /// configuration.overridesEnabled = false   // production builds
    /// ```
    public struct Configuration: Sendable {
        /// The server's base URL, e.g. `https://flags.example.com`.
        public var server: URL
        /// The flag set this client subscribes to, e.g. `ios-prod`.
        public var set: String
        /// The SDK key (read-only, scoped to `set`). Never logged.
        public var sdkKey: String
        /// Where the SQLite cache lives; `nil` keeps nothing on disk (and persisted sessions last one process).
        public var cacheDirectory: URL?
        /// How to stay fresh: `.stream`, `.poll`, `.longPoll` or `.off`. Unless set, `.stream` for a
        /// ``CacheAccess/readWrite`` client and `.off` for a ``CacheAccess/readOnly`` one, which takes the app's sets
        /// from the shared cache instead.
        public var refresh: RefreshMode {
            get { explicitRefresh ?? (cacheAccess == .readOnly ? .off : .stream) }
            set { explicitRefresh = newValue }
        }
        /// Seconds between polls with `.poll` (and after the stream falls back to polling). Default 30.
        public var pollInterval: Double = 30
        /// Seconds the server may hold a long poll. Default 30.
        public var longPollWait: Int = 30
        /// An env file of local overrides; `nil` uses `FLAGS_OVERRIDE_FILE` from the environment, if set.
        public var overridesFile: String?
        /// Whether local overrides (file, `FLAG_*` variables, `setOverride`) apply. Turn off for production builds.
        public var overridesEnabled: Bool = true
        /// The environment read for `FLAG_*` overrides and `FLAGS_OVERRIDE_FILE`.
        public var environment: [String: String] = ProcessInfo.processInfo.environment
        /// How long a persisted session keeps its frozen values, in seconds from its creation. Default 24 h.
        public var sessionTTL: Double = 24 * 3600
        /// A flag-set document shipped with the program (`flagctl export` at build time); seeds an empty cache.
        /// With ``trustedKeys``, it must be the exact bytes `flagctl export --signed FILE` wrote, and
        /// ``bootstrapSignature`` the text of `FILE.sig`.
        public var bootstrap: [UInt8]?
        /// The signature of ``bootstrap``: the text of the `FILE.sig` that `flagctl export --signed FILE` writes,
        /// `v1; key=ID; sig=BASE64` (a trailing newline is ignored). Checked only with ``trustedKeys``; a bootstrap
        /// document without a valid one is then not used.
        ///
        /// ```swift
        /// let file = Bundle.main.url(forResource: "flags", withExtension: "json")!
        /// configuration.bootstrap = Array(try Data(contentsOf: file))
        /// configuration.bootstrapSignature = try String(contentsOf: file.appendingPathExtension("sig"), encoding: .utf8)
        /// ```
        public var bootstrapSignature: String?
        /// The public keys whose signatures the client accepts (`flagctl signing-key show`; import `FlagSigning`).
        /// Empty by default: nothing is verified. With one or more, the client activates only documents and patches
        /// that one of them signed for this set, never a version lower than the one in use or the bootstrap
        /// document's, and starts only from a cache and a bootstrap document that verify (docs/client.md). List the
        /// next key too before a rotation, so that the switch happens without a refusal.
        ///
        /// ```swift
        /// configuration.trustedKeys = [try SigningKey(base64: "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")]
        /// ```
        public var trustedKeys: [SigningKey] = []
        /// Receives the client's log messages; none is printed when `nil`.
        public var logger: (@Sendable (FlagClientLogMessage) -> Void)?
        /// Whether evaluations are counted and reported to the server, and how often: `.every(seconds: 60)` by
        /// default, `.off` to count and send nothing. With `refresh = .off` nothing is reported either.
        public var telemetry: TelemetryMode = .every(seconds: 60)
        /// The app's name and version in reports: from the main bundle's `CFBundleName` and
        /// `CFBundleShortVersionString` when it has both, else `nil` (the report then names no app).
        public var app: TelemetryReport.Software? = FlagClient.app(infoDictionary: Bundle.main.infoDictionary)

        // MARK: When new versions take effect

        /// When a version that arrives while the process runs is put in use: at once for new sessions
        /// (``FlagClient/ApplyPolicy/nextSession``, the default), at the next launch
        /// (``FlagClient/ApplyPolicy/nextLaunch``), or when the app calls ``FlagClient/activate()``
        /// (``FlagClient/ApplyPolicy/manual``). Kills apply at once under every policy.
        ///
        /// ```swift
        /// configuration.applyNewVersions = .nextLaunch
        /// ```
        public var applyNewVersions: FlagClient.ApplyPolicy = .nextSession

        // MARK: App extensions

        /// Whether this client writes the cache (`.readWrite`, the default: the app) or only reads what another
        /// process of the app wrote there (`.readOnly`: a widget, a notification service or a share extension). Point
        /// ``cacheDirectory`` of both at the same App Group container.
        ///
        /// ```swift
        /// var configuration = FlagClient.Configuration(server: url, set: "ios-prod", sdkKey: key, cacheDirectory: group)
        /// configuration.cacheAccess = .readOnly   // in the widget; the app keeps .readWrite
        /// ```
        public var cacheAccess: CacheAccess = .readWrite
        /// ``refresh`` as set, or `nil` for the default of ``cacheAccess``.
        private var explicitRefresh: RefreshMode?

        /// A configuration with the defaults above.
        public init(server: URL, set: String, sdkKey: String, cacheDirectory: URL?) {
            self.server = server
            self.set = set
            self.sdkKey = sdkKey
            self.cacheDirectory = cacheDirectory
        }
    }
}

extension FlagClient {
    /// Whether a client writes its cache or only reads it: see ``Configuration/cacheAccess``.
    public enum CacheAccess: Sendable, Hashable {
        /// Reads and writes the cache: downloads, persisted sessions and overrides are stored. The app's setting.
        case readWrite
        /// Only reads the cache another process (the app) writes: nothing is stored, no write lock is taken, and the
        /// newest set the app stored is read when a session starts and on ``FlagClient/reload()``. For app
        /// extensions.
        case readOnly
    }
}

/// What the client depends on at run time; tests replace each with a deterministic double.
struct ClientDependencies: Sendable {
    /// The current time (before the server-clock correction).
    var now: @Sendable () -> Date
    /// A number in [0, 1) for the backoff's and the telemetry reports' jitter.
    var random: @Sendable () -> Double
    /// Waits `seconds`; throws when the task is cancelled.
    var sleep: @Sendable (Double) async throws -> Void
    /// HTTP.
    var transport: any FlagTransport

    /// The system clock, the system random generator, `Task.sleep`, and URLSession.
    static func live() -> ClientDependencies {
        ClientDependencies(
            now: { Date() },
            random: { Double.random(in: 0..<1) },
            sleep: { seconds in try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9)) },
            transport: URLSessionTransport())
    }
}

/// Why a client could not be created.
public struct FlagClientError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        case invalidConfiguration
    }

    private let code: Code
    /// What is wrong and how to fix it.
    public let message: String

    static func invalidConfiguration(_ message: String) -> FlagClientError {
        FlagClientError(code: .invalidConfiguration, message: message)
    }

    /// The message.
    public var description: String { message }
}
