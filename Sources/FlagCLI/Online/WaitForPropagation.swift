import FlagAPI
import FlagCore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--wait PERCENT [--wait-timeout DURATION]`: after a write, wait until that share of the active client instances
/// report the new version (docs/telemetry.md, "Confirmed changes").
struct WaitRequest: Sendable, Equatable {
    /// The share asked for in thousandths of a percent (99.9 % is 99 900), so that `applied/active >= share` is
    /// decided on whole numbers, with no rounding at the boundary.
    let milliPercent: Int
    /// How long to wait for it, in seconds.
    let timeoutSeconds: Int

    /// Without `--wait-timeout`.
    static let defaultTimeoutSeconds = 30
    /// How often the propagation route is asked.
    static let pollInterval = Duration.milliseconds(250)

    /// The option declarations.
    static let options: [Option] = [
        .value(
            "wait", "PERCENT",
            help: "after the write, wait until this share of the active clients report the new version, e.g. 99% "
                + "(exit 4 if not reached in time)"),
        .value("wait-timeout", "DURATION", help: "how long --wait waits, e.g. 2m (default 30s)"),
    ]

    /// `--wait` and `--wait-timeout` as given, `nil` without `--wait`; a usage error names the value at fault.
    static func parse(_ arguments: ParsedArguments) throws(CLIError) -> WaitRequest? {
        guard let text = arguments.value("wait") else {
            if arguments.value("wait-timeout") != nil {
                throw arguments.usageError("--wait-timeout goes with --wait PERCENT, e.g. --wait 99% --wait-timeout 1m")
            }
            return nil
        }
        let milliPercent = try percent(text, arguments)
        var timeout = defaultTimeoutSeconds
        if let timeoutText = arguments.value("wait-timeout") {
            timeout = try Typed.duration(timeoutText, option: "wait-timeout", arguments)
            guard timeout > 0 else {
                throw arguments.usageError("--wait-timeout must be longer than 0s, e.g. 30s or 2m")
            }
        }
        return WaitRequest(milliPercent: milliPercent, timeoutSeconds: timeout)
    }

    /// `99%`, `99`, `99.9%` or `100` as thousandths of a percent: above 0, at most 100, at most 3 decimals.
    static func percent(_ text: String, _ arguments: ParsedArguments) throws(CLIError) -> Int {
        let number = text.hasSuffix("%") ? text.dropLast() : Substring(text)
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let isDigits = { (part: Substring) in !part.isEmpty && part.allSatisfy { $0.isASCII && $0.isNumber } }
        guard let whole = parts.first, isDigits(whole), parts.count == 1 || isDigits(parts[1]) else {
            throw arguments.usageError(
                "--wait needs the share of active clients to wait for, a percent such as 99% or 99.9, not '\(text)'")
        }
        let fraction = parts.count == 2 ? parts[1] : ""
        guard fraction.count <= 3 else {
            throw arguments.usageError("--wait '\(text)' has more than 3 decimals; round it, e.g. 99.999%")
        }
        let digits = whole.drop { $0 == "0" }
        let padded = fraction + String(repeating: "0", count: 3 - fraction.count)
        guard digits.count <= 3, let value = Int(digits.isEmpty ? "0" : digits), let thousandths = Int(padded),
            value * 1000 + thousandths > 0, value * 1000 + thousandths <= 100_000
        else {
            throw arguments.usageError("--wait '\(text)' is out of range; give a percent above 0 and at most 100")
        }
        return value * 1000 + thousandths
    }

    /// Whether `applied` of `active` instances reach the share.
    func isReached(applied: Int, active: Int) -> Bool {
        applied * 100_000 >= milliPercent * active
    }

    /// `99%`, `99.9%`.
    var percentText: String {
        let fraction = milliPercent % 1000
        guard fraction != 0 else { return "\(milliPercent / 1000)%" }
        var decimals = String(fraction + 1000).dropFirst()
        while decimals.hasSuffix("0") { decimals.removeLast() }
        return "\(milliPercent / 1000).\(decimals)%"
    }
}

/// Polls the propagation of a written version until the share is reached, nobody is active, or the time is up.
///
/// I/O comes in as closures, so that a test drives it with canned answers and a fake clock.
struct PropagationWaiter {
    /// How a wait ended.
    enum Outcome: Equatable {
        /// At least the share of the active instances report the version.
        case reached(Propagation, elapsed: Duration)
        /// No instance is active: nobody to wait for.
        case noActiveInstances(Propagation, elapsed: Duration)
        /// The timeout passed first; the last answer names the lagging instances.
        case timedOut(Propagation, elapsed: Duration)
    }

    /// What was asked.
    let request: WaitRequest
    /// One answer of the propagation route.
    let fetch: () throws(CLIError) -> Propagation
    /// The time since the write was acknowledged, on a monotonic clock.
    let elapsed: () -> Duration
    /// Waits this long.
    let sleep: (Duration) -> Void
    /// Shows a progress line (a no-op off a terminal).
    let progress: (String) -> Void

    /// Asks at once, then every `WaitRequest.pollInterval`, until the wait ends.
    func run() throws(CLIError) -> Outcome {
        let timeout = Duration.seconds(request.timeoutSeconds)
        while true {
            let propagation = try fetch()
            let now = elapsed()
            if propagation.active == 0 { return .noActiveInstances(propagation, elapsed: now) }
            if request.isReached(applied: propagation.applied, active: propagation.active) {
                return .reached(propagation, elapsed: now)
            }
            if now >= timeout { return .timedOut(propagation, elapsed: now) }
            progress(PropagationText.progress(propagation, elapsed: now))
            sleep(min(WaitRequest.pollInterval, timeout - now))
        }
    }
}

/// How a wait reads for people.
enum PropagationText {
    /// `written to 850 streams in 12 ms; applied by 842 of 850 instances on v41, 1.2 s`: the server's figures, and
    /// how long flagctl has waited.
    static func progress(_ propagation: Propagation, elapsed: Duration) -> String {
        let applied =
            "applied by \(propagation.applied) of \(counted(propagation.active, "instance")) on "
            + "v\(propagation.version), \(seconds(elapsed))"
        guard let written = propagation.written else { return applied }
        return "\(Self.written(written)); \(applied)"
    }

    /// `written to 850 streams in 12 ms`.
    static func written(_ written: Propagation.Written) -> String {
        "written to \(counted(written.streams, "stream")) in \(milliseconds(written.milliseconds))"
    }

    /// The lines after the command's own line once the wait ended, and for a timeout the error to exit 4 with.
    static func report(_ outcome: PropagationWaiter.Outcome, request: WaitRequest, set: String, now: Date)
        -> (lines: [String], error: CLIError?)
    {
        var lines: [String] = []
        var error: CLIError?
        let last: Propagation
        switch outcome {
        case .reached(let propagation, let elapsed):
            last = propagation
            lines.append(progress(propagation, elapsed: elapsed))
            var confirmed =
                "confirmed: \(share(propagation.applied, of: propagation.active)) of the active instances report "
                + "v\(propagation.version) or later (--wait \(request.percentText))"
            if let p50 = propagation.p50Milliseconds, let p99 = propagation.p99Milliseconds {
                confirmed += "; from commit to report p50 \(seconds(p50)), p99 \(seconds(p99)) (server clock)"
            }
            lines.append(confirmed)
        case .noActiveInstances(let propagation, _):
            last = propagation
            let written = propagation.written.map { "\(Self.written($0)); " } ?? ""
            lines.append(
                "\(written)no instance of \(set) reported in the last 5 minutes: nobody to wait for "
                    + "(v\(propagation.version))")
        case .timedOut(let propagation, let elapsed):
            last = propagation
            lines.append(progress(propagation, elapsed: elapsed))
            lines += lagging(propagation, now: now)
            error = .timeout(
                "not confirmed within \(DurationText.format(request.timeoutSeconds)) (--wait-timeout): "
                    + "\(propagation.applied) of \(counted(propagation.active, "active instance")) "
                    + "(\(share(propagation.applied, of: propagation.active))) report v\(propagation.version), "
                    + "below the \(request.percentText) asked; the write itself is done (version "
                    + "\(propagation.version))")
        }
        if last.silent > 0 { lines.append(silent(last.silent)) }
        return (lines, error)
    }

    /// The lagging instances as a table, and how many more the server did not list.
    static func lagging(_ propagation: Propagation, now: Date) -> [String] {
        var table = Table(header: ["LAGGING INSTANCE", "SDK", "APP", "VERSION", "LAST SEEN"])
        for instance in propagation.lagging {
            table.append([
                instance.id, "\(instance.sdk.name) \(instance.sdk.version)",
                instance.app.map { "\($0.name) \($0.version)" } ?? "-",
                instance.version.map { "v\($0)" } ?? "none yet", instance.lastSeen.map { seen($0, now: now) } ?? "-",
            ])
        }
        var lines = propagation.lagging.isEmpty ? [] : table.lines(fitting: Help.width)
        let unlisted = propagation.active - propagation.applied - propagation.lagging.count
        if unlisted > 0 { lines.append("… and \(unlisted) more lagging, not listed by the server (it lists 100)") }
        return lines
    }

    /// `2 connections do not report (…)`: never left out silently.
    static func silent(_ count: Int) -> String {
        let verb = count == 1 ? "does" : "do"
        return "\(counted(count, "connection")) \(verb) not report telemetry (SDKs from before it, or telemetry "
            + "turned off): not counted above"
    }

    /// `10:00:01 UTC (4 s ago)`: to the second, as propagation is a matter of seconds.
    static func seen(_ date: Date, now: Date) -> String {
        let iso = ISO8601.format(date)  // 2026-12-02T10:00:01Z
        let time = String(iso.dropFirst(11).prefix(8)) + " UTC"
        let ago = Int(now.timeIntervalSince(date).rounded())
        guard ago >= 0 else { return time }
        return ago < 120 ? "\(time) (\(ago) s ago)" : "\(time) (\(Shown.relative(date, now: now)))"
    }

    /// `99.1%` of `applied/active`, cut (never rounded up) to one decimal, so that a share short of 100 % never
    /// reads as 100 %.
    static func share(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "0%" }
        let tenths = part * 1000 / whole
        return tenths % 10 == 0 ? "\(tenths / 10)%" : "\(tenths / 10).\(tenths % 10)%"
    }

    /// `1.2 s`.
    static func seconds(_ duration: Duration) -> String {
        let components = duration.components
        let milliseconds = Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
        return seconds(milliseconds)
    }

    /// `1.2 s` from milliseconds.
    static func seconds(_ milliseconds: Double) -> String {
        let tenths = Int((milliseconds / 100).rounded(.down))
        return "\(tenths / 10).\(tenths % 10) s"
    }

    /// `12 ms`, `0.4 ms`.
    static func milliseconds(_ value: Double) -> String {
        value < 10 ? "\((value * 10).rounded() / 10) ms" : "\(Int(value.rounded())) ms"
    }
}

extension Mutation {
    /// Ends a mutating command: prints its result (`lines` for people, the server's answer with `--json`), any
    /// warnings of the compatibility gate on stderr, and with `--wait` follows the new version to the clients.
    ///
    /// ```swift
    /// let (result, answer) = try client.send(
    ///     API.kill, PathParameters(set: set, key: key), mutation.changeRequest, ifMatch: mutation.ifMatch, review: mutation.review)
    /// return try mutation.finish(result, answer, set: set, client: client, context) { ["killed \(key) …"] }
    /// ```
    /// What `--propose` made, and what comes next.
    static func proposed(_ id: Int, set: String, at: Date?, zone: TimeZone) -> [String] {
        guard let at else {
            return [
                "proposed change request \(id) on \(set); nothing is written until another person approves it "
                    + "(flagctl changes approve \(id)) and it is applied (flagctl changes apply \(id))"
            ]
        }
        return [
            "proposed change request \(id) on \(set), to apply at \(Shown.local(at, zone)); where the set requires "
                + "reviews, another person approves it first (flagctl changes approve \(id))"
        ]
    }

    func finish(
        _ result: MutationResult, _ answer: AdminClient.Answer, set: String, client: AdminClient,
        _ context: CommandContext, lines: () throws(CLIError) -> [String]
    ) throws(CLIError) -> ExitCode {
        let console = context.console
        for warning in result.warnings { console.printError("warning: \(warning)") }
        if let id = result.changeRequest {
            var at: Date?
            if case .propose(_, let time)? = review { at = time }
            return context.show(answer) { Self.proposed(id, set: set, at: at, zone: timeZone) }
        }
        guard let wait else {
            if context.globals.json {
                console.print(answer.json.compactText)
            } else {
                for line in try lines() { console.print(line) }
            }
            return .success
        }
        if !context.globals.json {
            for line in try lines() { console.print(line) }
            console.flush()
        }
        guard result.changed else {
            if context.globals.json {
                console.print(Self.json(answer, wait: wait, result: "unchanged", elapsed: nil, propagation: .null))
            } else {
                console.print("nothing to wait for: the write made no new version (still version \(result.version))")
            }
            return .success
        }
        let start = ContinuousClock.now
        let parameters = PathParameters(set: set, version: result.version)
        var lastAnswer = JSONValue.null
        let waiter = PropagationWaiter(
            request: wait,
            fetch: { () throws(CLIError) -> Propagation in
                do throws(CLIError) {
                    let (propagation, answer) = try client.send(API.propagation, parameters, NoRequest())
                    lastAnswer = answer.json
                    return Propagation(propagation)
                } catch {
                    throw .failure(
                        "version \(result.version) is written, but its propagation cannot be followed: "
                            + error.message)
                }
            },
            elapsed: { ContinuousClock.now - start },
            sleep: { duration in
                let micro =
                    duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
                usleep(UInt32(clamping: max(micro, 0)))
            },
            progress: { line in if !context.globals.json { console.status(line) } })
        let outcome = try waiter.run()
        let report = PropagationText.report(outcome, request: wait, set: set, now: context.now())
        if context.globals.json {
            let (name, elapsed): (String, Duration) =
                switch outcome {
                case .reached(_, let elapsed): ("confirmed", elapsed)
                case .noActiveInstances(_, let elapsed): ("noActiveInstances", elapsed)
                case .timedOut(_, let elapsed): ("timeout", elapsed)
                }
            console.print(Self.json(answer, wait: wait, result: name, elapsed: elapsed, propagation: lastAnswer))
        } else {
            for line in report.lines { console.print(line) }
        }
        if let error = report.error { throw error }
        return .success
    }

    /// The mutation response with `"wait":{"percent","timeoutSeconds","result","elapsedMs","propagation"}`.
    private static func json(
        _ answer: AdminClient.Answer, wait: WaitRequest, result: String, elapsed: Duration?, propagation: JSONValue
    ) -> String {
        var members = answer.json.object ?? ["answer": answer.json]
        var report: [String: JSONValue] = [
            "percent": wait.milliPercent % 1000 == 0
                ? .int(Int64(wait.milliPercent / 1000)) : .double(Double(wait.milliPercent) / 1000),
            "timeoutSeconds": .int(Int64(wait.timeoutSeconds)),
            "result": .string(result), "propagation": propagation,
        ]
        if let elapsed {
            let components = elapsed.components
            report["elapsedMs"] = .int(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
        }
        members["wait"] = .object(report)
        return JSONValue.object(members).compactText
    }
}
