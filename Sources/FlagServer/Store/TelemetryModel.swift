import FlagCore
import Foundation

/// One client instance as the store keeps it: the id the server issued, when a server first and last heard of it,
/// its latest report (without counts), and when it was first seen at each version it reported.
package struct StoredInstance: Sendable, Hashable {
    /// The set the instance reads.
    package var set: String
    /// The id the server issued, e.g. `in_3q2x…`.
    package var id: String
    /// When the id was issued (server clock).
    package var firstSeen: Date
    /// When a server last issued it to a connection or received a report naming it (server clock).
    package var lastSeen: Date
    /// The latest report, `TelemetryReport.encoded()` with no counts; `nil` before the first.
    package var report: [UInt8]?
    /// For each version the instance reported, when a server first received a report at it (server clock). Only the
    /// newest `StoredInstance.appliedLimit` are kept.
    package var applied: [Int: Date]
    /// The name of the SDK key (or admin token) the id was issued to: a report with another is refused. `nil` for
    /// an id stored before servers kept it.
    package var key: String?

    /// How many versions `applied` keeps per instance.
    package static let appliedLimit = 16

    /// An instance.
    package init(
        set: String, id: String, firstSeen: Date, lastSeen: Date, report: [UInt8]?, applied: [Int: Date],
        key: String? = nil
    ) {
        self.set = set
        self.id = id
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.report = report
        self.applied = applied
        self.key = key
    }

    /// `applied` as stored: `version=seconds` pairs separated by spaces, seconds since 1970 with milliseconds.
    package var appliedText: String {
        applied.sorted { $0.key < $1.key }.map { "\($0.key)=\(String(format: "%.3f", $0.value.timeIntervalSince1970))" }
            .joined(separator: " ")
    }

    /// Reads `appliedText`; a pair that does not parse is skipped (it only costs a propagation figure).
    package static func applied(fromText text: String) -> [Int: Date] {
        var applied: [Int: Date] = [:]
        for pair in text.split(separator: " ") {
            let parts = pair.split(separator: "=")
            guard parts.count == 2, let version = Int(parts[0]), let seconds = Double(parts[1]) else { continue }
            applied[version] = Date(timeIntervalSince1970: seconds)
        }
        return applied
    }
}

/// Evaluations of one flag's variant in one hour, as the store aggregates them.
package struct UsageCount: Sendable, Hashable {
    /// The set.
    package var set: String
    /// The flag key (a client may count a key the set no longer has).
    package var flag: String
    /// The variant; `""` where the flag has none.
    package var variant: String
    /// The hour, as whole hours since 1970 (UTC).
    package var hour: Int
    /// Evaluations in that hour.
    package var count: Int
    /// The latest time a server received some of them (server clock).
    package var lastAt: Date

    /// A count.
    package init(set: String, flag: String, variant: String, hour: Int, count: Int, lastAt: Date) {
        self.set = set
        self.flag = flag
        self.variant = variant
        self.hour = hour
        self.count = count
        self.lastAt = lastAt
    }
}

/// What one flush of telemetry writes: instances to insert or replace, and counts to add.
package struct TelemetryBatch: Sendable {
    /// Instances, replacing any stored with the same set and id.
    package var instances: [StoredInstance] = []
    /// Counts, added to those stored for the same set, flag, variant and hour.
    package var counts: [UsageCount] = []

    /// A batch.
    package init(instances: [StoredInstance] = [], counts: [UsageCount] = []) {
        self.instances = instances
        self.counts = counts
    }

    /// Whether there is nothing to write.
    package var isEmpty: Bool { instances.isEmpty && counts.isEmpty }

    /// The batch as batches of at most `rows` instances and counts together, instances first.
    package func chunked(rows: Int) -> [TelemetryBatch] {
        let size = max(1, rows)
        var chunks: [TelemetryBatch] = []
        for start in stride(from: 0, to: instances.count, by: size) {
            chunks.append(TelemetryBatch(instances: Array(instances[start..<min(start + size, instances.count)])))
        }
        for start in stride(from: 0, to: counts.count, by: size) {
            chunks.append(TelemetryBatch(counts: Array(counts[start..<min(start + size, counts.count)])))
        }
        return chunks
    }
}

/// A set's settings (`GET`/`PUT /v1/admin/sets/{set}/settings`).
package struct SetSettings: Sendable, Hashable {
    /// What the compatibility gate does with a write that active clients cannot evaluate.
    package enum Compatibility: String, Sendable, Hashable, CaseIterable {
        /// Refuse it (422 `incompatible_clients`) when more than 0.1 % of active instances lack what it needs.
        case enforce
        /// Write it, and warn.
        case warn
        /// No check.
        case off
    }

    /// Whether a write of the set needs a change request that another person approved (docs/reviews.md).
    package enum Reviews: String, Sendable, Hashable, CaseIterable {
        /// Writes go ahead; anyone may still propose.
        case off
        /// A direct write is a 409 `review_required`, kills and restores aside.
        case required
    }

    /// The gate's mode; `enforce` unless set.
    package var compatibility: Compatibility = .enforce
    /// Whether writes need review; `off` unless set.
    package var reviews: Reviews = .off

    /// The defaults.
    package init(compatibility: Compatibility = .enforce, reviews: Reviews = .off) {
        self.compatibility = compatibility
        self.reviews = reviews
    }

    /// The settings as stored: name → value.
    package var stored: [String: String] { ["compatibility": compatibility.rawValue, "reviews": reviews.rawValue] }

    /// Settings from stored name → value pairs; an unknown name or value keeps the default.
    package init(stored: [String: String]) {
        if let value = stored["compatibility"], let mode = Compatibility(rawValue: value) { compatibility = mode }
        if let value = stored["reviews"], let mode = Reviews(rawValue: value) { reviews = mode }
    }
}
