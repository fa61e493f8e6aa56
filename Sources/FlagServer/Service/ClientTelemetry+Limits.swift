import Foundation

/// What `ClientTelemetry` bounds, and what it counts when a bound drops something.
extension ClientTelemetry {
    /// The bounds and intervals.
    package struct Limits: Sendable {
        /// Instances tracked per SDK key (or admin token) at once; a new one beyond it evicts the one that reported
        /// least recently (never-reported ids first).
        package var instancesPerKey = 20_000
        /// Instances tracked in all.
        package var instances = 100_000
        /// Distinct flag keys aggregated per set between two flushes.
        package var flagsPerSet = 10_000
        /// Reports one instance may send at once before it is held to one per `reportInterval`.
        package var reportBurst = 5.0
        /// Seconds between reports of one instance, once its burst is spent.
        package var reportInterval = 5.0
        /// Reports per second per key, and the burst: every instance of a large fleet reports within 3 s of a kill.
        package var reportsPerKeyPerSecond = 10_000.0
        /// Reports per second per source address, and the burst.
        package var reportsPerAddressPerSecond = 1_000.0
        /// New instance ids one client address may be issued at once, before it is held to `mintsPerSecond`.
        package var mintBurst = 20.0
        /// New instance ids per second per client address, once the burst is spent; beyond it an answer carries
        /// no id.
        package var mintsPerSecond = 1.0
        /// Distinct flag × variant rows kept per set and hour; a new row beyond it is dropped.
        package var rowsPerSetPerHour = 50_000
        /// How long after its last version a flag's counts are still kept (a client may run ahead of a deletion,
        /// or behind a change).
        package var retiredFlagWindow: TimeInterval = 86_400
        /// Source addresses remembered by the rate limiter at once (the oldest are forgotten).
        package var addresses = 10_000
        /// Instances and counts written per transaction of a flush, so that an admin write sharing the store's
        /// connection (SQLite) waits at most one short transaction.
        package var rowsPerTransaction = 250
        /// How long an id that reported stays valid after its connection closed, and an instance listed after its
        /// last report.
        package var expiry: TimeInterval = 600
        /// How long an id that has not reported yet stays valid, from its issue (or its stream's close): until its
        /// first report it is provisional and counts nowhere.
        package var provisionalExpiry: TimeInterval = 60
        /// How recent a report must be for its instance to count as active (propagation, the gate).
        package var activeWindow: TimeInterval = 300
        /// Days of counts kept.
        package var retentionDays = 90

        /// The defaults of docs/telemetry.md.
        package init() {}
    }

    /// Why a report was refused or something was dropped; the raw value is the `reason` label of `/metrics`.
    package enum DropReason: String, Sendable, CaseIterable {
        case invalid
        case unknownInstance = "unknown_instance"
        case rateLimitedInstance = "rate_limited_instance"
        case rateLimitedKey = "rate_limited_key"
        case rateLimitedAddress = "rate_limited_address"
        case instanceCap = "instance_cap"
        /// An instance evicted to make room for a new one at the per-key cap.
        case instanceEvicted = "instance_evicted"
        /// A poll or stream answered without an id: its address is over the minting rate.
        case mintRateLimited = "mint_rate_limited"
        case flagCap = "flag_cap"
        /// A count of a flag the set does not have (nor had in the last day).
        case unknownFlag = "unknown_flag"
        /// A count of a variant its flag cannot report.
        case unknownVariant = "unknown_variant"
        /// A count beyond `rowsPerSetPerHour`.
        case rowCap = "row_cap"
        case flushFailed = "flush_failed"
    }
}
