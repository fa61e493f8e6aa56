/// How the client keeps its flag set fresh.
public enum RefreshMode: Sendable, Hashable {
    /// Server-Sent Events (`/stream`), falling back to polling when the server has no stream endpoint.
    case stream
    /// `GET` with `If-None-Match` every poll interval.
    case poll
    /// `GET ?wait=SECONDS` with `If-None-Match`: the server answers as soon as a newer version exists.
    case longPoll
    /// No network at all: compiled defaults, the bootstrap document and the cache only.
    case off
}

/// The pure decisions of the refresh loop: what to do after each outcome, with exponential backoff (1 s doubling
/// to a 30 s cap, ±50 % jitter, reset after 60 s connected; a `Retry-After` of up to 10 minutes is a floor), and
/// when to give up on the stream or on the server.
/// It performs no I/O and reads no clock: times and randomness come in as arguments, so tests are exact.
struct RefreshStateMachine: Sendable {
    /// What the loop does next.
    enum Action: Sendable, Equatable {
        /// Open the SSE stream now.
        case openStream
        /// Fetch the document now (`wait` > 0 asks the server to long-poll).
        case fetch(waitSeconds: Int)
        /// Sleep, then ask `next()` again.
        case sleep(seconds: Double)
        /// Stop refreshing: the server refused the key. The set in use stays.
        case stop(status: Int)
    }

    /// What happened to the last attempt.
    enum Outcome: Sendable, Equatable {
        /// The stream answered 200 and is open.
        case streamOpened
        /// The open stream ended or broke; `silent` when not one byte (not even a heartbeat) came after the head.
        case streamEnded(silent: Bool)
        /// A fetch returned a document or 304.
        case fetched
        /// A long poll came back at once with nothing new: the server (or a proxy) does not hold long polls.
        case notHeld
        /// The server or network failed (connection refused, timeout, 5xx, 429 …).
        case failed
        /// The server failed and said, with `Retry-After`, not to ask again for this many seconds (429, 503 …).
        case throttled(retryAfter: Double)
        /// The stream endpoint does not exist here (404, 405, 501, or not `text/event-stream`).
        case streamUnsupported
        /// The data was bad (broken JSON, invalid set): the old set stays; counts as a failure.
        case badData
        /// 401 or 403.
        case unauthorized(status: Int)
        /// The server asked for this reconnection delay (`retry:` field) in seconds.
        case serverRetry(seconds: Double)
    }

    /// The first delay after a failure.
    static let initialDelay = 1.0
    /// No delay before jitter exceeds this.
    static let maximumDelay = 30.0
    /// The longest `Retry-After` honoured: a misconfigured server must not stop refreshing for days.
    static let maximumRetryAfter = 600.0
    /// A connection open this long counts as healthy: the next failure starts again at `initialDelay`.
    static let resetAfter = 60.0
    /// Silent streams in a row, each open at least `silentAfter` seconds, after which the loop polls instead: a proxy
    /// is buffering the stream (the server sends a heartbeat every 15 s). Failures to connect never switch to
    /// polling, which would fail the same way.
    static let silentStreamsBeforePolling = 2
    /// How long a stream must have been open without a byte to count as silent: two heartbeats missed.
    static let silentAfter = 30.0

    private(set) var mode: RefreshMode
    let pollInterval: Double
    let longPollWait: Int
    /// Failures since the last healthy connection; the next delay is `initialDelay × 2^failures`.
    private(set) var failures = 0
    private var connectedAt: Double?
    private var silentStreams = 0
    private var pending: Action
    private var serverRetry: Double?
    private(set) var stopped = false

    /// A machine for `mode`; `pollInterval` in seconds between polls, `longPollWait` seconds the server may hold a
    /// long poll.
    init(mode: RefreshMode, pollInterval: Double, longPollWait: Int = 30) {
        self.mode = mode
        self.pollInterval = max(1, pollInterval)
        self.longPollWait = max(1, longPollWait)
        switch mode {
        case .stream: pending = .openStream
        case .poll: pending = .fetch(waitSeconds: 0)
        case .longPoll: pending = .fetch(waitSeconds: 0)
        case .off: pending = .stop(status: 0)
        }
    }

    /// The next action to take.
    mutating func next() -> Action {
        let action = pending
        // After a sleep, the action that the sleep was delaying.
        if case .sleep = action { pending = attemptAction() }
        return action
    }

    /// Records the outcome of the last attempt at time `now` (seconds), with `random` in [0, 1) for the jitter,
    /// and decides the next action.
    mutating func record(_ outcome: Outcome, now: Double, random: Double) {
        guard !stopped else { return }
        switch outcome {
        case .serverRetry(let seconds):
            serverRetry = max(0, seconds)
            return
        case .streamOpened:
            connectedAt = now
            pending = attemptAction()  // not used until the stream ends
            return
        case .fetched:
            failures = 0
            connectedAt = nil
            // A long poll returns when something changed or the wait ended: ask again at once.
            pending = mode == .longPoll ? .fetch(waitSeconds: longPollWait) : .sleep(seconds: pollInterval)
            return
        case .notHeld:
            failures = 0
            connectedAt = nil
            // Asking again at once would loop as fast as the network allows: wait like a poll, then long-poll again
            // (a server that does hold will answer the next one when something changes).
            pending = .sleep(seconds: pollInterval)
            return
        case .unauthorized(let status):
            stopped = true
            pending = .stop(status: status)
            return
        case .streamUnsupported:
            mode = .poll
            failures = 0
            pending = .fetch(waitSeconds: 0)
            return
        case .streamEnded(let silent):
            let openFor = connectedAt.map { now - $0 } ?? 0
            if silent, openFor >= Self.silentAfter {
                silentStreams += 1
                if silentStreams >= Self.silentStreamsBeforePolling { mode = .poll }
            } else if !silent {
                silentStreams = 0
            }
            if openFor >= Self.resetAfter { failures = 0 }
            connectedAt = nil
        case .failed, .badData, .throttled:
            if let connectedAt, now - connectedAt >= Self.resetAfter { failures = 0 }
            connectedAt = nil
        }
        var seconds = delay(random: random)
        if case .throttled(let retryAfter) = outcome {
            // The server's wish is a floor, never shortened by jitter; the backoff still grows beneath it.
            seconds = max(seconds, min(max(0, retryAfter), Self.maximumRetryAfter))
        }
        pending = .sleep(seconds: seconds)
        failures += 1
    }

    /// The delay for the current failure count: `min(30, 2^failures)` seconds, times a factor in [0.5, 1.5), at most
    /// 30 s; a `retry:` the server sent replaces the exponential base.
    func delay(random: Double) -> Double {
        let exponent = min(failures, 16)
        var base = min(Self.maximumDelay, Self.initialDelay * Double(1 << exponent))
        if let serverRetry, failures == 0 { base = min(Self.maximumDelay, max(serverRetry, 0.1)) }
        let factor = 0.5 + min(max(random, 0), 1)
        return min(Self.maximumDelay, base * factor)
    }

    /// Starts again after the app suspended the loop (the task running it was cancelled mid-action): the next
    /// action is an attempt at once, with no backoff left over. `false` when there is nothing to start: the key was
    /// refused, or the mode is `.off`.
    mutating func resume() -> Bool {
        guard !stopped, mode != .off else { return false }
        failures = 0
        connectedAt = nil
        pending = attemptAction()
        return true
    }

    private func attemptAction() -> Action {
        switch mode {
        case .stream: .openStream
        case .poll: .fetch(waitSeconds: 0)
        case .longPoll: .fetch(waitSeconds: longPollWait)
        case .off: .stop(status: 0)
        }
    }
}
