import Dispatch
import FlagLock
import Foundation
import Synchronization

/// Applies the scheduled change requests at their time (docs/reviews.md). Every `interval` it asks the store which
/// are due and applies them on the store queue, one write among the admin writes. Each server sharing a store does
/// this, and a request is applied once however many try: the version and the request's `applied` are stored in one
/// transaction, and the others find it applied.
final class ChangeScheduler: Sendable {
    /// Upper bounds of the lateness buckets of `/metrics`, in seconds.
    static let bounds: [Double] = [0.1, 0.25, 0.5, 1, 2, 5, 30, 300, 3600]

    private let service: FlagService
    private let queue: DispatchQueue
    private let timer = Locked<HeartbeatTimer?>(nil)
    /// Whether a pass waits on the store queue already: a busy queue gets one pass, not one per tick.
    private let passQueued = Atomic<Bool>(false)
    private let passes = Atomic<Int>(0)
    /// How late each applied change came, counted per bucket of `bounds` (the last: later than all), with the sum.
    private let lateness = Locked<(buckets: [Int], sum: Double)>(([Int](repeating: 0, count: bounds.count + 1), 0))
    /// Open (or approved) and scheduled requests on the store, refreshed every 20th pass.
    private let pending = Locked<(open: Int, scheduled: Int)?>(nil)

    /// A scheduler of `service`'s change requests, applying them on `queue` (the store queue).
    init(service: FlagService, queue: DispatchQueue) {
        self.service = service
        self.queue = queue
    }

    /// Looks for due changes every `interval`, from a timer on `timers`.
    func start(every interval: Duration, on timers: DispatchQueue) {
        let source = DispatchSource.makeTimerSource(queue: timers)
        source.schedule(deadline: .now(), repeating: interval.timeInterval, leeway: .milliseconds(20))
        source.setEventHandler { [self] in tick() }
        source.resume()
        timer.withLock { old in
            old?.source.cancel()
            old = HeartbeatTimer(source: source)
        }
    }

    /// Stops looking; a pass already on the store queue finishes.
    func stop() {
        timer.withLock { timer in
            timer?.source.cancel()
            timer = nil
        }
    }

    /// Queues one pass on the store queue, unless one waits there already.
    func tick() {
        guard !passQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            passQueued.store(false, ordering: .releasing)
            pass()
        }
    }

    /// Applies what is due, and notes how late it came.
    func pass() {
        let applied = service.applyDueProposals()
        if !applied.isEmpty {
            lateness.withLock { lateness in
                for seconds in applied {
                    lateness.buckets[Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count] += 1
                    lateness.sum += seconds
                }
            }
        }
        if passes.add(1, ordering: .relaxed).oldValue % 20 == 0 {
            do {
                let counts = try service.storeCall { try service.store.proposals.pending() }
                pending.withLock { $0 = counts }
            } catch {
                service.log("counting the change requests failed: \(error)")
            }
        }
    }

    /// The scheduler's metrics: pending requests, and how late scheduled changes were applied.
    func render(into metrics: inout MetricsText) {
        if let counts = pending.withLock({ $0 }) {
            metrics.family(
                "flagserver_change_requests", .gauge,
                help: "Change requests on the store by state (open counts approved ones too); refreshed every few "
                    + "seconds.")
            metrics.sample("flagserver_change_requests", ["state": "open"], counts.open)
            metrics.sample("flagserver_change_requests", ["state": "scheduled"], counts.scheduled)
        }
        let (buckets, sum) = lateness.withLock { $0 }
        metrics.family(
            "flagserver_scheduled_change_lateness_seconds", .histogram,
            help: "How long after its time this server applied each scheduled change.")
        metrics.histogram(
            "flagserver_scheduled_change_lateness_seconds", bounds: Self.bounds, buckets: buckets,
            count: buckets.reduce(0, +), sum: sum)
    }
}
