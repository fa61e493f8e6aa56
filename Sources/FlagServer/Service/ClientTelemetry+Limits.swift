import Foundation

/// What `ClientTelemetry` bounds, and what it counts when a bound drops something.
extension ClientTelemetry {
    /// The bounds and intervals.
    public struct Limits: Sendable {
        /// Instances tracked per SDK key (or admin token) at once.
        public var instancesPerKey = 20_000
        /// Instances tracked in all.
        public var instances = 100_000
        /// Distinct flag keys aggregated per set between two flushes.
        public var flagsPerSet = 10_000
        /// Reports one instance may send at once before it is held to one per `reportInterval`.
        public var reportBurst = 5.0
        /// Seconds between reports of one instance, once its burst is spent.
        public var reportInterval = 5.0
        /// Reports per second per key, and the burst: every instance of a large fleet reports within 3 s of a kill.
        public var reportsPerKeyPerSecond = 10_000.0
        /// Reports per second per source address, and the burst.
        public var reportsPerAddressPerSecond = 1_000.0
        /// Source addresses remembered by the rate limiter at once (the oldest are forgotten).
        public var addresses = 10_000
        /// Instances and counts written per transaction of a flush, so that an admin write sharing the store's
        /// connection (SQLite) waits at most one short transaction.
        public var rowsPerTransaction = 250
        /// How long an id stays valid after its connection closed, and an instance listed after its last report.
        public var expiry: TimeInterval = 600
        /// How recent a report must be for its instance to count as active (propagation, the gate).
        public var activeWindow: TimeInterval = 300
        /// Days of counts kept.
        public var retentionDays = 90

        /// The defaults of docs/telemetry.md.
        public init() {}
    }

    /// Why a report was refused or something was dropped; the raw value is the `reason` label of `/metrics`.
    public enum DropReason: String, Sendable, CaseIterable {
        case invalid
        case unknownInstance = "unknown_instance"
        case rateLimitedInstance = "rate_limited_instance"
        case rateLimitedKey = "rate_limited_key"
        case rateLimitedAddress = "rate_limited_address"
        case instanceCap = "instance_cap"
        case flagCap = "flag_cap"
        case flushFailed = "flush_failed"
    }
}
