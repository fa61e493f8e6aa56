import FlagCore
import FlagLock
import Foundation

/// Sends the client's telemetry reports (`POST /v1/sets/{set}/telemetry`, docs/telemetry.md): the instance id the
/// refresh loop last heard, the set version in use and when it was applied, and the counts the sessions made,
/// when `TelemetrySchedule` says so.
///
/// A lock box with a loop rather than an actor: the events that move the schedule (a new version in
/// `ClientCore.publish`, an id in the refresh loop) come from synchronous code, which must not wait for the loop,
/// and an event cancels the loop's sleep so that the report it calls for is not held back by a period.
final class TelemetryReporter: Sendable {
    private struct State: Sendable {
        var schedule: TelemetrySchedule
        var instance: String?
        var applied: (version: Int, at: Date)?
        /// The loop's current sleep, which an event cuts short.
        var sleeper: Task<Void, any Error>?
        /// Counts the events, so that one arriving as the loop starts a sleep still cuts it short.
        var events = 0
        /// The app suspended the client: nothing is sent until it resumes; counts and the backlog wait.
        var paused = false
    }

    /// What the sessions count; the loop takes it at each report.
    let counter = EvaluationCounter()
    private let state: Locked<State>
    private let endpoint: URL
    private let sdkKey: String
    private let app: TelemetryReport.Software?
    private let period: Double
    private let dependencies: ClientDependencies
    private let bounds: TelemetryBacklog.Bounds
    private let logger: (@Sendable (FlagClientLogMessage) -> Void)?

    /// A reporter for `configuration`, sending every `period` seconds; `applied` is the version in use at launch
    /// (from the cache or the bootstrap document).
    init(
        configuration: FlagClient.Configuration, period: Double, dependencies: ClientDependencies,
        applied: (version: Int, at: Date)?, bounds: TelemetryBacklog.Bounds = .standard
    ) {
        self.endpoint = configuration.server.appendingPathComponent("v1/sets/\(configuration.set)/telemetry")
        self.sdkKey = configuration.sdkKey
        self.app = configuration.app?.reportable
        self.period = period
        self.dependencies = dependencies
        self.bounds = bounds
        self.logger = configuration.logger
        let schedule = TelemetrySchedule(period: period, now: dependencies.now().timeIntervalSince1970)
        self.state = Locked(State(schedule: schedule, applied: applied))
    }

    private func log(_ level: FlagClientLogMessage.Level, _ message: String) {
        logger?(FlagClientLogMessage(level: level, message: message))
    }

    private var now: Double { dependencies.now().timeIntervalSince1970 }

    // MARK: - Events

    /// The client put `version` in use at `time` (device clock): it is reported soon.
    func versionApplied(_ version: Int, at time: Date) {
        let random = dependencies.random()
        let now = self.now
        wake { state in
            state.applied = (version, time)
            state.schedule.versionApplied(now: now, random: random)
        }
    }

    /// The server issued `id` to this client's connection.
    func instanceIssued(_ id: String) {
        let random = dependencies.random()
        let now = self.now
        wake { state in
            state.instance = id
            state.schedule.instanceIssued(now: now, random: random)
        }
    }

    /// Pauses or resumes sending (`FlagClient.suspend()`, `resume()`); a report that fell due meanwhile is sent at
    /// once after resuming.
    func setPaused(_ paused: Bool) {
        let sleeper = state.withLock { state -> Task<Void, any Error>? in
            guard state.paused != paused else { return nil }
            state.paused = paused
            state.events += 1
            return state.sleeper
        }
        sleeper?.cancel()
    }

    /// Applies `change` and cuts the loop's sleep short when it made a report due sooner.
    private func wake(_ change: (inout State) -> Void) {
        let sleeper = state.withLock { state -> Task<Void, any Error>? in
            let before = state.schedule.next
            change(&state)
            guard state.schedule.next != before else { return nil }
            state.events += 1
            return state.sleeper
        }
        sleeper?.cancel()
    }

    // MARK: - The loop

    /// Sends reports until the task is cancelled (the client is going away) or the server refuses them for good.
    func run() async {
        var backlog = TelemetryBacklog(bounds: bounds)
        var logged = Logged()
        while !Task.isCancelled {
            let (delay, events, paused) = state.withLock { ($0.schedule.delay(now: now), $0.events, $0.paused) }
            guard let delay else { return }
            if paused {
                await sleep(period, unless: events)
                continue
            }
            if delay > 0 {
                // At most a period at a time: a sleep that an event cut short, or a wait for an id, looks again.
                await sleep(min(delay, period), unless: events)
                continue
            }
            await report(&backlog, &logged)
        }
    }

    /// Sleeps `seconds`, less if an event arrives; at once when an event arrived since `events` was read.
    private func sleep(_ seconds: Double, unless events: Int) async {
        let sleeper = Task { [dependencies] in try await dependencies.sleep(seconds) }
        let missed = state.withLock { state -> Bool in
            state.sleeper = sleeper
            return state.events != events
        }
        if missed { sleeper.cancel() }
        // Cancelled or not, the loop looks at the schedule again; a cancelled loop then ends.
        await withTaskCancellationHandler {
            _ = await sleeper.result
        } onCancel: {
            sleeper.cancel()
        }
        state.withLock { $0.sleeper = nil }
    }

    /// What was logged already, so that a long outage logs each kind of trouble once.
    private struct Logged {
        var dropped = false
        var rejected = false
        /// The enum keys whose values were left out of reports, logged when it grows.
        var enumsLeftOut: Set<String> = []
    }

    /// Sends the backlog with the counts since the last report, and records the outcome.
    private func report(_ backlog: inout TelemetryBacklog, _ logged: inout Logged) async {
        let (instance, applied) = state.withLock { state in
            state.schedule.sending()
            return (state.instance, state.applied)
        }
        guard let instance else {
            // No id yet (no stream or poll has answered): nothing to report under; the counts wait in the counter.
            state.withLock { $0.schedule.record(.failed, now: now) }
            return
        }
        backlog.merge(counter.take())
        if backlog.dropped > 0, !logged.dropped {
            logged.dropped = true
            log(
                .warning,
                "telemetry: the counts waiting to be sent reached their bound (\(bounds.maxCells) flag × variant × "
                    + "reason cells, \(bounds.maxFlags) flags); further evaluations are left out until a report "
                    + "gets through")
        }
        let limits = TelemetryReport.Limits()
        let (enums, leftOut) = TelemetryReport.KnownValues.reportable(
            counter.knownValues, maxBytes: limits.maxBytes / 4)
        if !Set(leftOut).isSubset(of: logged.enumsLeftOut) {
            logged.enumsLeftOut.formUnion(leftOut)
            log(
                .warning,
                "telemetry: the cases of the enum keys of \(leftOut.sorted(by: utf8Less).joined(separator: ", ")) are "
                    + "not reported (an empty raw value, one over \(limits.maxEnumValueLength) characters or with a "
                    + "control character, over \(limits.maxEnumValues) cases, or past \(limits.maxEnumFlags) enum "
                    + "keys or a quarter of a report): the server's compatibility gate cannot tell which of their "
                    + "values this app lacks")
        }
        let report = TelemetryReport(
            instance: instance, sdk: FlagClient.sdk, app: app, version: applied?.version, appliedAt: applied?.at,
            capabilities: .current, enums: enums)
        let (body, flags) = backlog.body(for: report, maxBytes: limits.maxBytes)
        let (outcome, head, answer) = await send(body, more: flags.count < backlog.counts.count)
        switch outcome {
        case .accepted:
            backlog.remove(flags)
            if backlog.dropped > 0 {
                log(.info, "telemetry: \(backlog.dropped) evaluations were left out while reports could not be sent")
                backlog.resetDropped()
            }
            logged.dropped = false
        case .failed:
            if let head { log(.debug, "telemetry: a report was answered HTTP \(head.status); kept for later") }
        case .throttled(let seconds):
            log(.debug, "telemetry: a report was throttled; the next one in \(Int(seconds)) s or more")
        case .unknownInstance:
            log(.info, "telemetry: the server does not know this instance; the counts wait for the next id it issues")
        case .rejected:
            // It would never pass: its counts go, and the first refusal is logged with the server's reason.
            backlog.remove(flags)
            if !logged.rejected, let head {
                logged.rejected = true
                log(
                    .warning,
                    "telemetry: the server refused a report (HTTP \(head.status)\(Self.message(answer))); dropped")
            }
        case .refused:
            log(
                .warning,
                "telemetry: the server refused reports (HTTP \(head?.status ?? 0)\(Self.message(answer))); "
                    + "this client sends no more")
        }
        state.withLock { $0.schedule.record(outcome, now: now) }
    }

    /// Posts one report; the outcome, with the answer when there was one.
    private func send(_ body: [UInt8], more: Bool) async -> (
        outcome: TelemetrySchedule.Outcome, head: TransportHead?, answer: [UInt8]
    ) {
        let request = TransportRequest(
            url: endpoint,
            headers: [
                "Authorization": "Bearer \(sdkKey)", "Content-Type": "application/json",
                "User-Agent": "\(FlagClient.sdk.name)/\(FlagClient.sdk.version)",
            ],
            timeout: 15, method: "POST", body: body)
        do {
            let (head, answer) = try await dependencies.transport.fetch(request)
            return (Self.outcome(head, answer, more: more, localNow: dependencies.now()), head, answer)
        } catch {
            if !Task.isCancelled {
                log(.debug, "telemetry: sending a report failed (\(error.localizedDescription)); kept for later")
            }
            return (.failed, nil, [])
        }
    }

    /// What an answer to a report means.
    static func outcome(_ head: TransportHead, _ body: [UInt8], more: Bool, localNow: Date)
        -> TelemetrySchedule.Outcome
    {
        switch head.status {
        case 200...299:
            return .accepted(more: more)
        case 400, 413:
            return .rejected
        case 422:
            return errorCode(body) == "unknown_instance" ? .unknownInstance : .rejected
        case 401, 403, 404, 405, 501:
            return .refused
        default:
            if let seconds = head.retryAfter(localNow: localNow) { return .throttled(retryAfter: seconds) }
            return .failed
        }
    }

    /// The `error` member of an error answer (`{"error":"unknown_instance","message":…}`).
    private static func errorCode(_ body: [UInt8]) -> String? {
        guard case .string(let code)? = errorMember("error", of: body) else { return nil }
        return code
    }

    /// `: ` and the `message` of an error answer, for a log line; empty when there is none.
    private static func message(_ body: [UInt8]) -> String {
        guard case .string(let text)? = errorMember("message", of: body) else { return "" }
        return ": \(text.prefix(300))"
    }

    /// A member of an error answer's JSON object; `nil` when the answer is not one (a proxy's HTML page names no
    /// code, and is then read by its status alone).
    private static func errorMember(_ name: String, of body: [UInt8]) -> JSONValue? {
        do {
            guard case .object(let members) = try JSONReader.parse(body) else { return nil }
            return members[name]
        } catch {
            return nil
        }
    }
}
