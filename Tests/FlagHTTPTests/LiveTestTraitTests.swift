import FlagLock
import Foundation
import Testing

@testable import FlagTestBasics

/// The `.live` trait itself: live tests run off the cooperative pool and take turns, and blocking work started on
/// the pool is caught.
@Suite("The .live trait")
struct LiveTestTraitTests {
    @Test(.live) func aLiveTestRunsOnAThreadOfItsOwn() {
        #expect(OwnThreads.isCurrent)
    }

    /// A test in a live suite nested in another has the trait twice; it takes one turn, or tests holding their
    /// first turn would wait for a second that none gives back.
    @Test(.live) func aTestTakesOneTurnHoweverOftenTheTraitApplies() async throws {
        let testCase = try #require(Test.Case.current)
        // One turn of their own, so that a trait that took another would wait forever on these alone.
        let turns = Turns(1)
        let nested = Locked(false)
        @Sendable func scope(_ depth: Int) async throws {
            guard depth > 0 else { return nested.withLock { $0 = true } }
            try await LiveTest.scope(testCase, turns: turns) { try await scope(depth - 1) }
        }
        // Started as a test that holds no turn yet (this one holds a shared turn), and not awaited: on a trait that
        // took a turn at each level it would never end.
        Task { try await LiveTest.$holdsATurn.withValue(false) { try await scope(2) } }
        try await eventually("the inner scope ran") { nested.withLock { $0 } }
    }

    @Test func anyOtherTestRunsOnThePool() {
        #expect(!OwnThreads.isCurrent)
    }

    @Test func blockingWorkStartedOnThePoolIsAnIssue() async throws {
        withKnownIssue {
            LiveTest.expectOwnThread("a test client")
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("a test client blocks a thread of the cooperative pool") }
        }
        // Off the pool, in no task, it is fine.
        try await offThePool { LiveTest.expectOwnThread("a test client") }
    }

    @Test func jobsThatBlockDoNotHoldUpOneAnother() async {
        // More jobs than the pool has threads, each blocking until all have started: on the pool, those that
        // started would wait for the others until they gave up; on threads of their own all start.
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let started = Locked(0)
        await withTaskGroup(of: Bool.self) { group in
            let threads = OwnThreads()
            for _ in 0..<count {
                group.addTask(executorPreference: threads) {
                    started.withLock { $0 += 1 }
                    return waitUntil(timeout: .seconds(10)) { started.withLock { $0 } == count }
                }
            }
            for await met in group { #expect(met) }
        }
    }

    @Test func aTurnIsWaitedForUntilOneIsGivenBack() async throws {
        let turns = Turns(2)
        await turns.take()
        await turns.take()
        let third = Locked(false)
        let waiting = Task {
            await turns.take()
            third.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(third.withLock { $0 } == false)
        turns.giveBack()
        await waiting.value
        #expect(third.withLock { $0 })
    }
}
