/// When the client sends its next telemetry report: every period in the background, soon after a new set version
/// is applied (1 s plus up to 2 s of jitter, so that clients that got a kill together do not report together), not
/// before a `Retry-After`, and, after the server said it does not know the instance, only once it has issued an id
/// again. I/O-free and reads no clock: times (seconds) and randomness come in as arguments.
struct TelemetrySchedule: Sendable, Equatable {
    /// What became of a report.
    enum Outcome: Sendable, Equatable {
        /// 204: the counts were taken. `more` when the backlog did not fit in one report.
        case accepted(more: Bool)
        /// The network or the server failed (5xx and the like), or there was no instance id to report under: the
        /// counts are kept for the next period.
        case failed
        /// 429 (or 503) with `Retry-After`: the counts are kept, and nothing is sent for that many seconds.
        case throttled(retryAfter: Double)
        /// 422 `unknown_instance`: the counts are kept until the server issues an id again.
        case unknownInstance
        /// 400, 413 or another 422: that report would never pass; its counts are dropped.
        case rejected
        /// 401, 403, or no telemetry route (404, 405, 501): reporting stops for the client's life.
        case refused
    }

    /// The soonest report after a new version: 1 s, plus `random` × `jitter`.
    static let soonAfterApply = 1.0
    /// The most jitter added to `soonAfterApply`.
    static let jitter = 2.0
    /// The server takes one report every 5 s from an instance (after a burst of five): the rest of a backlog too
    /// large for one report follows this much later.
    static let backlogInterval = 5.0
    /// The longest `Retry-After` honoured, as the refresh loop's: a misconfigured server must not silence reports for
    /// days.
    static let maximumRetryAfter = RefreshStateMachine.maximumRetryAfter

    let period: Double
    /// When the next report is due.
    private(set) var due: Double
    /// No report before this time (a `Retry-After`).
    private var notBefore = -Double.infinity
    /// The server did not know the instance: wait for it to issue one again.
    private(set) var awaitingInstance = false
    /// Reporting stopped for good.
    private(set) var stopped = false

    /// A schedule whose first report is due a period after `now`.
    init(period: Double, now: Double) {
        self.period = period
        self.due = now + period
    }

    /// When the next report goes; `nil` once reporting has stopped, `.infinity` while waiting for an instance id.
    var next: Double? { stopped ? nil : max(due, notBefore) }

    /// Seconds from `now` until the next report (0 when it is due); `nil` once reporting has stopped.
    func delay(now: Double) -> Double? {
        next.map { max(0, $0 - now) }
    }

    /// A new version was applied at `now`: report within `soonAfterApply` plus `random` × `jitter` seconds, unless a
    /// report is due sooner (or the server must first issue an id).
    mutating func versionApplied(now: Double, random: Double) {
        guard !awaitingInstance else { return }
        due = min(due, now + Self.soon(random))
    }

    /// The server issued an instance id (new, or the same one bound to a new connection). After `unknownInstance`,
    /// the kept counts go soon, with the same jitter as after a version.
    mutating func instanceIssued(now: Double, random: Double) {
        guard awaitingInstance else { return }
        awaitingInstance = false
        due = now + Self.soon(random)
    }

    /// A report is being sent: none is due until `record`, unless an event (a version applied meanwhile) calls for
    /// one.
    mutating func sending() {
        due = .infinity
    }

    /// Records what became of the report sent before `now`. An event that arrived while it was on its way keeps the
    /// sooner time it asked for.
    mutating func record(_ outcome: Outcome, now: Double) {
        switch outcome {
        case .accepted(let more):
            due = min(due, now + (more ? min(Self.backlogInterval, period) : period))
        case .failed, .rejected:
            due = min(due, now + period)
        case .throttled(let retryAfter):
            notBefore = now + min(max(0, retryAfter), Self.maximumRetryAfter)
            due = notBefore
        case .unknownInstance:
            awaitingInstance = true
            due = .infinity
        case .refused:
            stopped = true
        }
    }

    private static func soon(_ random: Double) -> Double {
        soonAfterApply + min(max(random, 0), 1) * jitter
    }
}
