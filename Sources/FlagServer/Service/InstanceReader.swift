import FlagCore
import FlagLock
import Foundation

/// Reads the client instances of the store for `ClientTelemetry`: the instances of every server sharing it, decoded,
/// as of the last read.
final class InstanceReader: Sendable {
    private let store: TelemetryStore
    private let clock: ServerClock
    /// How long an instance is listed after it was last seen.
    private let expiry: TimeInterval
    private let views = Locked([String: InstanceView]())

    init(store: TelemetryStore, clock: ServerClock, expiry: TimeInterval) {
        self.store = store
        self.clock = clock
        self.expiry = expiry
    }

    /// The set's instances that reported within `within` seconds.
    ///
    /// Read incrementally: each call asks the store only for the rows seen since the one before (less
    /// `readOverlap`, for rows another server flushed late), and keeps the decoded instances of the last `expiry`.
    /// A call then costs what changed, not every active instance, which matters while `flagctl --wait` polls the
    /// propagation route and the store's connection is the one admin writes use.
    func instances(set: String, within: TimeInterval) throws -> [ClientTelemetry.Instance] {
        let now = clock.now()
        let from = views.withLock { $0[set]?.readUpTo.addingTimeInterval(-Self.readOverlap) }
        let rows = try store.instances(set: set, seenSince: from ?? now.addingTimeInterval(-expiry))
        var decoded: [String: ClientTelemetry.Instance?] = [:]
        for stored in rows {
            // A stored report this build cannot read (a newer server's, or damage) leaves its instance out.
            let report = stored.report.flatMap { try? TelemetryReport.decode($0) }
            // `updateValue`, not the subscript: assigning nil through it would drop the key, not keep "no report".
            decoded.updateValue(report.map { ClientTelemetry.Instance(stored: stored, report: $0) }, forKey: stored.id)
        }
        return views.withLock { views in
            var view = views[set] ?? InstanceView()
            for (id, instance) in decoded {
                if let instance {
                    if (view.instances[id]?.stored.lastSeen ?? .distantPast) <= instance.stored.lastSeen {
                        view.instances[id] = instance
                    }
                } else {
                    view.instances[id] = nil  // issued, not reported yet
                }
            }
            let expired = now.addingTimeInterval(-expiry)
            view.instances = view.instances.filter { $0.value.stored.lastSeen >= expired }
            view.readUpTo = max(view.readUpTo, now)
            views[set] = view
            let since = now.addingTimeInterval(-within)
            return view.instances.values.filter { $0.stored.lastSeen >= since }.sorted { $0.stored.id < $1.stored.id }
        }
    }

    /// How far back each incremental read starts before the last one: a row another server flushed late (its flush
    /// runs every half second, in short transactions) carries a time a little before it was written.
    static let readOverlap: TimeInterval = 5

    /// The decoded instances of one set, as of `readUpTo`.
    private struct InstanceView {
        var instances: [String: ClientTelemetry.Instance] = [:]
        var readUpTo = Date.distantPast
    }
}
