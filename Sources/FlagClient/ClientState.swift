import Foundation

/// Where the client's flag values come from right now.
///
/// ```swift
/// switch client.state {
/// case .defaultsOnly: showOfflineBadge()
/// case .cached(let version), .live(let version): log("flags v\(version)")
/// case .stale(let since): log("flags not refreshed since \(since)")
/// case .refused(let version, let refusal): log("serving v\(version ?? 0); refused: \(refusal)")
/// }
/// ```
public enum ClientState: Sendable, Hashable {
    /// No flag set at all: every flag serves its compiled-in default (or a local override).
    case defaultsOnly
    /// A set read from the disk cache or the bootstrap document, not confirmed by the server yet.
    case cached(version: Int)
    /// A set confirmed by the server, with the connection (or polling) healthy.
    case live(version: Int)
    /// A set was live, but the connection has failed since this time; values come from the last set received.
    case stale(since: Date)
    /// With trusted keys: a document or a patch was refused (unsigned, badly signed, older than the set in use…),
    /// and the set of `version` stays in use (`nil`: compiled-in defaults). Until the server confirms a set, a newer
    /// one or the one in use (`live`).
    case refused(version: Int?, SetRefusal)

    /// The version of the set in use, when the state names one.
    public var version: Int? {
        switch self {
        case .cached(let version), .live(let version): version
        case .refused(let version, _): version
        case .defaultsOnly, .stale: nil
        }
    }
}

/// Something the client did that an app may want to show or log.
public struct FlagClientUpdate: Sendable, Hashable {
    /// The state after the change.
    public var state: ClientState
    /// The version of the set now in use; `nil` when only defaults are served.
    public var version: Int?
    /// The version received and stored but not in use yet, under an apply policy that holds new versions
    /// (``FlagClient/ApplyPolicy``); `nil` when none waits.
    public var pendingVersion: Int? = nil
}

/// A message from the client for the app's logger. Never carries an SDK key, a unit id or an attribute.
public struct FlagClientLogMessage: Sendable, Hashable, CustomStringConvertible {
    /// How serious it is.
    public enum Level: String, Sendable, Hashable, Comparable {
        /// Detail for following what the client does: cache reads, connections, timings.
        case debug
        /// Something worth knowing that needs no action: a set cached again, a retry honoured.
        case info
        /// Something went wrong and was served around: a bad override, a cache that could not be written.
        case warning
        /// Something needs a person: a refused SDK key or a refused update.
        case error

        /// Whether `lhs` is less serious than `rhs`, in the order debug, info, warning, error.
        public static func < (lhs: Level, rhs: Level) -> Bool {
            let order: [Level] = [.debug, .info, .warning, .error]
            return (order.firstIndex(of: lhs) ?? 0) < (order.firstIndex(of: rhs) ?? 0)
        }
    }

    /// How serious it is.
    public var level: Level
    /// What happened, for people.
    public var message: String

    /// Creates a message.
    public init(level: Level, message: String) {
        self.level = level
        self.message = message
    }

    /// The level in brackets, then the message: `[warning] could not cache set 'ios-prod' v42 …`.
    public var description: String { "[\(level.rawValue)] \(message)" }
}
