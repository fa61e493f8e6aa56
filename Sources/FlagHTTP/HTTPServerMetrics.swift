import FlagLock
import Synchronization

/// A snapshot of the engine's counters, for `/metrics`.
public struct HTTPServerMetrics: Sendable, Equatable {
    /// Connections open right now (streams included).
    public var openConnections: Int
    /// Streamed responses (`startStream`) open right now.
    public var openStreams: Int
    /// Connections accepted since start (including those refused by the connection cap).
    public var acceptedConnections: Int
    /// Requests parsed and handed to the handler since start.
    public var requests: Int
    /// Requests or connections the engine refused or cut off, by reason: the parser's error codes
    /// (`bad_request`, `payload_too_large`, `uri_too_long`, `header_fields_too_large`, `not_implemented`,
    /// `http_version_not_supported`), `connection_limit`, `connection_limit_per_address`, `header_timeout`,
    /// `body_timeout`, `idle_timeout`, `slow_reader` and `accept_failed`.
    public var rejections: [String: Int]
}

/// The live counters behind `HTTPServerMetrics`, shared by the loops.
final class MetricsStorage: Sendable {
    let openConnections = Atomic<Int>(0)
    let openStreams = Atomic<Int>(0)
    let acceptedConnections = Atomic<Int>(0)
    /// Rare events only, so one lock is cheaper than a counter per reason.
    private let rejections = Locked<[String: Int]>([:])

    func count(_ reason: String) {
        rejections.withLock { $0[reason, default: 0] += 1 }
    }

    func snapshot(requests: Int) -> HTTPServerMetrics {
        HTTPServerMetrics(
            openConnections: openConnections.load(ordering: .relaxed),
            openStreams: openStreams.load(ordering: .relaxed),
            acceptedConnections: acceptedConnections.load(ordering: .relaxed),
            requests: requests,
            rejections: rejections.withLock { $0 })
    }
}
