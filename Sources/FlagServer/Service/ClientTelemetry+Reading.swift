import FlagCore
import Foundation

/// What the admin routes and `/metrics` read of client telemetry.
extension ClientTelemetry {
    /// A reported instance, as the admin routes show it.
    struct Instance {
        let stored: StoredInstance
        let report: TelemetryReport
    }

    /// Flushes from a thread other than `queue`'s (a shutdown), so that what this server took is in the store when it
    /// returns.
    func flushNow() {
        queue.sync { flush() }
    }

    /// The set's instances that reported within `within` seconds, on any server sharing the store
    /// (`InstanceReader`). Flush first (`flush` on `queue`, `flushNow` elsewhere) for this server's latest reports to
    /// be in the answer.
    func instances(set: String, within: TimeInterval) throws -> [Instance] {
        try reader.instances(set: set, within: within)
    }

    /// The set's instances active now (reported within `activeWindow`), for the compatibility gate: every server's, as
    /// flushed to the store, with this server's own reports taken since, read from memory. It never waits for
    /// `queue`, so a write on the store queue does not queue behind reports.
    func activeInstances(set: String) throws -> [Instance] {
        let now = clock.now()
        var active: [String: Instance] = [:]
        for instance in try reader.instances(set: set, within: limits.activeWindow) {
            active[instance.stored.id] = instance
        }
        let local = state.withLock { state in
            state.instances.filter { $0.key.set == set && $0.value.reported }.map(\.value.stored)
        }
        for stored in local where now.timeIntervalSince(stored.lastSeen) <= limits.activeWindow {
            guard (active[stored.id]?.stored.lastSeen ?? .distantPast) < stored.lastSeen, let bytes = stored.report
            else { continue }
            // The report's own encoding, made by `accept` from a report it decoded: it decodes.
            guard let report = try? TelemetryReport.decode(bytes) else { continue }
            active[stored.id] = Instance(stored: stored, report: report)
        }
        return active.values.sorted { $0.stored.id < $1.stored.id }
    }

    /// Connections to `set` this server holds whose client has not reported: SDKs from before telemetry, or
    /// telemetry turned off.
    func silentConnections(set: String) -> Int {
        state.withLock { state in
            state.instances.reduce(0) { count, entry in
                count + (entry.key.set == set && entry.value.openStreams > 0 && !entry.value.reported ? 1 : 0)
            }
        }
    }

    /// Instances tracked by this server now, for `/metrics`.
    var trackedInstances: Int { state.withLock { $0.instances.count } }

    /// Evaluations reported per set since the server started, for `/metrics`.
    var evaluations: [String: Int] { state.withLock { $0.evaluations } }

    /// Active instances per set and applied version, for `/metrics`'s `flagserver_clients`.
    var clientsByVersion: [String: [Int?: Int]] { state.withLock { $0.clientsByVersion } }

    /// Reads the active instances of `sets` from the store for `clientsByVersion`, at most every 10 s (the store
    /// is shared, so every server shows the same figures). Runs on `queue`, after a flush.
    func refreshClientGauge(sets: [String]) {
        let now = clock.now()
        guard state.withLock({ now.timeIntervalSince($0.gaugeRefreshed) >= 10 }) else { return }
        var gauge: [String: [Int?: Int]] = [:]
        do {
            for set in sets {
                for instance in try instances(set: set, within: limits.activeWindow) {
                    gauge[set, default: [:]][instance.report.version, default: 0] += 1
                }
            }
        } catch {
            log("reading client instances for /metrics failed: \(error)")
            return
        }
        state.withLock { state in
            state.clientsByVersion = gauge
            state.gaugeRefreshed = now
        }
    }
}
