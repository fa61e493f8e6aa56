import Testing

@testable import FlagClient

@Suite struct RefreshStateMachineTests {
    /// Fails `count` times with no jitter (random 0.5 → factor 1) and returns the sleeps.
    func delays(_ machine: inout RefreshStateMachine, failures count: Int, random: Double = 0.5) -> [Double] {
        var delays: [Double] = []
        for _ in 0..<count {
            _ = machine.next()
            machine.record(.failed, now: 0, random: random)
            if case .sleep(let seconds) = machine.next() { delays.append(seconds) }
        }
        return delays
    }

    @Test func backoffDoublesFromOneSecondToTheCap() {
        var machine = RefreshStateMachine(mode: .poll, pollInterval: 30)
        #expect(delays(&machine, failures: 8) == [1, 2, 4, 8, 16, 30, 30, 30])
    }

    @Test(arguments: [0.0, 0.25, 0.999999])
    func jitterStaysWithinFiftyPercent(_ random: Double) {
        var machine = RefreshStateMachine(mode: .poll, pollInterval: 30)
        let observed = delays(&machine, failures: 7, random: random)
        for (delay, base) in zip(observed, [1.0, 2, 4, 8, 16, 30, 30]) {
            #expect(delay >= base * 0.5)
            #expect(delay < base * 1.5)
            #expect(delay <= 30)
            #expect(abs(delay - min(30, base * (0.5 + random))) < 1e-9)
        }
    }

    @Test func streamFirstThenBackoffOnFailures() {
        var machine = RefreshStateMachine(mode: .stream, pollInterval: 30)
        #expect(machine.next() == .openStream)
        machine.record(.failed, now: 0, random: 0.5)
        #expect(machine.next() == .sleep(seconds: 1))
        #expect(machine.next() == .openStream)
    }

    /// A stream connected for sixty seconds resets the backoff; one connected for less goes on from where it was.
    @Test(arguments: [(160.0, 1.0), (159, 4)])
    func resetAfterSixtySecondsConnected(endedAt: Double, sleep: Double) {
        var machine = RefreshStateMachine(mode: .stream, pollInterval: 30)
        _ = delays(&machine, failures: 2)  // 1, 2
        #expect(machine.next() == .openStream)
        machine.record(.streamOpened, now: 100, random: 0.5)
        machine.record(.streamEnded(silent: false), now: endedAt, random: 0.5)
        #expect(machine.next() == .sleep(seconds: sleep))
    }

    @Test(arguments: [401, 403])
    func unauthorizedStops(_ status: Int) {
        var machine = RefreshStateMachine(mode: .stream, pollInterval: 30)
        _ = machine.next()
        machine.record(.unauthorized(status: status), now: 0, random: 0.5)
        #expect(machine.next() == .stop(status: status))
        machine.record(.failed, now: 1, random: 0.5)
        #expect(machine.next() == .stop(status: status))
        #expect(machine.stopped)
    }

    @Test func unsupportedStreamFallsBackToPolling() {
        var machine = RefreshStateMachine(mode: .stream, pollInterval: 20)
        _ = machine.next()
        machine.record(.streamUnsupported, now: 0, random: 0.5)
        #expect(machine.next() == .fetch(waitSeconds: 0))
        machine.record(.fetched, now: 1, random: 0.5)
        #expect(machine.next() == .sleep(seconds: 20))
        #expect(machine.next() == .fetch(waitSeconds: 0))
    }

    @Test func failuresToConnectNeverSwitchToPolling() {
        var machine = RefreshStateMachine(mode: .stream, pollInterval: 20)
        #expect(delays(&machine, failures: 10) == [1, 2, 4, 8, 16, 30, 30, 30, 30, 30])
        #expect(machine.mode == .stream)
        #expect(machine.next() == .openStream)
    }

    @Test func silentStreamsFallBackToPolling() {
        var machine = RefreshStateMachine(mode: .stream, pollInterval: 20)
        // A short silent stream (a server restart) does not count; a heartbeat heard resets the count.
        for (openFor, silent) in [(10.0, true), (45, true), (45, false), (45, true)] {
            #expect(machine.next() == .openStream)
            machine.record(.streamOpened, now: 0, random: 0.5)
            machine.record(.streamEnded(silent: silent), now: openFor, random: 0.5)
            #expect(machine.mode == .stream)
            _ = machine.next()  // the sleep
        }
        #expect(machine.next() == .openStream)
        machine.record(.streamOpened, now: 0, random: 0.5)
        machine.record(.streamEnded(silent: true), now: 45, random: 0.5)
        #expect(machine.mode == .poll)
        _ = machine.next()  // the sleep
        #expect(machine.next() == .fetch(waitSeconds: 0))
    }

    /// A long poll asks again at once after an answer. After a failure it backs off; after an answer the server did
    /// not hold (a proxy cut it short), it waits a poll interval, and that is no failure.
    @Test(arguments: [
        (RefreshStateMachine.Outcome.failed, 1.0, 1), (.notHeld, 45, 0),
    ])
    func longPollAsksAgainAtOnce(_ outcome: RefreshStateMachine.Outcome, sleep: Double, failures: Int) {
        var machine = RefreshStateMachine(mode: .longPoll, pollInterval: 45, longPollWait: 30)
        #expect(machine.next() == .fetch(waitSeconds: 0))
        machine.record(.fetched, now: 0, random: 0.5)
        #expect(machine.next() == .fetch(waitSeconds: 30))
        machine.record(outcome, now: 1, random: 0.5)
        #expect(machine.next() == .sleep(seconds: sleep))
        #expect(machine.next() == .fetch(waitSeconds: 30))
        #expect(machine.failures == failures)
    }

    @Test func badDataBacksOffLikeAFailure() {
        var machine = RefreshStateMachine(mode: .stream, pollInterval: 30)
        _ = machine.next()
        machine.record(.streamOpened, now: 0, random: 0.5)
        machine.record(.badData, now: 1, random: 0.5)
        #expect(machine.next() == .sleep(seconds: 1))
        #expect(machine.next() == .openStream)
    }

    @Test func serverRetryReplacesTheFirstDelay() {
        var machine = RefreshStateMachine(mode: .stream, pollInterval: 30)
        _ = machine.next()
        machine.record(.streamOpened, now: 0, random: 0.5)
        machine.record(.serverRetry(seconds: 5), now: 1, random: 0.5)
        machine.record(.streamEnded(silent: false), now: 2, random: 0.5)
        #expect(machine.next() == .sleep(seconds: 5))
    }

    @Test func offNeverConnects() {
        var machine = RefreshStateMachine(mode: .off, pollInterval: 30)
        #expect(machine.next() == .stop(status: 0))
    }
}
