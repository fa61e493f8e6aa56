import FlagCore
import Foundation
import Testing

@testable import FlagCLI

/// `--wait PERCENT` and `--wait-timeout DURATION`: what they accept, what they refuse and why, and how
/// a wait polls, ends and reads, from canned answers of the propagation route and a fake clock.
@Suite("flagctl --wait")
struct WaitTests {
    @Test(
        "a percent is read exactly, with or without %",
        arguments: [
            ("99%", 99_000, "99%"), ("99", 99_000, "99%"), ("99.9", 99_900, "99.9%"), ("99.95%", 99_950, "99.95%"),
            ("100", 100_000, "100%"), ("100.000%", 100_000, "100%"), ("0.001%", 1, "0.001%"), ("007", 7_000, "7%"),
            ("50.5", 50_500, "50.5%"),
        ])
    func percents(_ text: String, _ milliPercent: Int, _ shown: String) throws {
        let wait = try #require(
            try WaitRequest.parse(parsedArguments(KillCommand.self, ["kill", "k", "--wait", text])))
        #expect(wait.milliPercent == milliPercent)
        #expect(wait.percentText == shown)
        #expect(wait.timeoutSeconds == 30)
    }

    @Test func withoutWaitThereIsNothingToWaitFor() throws {
        #expect(try WaitRequest.parse(parsedArguments(KillCommand.self, ["kill", "k"])) == nil)
    }

    @Test("--wait-timeout takes the project's durations", arguments: [("2m", 120), ("1h30m", 5_400), ("45s", 45)])
    func timeouts(_ text: String, _ seconds: Int) throws {
        let arguments = try parsedArguments(KillCommand.self, ["kill", "k", "--wait", "99%", "--wait-timeout", text])
        #expect(try WaitRequest.parse(arguments)?.timeoutSeconds == seconds)
    }

    @Test(
        "a wrong --wait or --wait-timeout exits 2 naming the value and what to write",
        arguments: [
            (["--wait", "0"], "error: --wait '0' is out of range; give a percent above 0 and at most 100"),
            (["--wait", "0%"], "error: --wait '0%' is out of range; give a percent above 0 and at most 100"),
            (["--wait", "101"], "error: --wait '101' is out of range; give a percent above 0 and at most 100"),
            (["--wait", "100.001"], "error: --wait '100.001' is out of range; give a percent above 0 and at most 100"),
            (
                ["--wait", "1000000000000000000000"],
                "error: --wait '1000000000000000000000' is out of range; give a percent above 0 and at most 100"
            ),
            (["--wait", "99.1234"], "error: --wait '99.1234' has more than 3 decimals; round it, e.g. 99.999%"),
            (
                ["--wait", "abc"],
                "error: --wait needs the share of active clients to wait for, a percent such as 99% or 99.9, not 'abc'"
            ),
            (
                ["--wait", "-5"],
                "error: --wait needs the share of active clients to wait for, a percent such as 99% or 99.9, not '-5'"
            ),
            (
                ["--wait", "99."],
                "error: --wait needs the share of active clients to wait for, a percent such as 99% or 99.9, not '99.'"
            ),
            (
                ["--wait", ".5"],
                "error: --wait needs the share of active clients to wait for, a percent such as 99% or 99.9, not '.5'"
            ),
            (
                ["--wait", "1e2"],
                "error: --wait needs the share of active clients to wait for, a percent such as 99% or 99.9, not '1e2'"
            ),
            (
                ["--wait", "99%%"],
                "error: --wait needs the share of active clients to wait for, a percent such as 99% or 99.9, not '99%%'"
            ),
            (
                ["--wait", "٩٩"],
                "error: --wait needs the share of active clients to wait for, a percent such as 99% or 99.9, not '٩٩'"
            ),
            (
                ["--wait="],
                "error: --wait needs the share of active clients to wait for, a percent such as 99% or 99.9, not ''"
            ),
            (
                ["--wait", "99", "--wait-timeout", "2x"],
                "error: --wait-timeout '2x' is not a duration: unknown unit 'x' at offset 1; write a whole number and a unit (w, d, h, m, s), e.g. 90s, 2h, 1h30m, 6w"
            ),
            (
                ["--wait", "99", "--wait-timeout", "1.5s"],
                "error: --wait-timeout '1.5s' is not a duration: whole numbers only (offset 1): write 1h30m rather than 1.5h"
            ),
            (["--wait", "99", "--wait-timeout", "0s"], "error: --wait-timeout must be longer than 0s, e.g. 30s or 2m"),
            (
                ["--wait-timeout", "10s"],
                "error: --wait-timeout goes with --wait PERCENT, e.g. --wait 99% --wait-timeout 1m"
            ),
            (["--wait"], "error: --wait needs a value (PERCENT)"),
        ])
    func wrongValues(_ extra: [String], _ message: String) {
        let run = runInProcess(["kill", "k"] + extra)
        #expect(run.status == 2, "\(run)")
        #expect(run.stdout == "")
        #expect(
            run.stderrLines == [
                message, "usage: flagctl kill KEY [--reason S] [--if-match N] [--wait PERCENT]",
                "See 'flagctl kill --help'.",
            ])
    }

    @Test(
        "commands that write nothing refuse --wait",
        arguments: [
            (["rollout", "k", "show", "--wait", "99"], "error: 'show' changes nothing; it takes no --wait"),
            (["rollout", "k", "show", "--force"], "error: 'show' changes nothing; it takes no --force"),
            (
                ["import", "x.json", "--dry-run", "--wait", "99"],
                "error: --dry-run writes nothing, so there is nothing to --wait for"
            ),
            (["keys", "revoke", "app", "--wait", "99"], "error: unknown option '--wait' for 'keys revoke'"),
        ])
    func nothingToWaitFor(_ line: [String], _ message: String) {
        let run = runInProcess(line)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderrLines.first == message)
    }

    @Test("every command that writes a version takes --wait, --wait-timeout and --force")
    func everyWriteTakesWait() {
        let writes: [any Command.Type] = [
            SetsCreateCommand.self, CreateCommand.self, SetDefaultCommand.self, RuleAddCommand.self,
            RuleRemoveCommand.self, RolloutCommand.self, OverrideCommand.self, KillCommand.self, RestoreCommand.self,
            ExpireCommand.self, ArchiveCommand.self, CohortCreateCommand.self, RollbackCommand.self,
            ImportCommand.self, PromoteCommand.self,
        ]
        for command in writes {
            let names = Set(command.configuration.options.map(\.name))
            #expect(names.isSuperset(of: ["wait", "wait-timeout", "force"]), "\(command.configuration.name)")
        }
    }

    @Test(
        "the share is decided on whole numbers, with no rounding at the boundary",
        arguments: [
            (99_900, 999, 1000, true), (99_900, 998, 1000, false), (100_000, 849, 850, false),
            (100_000, 850, 850, true), (99_000, 842, 850, true), (99_000, 841, 850, false), (1, 1, 100_000, true),
            (1, 0, 100_000, false),
        ])
    func share(_ milliPercent: Int, _ applied: Int, _ active: Int, _ reached: Bool) {
        #expect(
            WaitRequest(milliPercent: milliPercent, timeoutSeconds: 30).isReached(applied: applied, active: active)
                == reached)
    }

    // MARK: - The polling loop

    /// A clock that moves only when the waiter sleeps, and the answers it gets in turn (the last one repeats).
    final class Script {
        var answers: [Propagation]
        var now = Duration.zero
        var fetches = 0
        var sleeps: [Duration] = []
        var progress: [String] = []

        init(_ answers: [Propagation]) { self.answers = answers }

        func waiter(_ request: WaitRequest) -> PropagationWaiter {
            PropagationWaiter(
                request: request,
                fetch: { () throws(CLIError) -> Propagation in
                    self.fetches += 1
                    return self.answers.count > 1 ? self.answers.removeFirst() : self.answers[0]
                },
                elapsed: { self.now },
                sleep: { duration in
                    self.sleeps.append(duration)
                    self.now += duration
                },
                progress: { self.progress.append($0) })
        }
    }

    static func propagation(
        active: Int, applied: Int, silent: Int = 0,
        written: Propagation.Written? = .init(streams: 850, milliseconds: 12.4),
        lagging: [ReportingInstance] = [], p50: Double? = nil, p99: Double? = nil
    ) -> Propagation {
        Propagation(
            version: 41, active: active, applied: applied, p50Milliseconds: p50, p99Milliseconds: p99,
            written: written, silent: silent, lagging: lagging)
    }

    @Test func itPollsEvery250msUntilTheShareIsReached() throws {
        let script = Script([
            Self.propagation(active: 850, applied: 10), Self.propagation(active: 850, applied: 500),
            Self.propagation(active: 850, applied: 842),
        ])
        let outcome = try script.waiter(WaitRequest(milliPercent: 99_000, timeoutSeconds: 30)).run()
        #expect(outcome == .reached(Self.propagation(active: 850, applied: 842), elapsed: .milliseconds(500)))
        #expect(script.fetches == 3)
        #expect(script.sleeps == [.milliseconds(250), .milliseconds(250)])
        #expect(
            script.progress == [
                "written to 850 streams in 12 ms; applied by 10 of 850 instances on v41, 0.0 s",
                "written to 850 streams in 12 ms; applied by 500 of 850 instances on v41, 0.2 s",
            ])
    }

    @Test func withNoActiveInstanceItReturnsAtOnce() throws {
        let script = Script([Self.propagation(active: 0, applied: 0, silent: 3)])
        let outcome = try script.waiter(WaitRequest(milliPercent: 100_000, timeoutSeconds: 30)).run()
        #expect(outcome == .noActiveInstances(Self.propagation(active: 0, applied: 0, silent: 3), elapsed: .zero))
        #expect(script.fetches == 1)
        #expect(script.sleeps.isEmpty)
    }

    @Test func itTimesOutAfterAskingOnceMoreAtTheDeadline() throws {
        let script = Script([Self.propagation(active: 2, applied: 1)])
        let outcome = try script.waiter(WaitRequest(milliPercent: 100_000, timeoutSeconds: 1)).run()
        #expect(outcome == .timedOut(Self.propagation(active: 2, applied: 1), elapsed: .seconds(1)))
        // At 0, 250, 500 and 750 ms, and once more at the deadline.
        #expect(script.fetches == 5)
        #expect(script.sleeps == Array(repeating: .milliseconds(250), count: 4))
    }

    @Test func aFailedPollEndsTheWaitWithItsError() {
        let waiter = PropagationWaiter(
            request: WaitRequest(milliPercent: 99_000, timeoutSeconds: 30),
            fetch: { () throws(CLIError) -> Propagation in throw .failure("no route") }, elapsed: { .zero },
            sleep: { _ in }, progress: { _ in })
        #expect(throws: CLIError.self) { try waiter.run() }
    }

    // MARK: - What it prints

    static let now = Date(timeIntervalSince1970: 1_796_205_605)  // 2026-12-02T10:00:05Z

    static func lagging(_ id: String, sdk: String, app: String?, version: Int?, seen: String) throws
        -> ReportingInstance
    {
        ReportingInstance(
            id: id, sdk: .init(name: "FlagClient", version: sdk), app: app.map { .init(name: "Shop", version: $0) },
            version: version, appliedAt: nil, lastSeen: try ISO8601.date(from: seen), capabilities: nil)
    }

    @Test func theProgressLineShowsTheServersFigures() {
        #expect(
            PropagationText.progress(Self.propagation(active: 850, applied: 842), elapsed: .milliseconds(1_234))
                == "written to 850 streams in 12 ms; applied by 842 of 850 instances on v41, 1.2 s")
        #expect(
            PropagationText.progress(
                Self.propagation(active: 1, applied: 0, written: .init(streams: 1, milliseconds: 0.44)),
                elapsed: .seconds(3))
                == "written to 1 stream in 0.4 ms; applied by 0 of 1 instance on v41, 3.0 s")
        #expect(
            PropagationText.progress(Self.propagation(active: 3, applied: 2, written: nil), elapsed: .seconds(1))
                == "applied by 2 of 3 instances on v41, 1.0 s")
    }

    @Test func aConfirmedWaitSaysSoAndNamesTheConnectionsThatDoNotReport() {
        let request = WaitRequest(milliPercent: 99_000, timeoutSeconds: 30)
        let report = PropagationText.report(
            .reached(
                Self.propagation(active: 850, applied: 849, silent: 2, p50: 1_840, p99: 2_950), elapsed: .seconds(2)),
            request: request, set: "demo", now: Self.now)
        #expect(report.error == nil)
        #expect(
            report.lines == [
                "written to 850 streams in 12 ms; applied by 849 of 850 instances on v41, 2.0 s",
                "confirmed: 99.8% of the active instances report v41 or later (--wait 99%); from commit to report "
                    + "p50 1.8 s, p99 2.9 s (server clock)",
                "2 connections do not report telemetry (SDKs from before it, or telemetry turned off): not counted above",
            ])
    }

    @Test func withNoActiveInstanceItSaysThereIsNobodyToWaitFor() {
        let report = PropagationText.report(
            .noActiveInstances(
                Self.propagation(active: 0, applied: 0, silent: 1, written: .init(streams: 1, milliseconds: 1)),
                elapsed: .zero),
            request: WaitRequest(milliPercent: 99_000, timeoutSeconds: 30), set: "demo", now: Self.now)
        #expect(report.error == nil)
        #expect(
            report.lines == [
                "written to 1 stream in 1.0 ms; no instance of demo reported in the last 5 minutes: nobody to wait for (v41)",
                "1 connection does not report telemetry (SDKs from before it, or telemetry turned off): not counted above",
            ])
    }

    @Test func aTimeoutListsTheLaggingInstancesAndExitsFour() throws {
        let lagging = [
            try Self.lagging("in_old", sdk: "1.9.0", app: "5.3.0", version: 40, seen: "2026-12-02T10:00:01Z"),
            try Self.lagging("in_new", sdk: "2.0.0", app: nil, version: nil, seen: "2026-12-02T09:50:05Z"),
        ]
        let report = PropagationText.report(
            .timedOut(Self.propagation(active: 5, applied: 1, lagging: lagging), elapsed: .seconds(30)),
            request: WaitRequest(milliPercent: 100_000, timeoutSeconds: 30), set: "demo", now: Self.now)
        #expect(
            report.lines == [
                "written to 850 streams in 12 ms; applied by 1 of 5 instances on v41, 30.0 s",
                "LAGGING INSTANCE  SDK               APP         VERSION   LAST SEEN",
                "in_old            FlagClient 1.9.0  Shop 5.3.0  v40       10:00:01 UTC (4 s ago)",
                "in_new            FlagClient 2.0.0  -           none yet  09:50:05 UTC (10 minutes ago)",
                "… and 2 more lagging, not listed by the server (it lists 100)",
            ])
        let error = try #require(report.error)
        #expect(error.exitCode == .timeout)
        #expect(error.exitCode.rawValue == 4)
        #expect(
            error.message
                == "not confirmed within 30s (--wait-timeout): 1 of 5 active instances (20%) report v41, below the "
                + "100% asked; the write itself is done (version 41)")
    }

    @Test(
        "a share short of 100% never reads as 100%",
        arguments: [(849, 850, "99.8%"), (999, 1000, "99.9%"), (9_999, 10_000, "99.9%"), (1, 3, "33.3%"), (0, 0, "0%")])
    func shares(_ part: Int, _ whole: Int, _ text: String) {
        #expect(PropagationText.share(part, of: whole) == text)
    }
}
