import FlagLock
import Foundation
import Testing

/// The trait of a live suite: one whose tests start servers, processes or sockets, block on them, or wait on the
/// clock. Its tests take turns, at most `LiveTest.width` at once, and run on threads of their own.
///
/// Swift Testing starts every test at once on Swift's cooperative pool, which has one thread per core (two here).
/// A test that blocks — a socket read, `waitUntil`, `waitpid` — holds one of those threads for as long as it
/// blocks, and every other test's next step queues behind it. On a slow machine that queue once grew past a
/// quarter of an hour: async tests were not resumed between two of their own lines, and their long-polls and idle
/// timers ran out in between. On threads of their own, live tests leave the pool to the rest; taking turns keeps
/// them from all running at once on two cores, so that each sees the machine much as it would alone.
///
/// ```swift
/// @Suite("The HTTP server, live", .live)
/// struct HTTPServerLiveTests { … }
/// ```
public struct LiveTest: SuiteTrait, TestTrait, TestScoping {
    /// How many live test cases run at once: most of their time is spent waiting on sockets and clocks, not on
    /// the two cores.
    public static let width = 6

    private static let sharedTurns = Turns(LiveTest.width)
    private static let threads = OwnThreads()
    /// Whether this task's test case holds a turn already: a test in a nested live suite has the trait twice, and
    /// taking two turns each, six such tests deadlocked holding one and waiting for another.
    @TaskLocal static var holdsATurn = false

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await Self.scope(testCase, turns: Self.sharedTurns, function)
    }

    /// Runs a test case (`function`) on a thread of its own once it has one of `turns`: every live test's, but for
    /// the trait's own tests.
    static func scope(
        _ testCase: Test.Case?, turns: Turns, _ function: @Sendable () async throws -> Void
    ) async throws {
        // A suite holds no turn: its tests take theirs one by one.
        guard testCase != nil, !holdsATurn else { return try await function() }
        await turns.take()
        defer { turns.giveBack() }
        try await $holdsATurn.withValue(true) {
            try await withTaskExecutorPreference(threads) { try await function() }
        }
    }
}

extension LiveTest {
    /// Records an issue when `what` — blocking work: a socket, a server, a process — starts on one of the
    /// cooperative pool's threads, where it would hold up every other test: its suite lacks `.live`. Code in no
    /// task (`offThePool`, a thread of its own) is fine.
    public static func expectOwnThread(_ what: @autoclosure () -> String) {
        let inATask = withUnsafeCurrentTask { $0 != nil }
        guard inATask, !OwnThreads.isCurrent else { return }
        Issue.record("\(what()) blocks a thread of the cooperative pool: give the suite the .live trait")
    }
}

extension Trait where Self == LiveTest {
    /// A live suite or test: see `LiveTest`.
    public static var live: Self { LiveTest() }
}

/// A counting semaphore whose waiters wait as tasks, holding no thread.
final class Turns: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Locked<State>

    init(_ count: Int) {
        state = Locked(State(free: count))
    }

    func take() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if now { continuation.resume() }
        }
    }

    func giveBack() {
        let next = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return CheckedContinuation<Void, Never>?.none
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

/// A task executor that runs each job on an idle thread of its own, starting a new thread when none is idle: a job
/// that blocks holds up no other. Threads stay for the next jobs; there are as many as jobs ever ran at once.
final class OwnThreads: TaskExecutor, @unchecked Sendable {
    /// Whether the calling thread is one of these: marked by a thread-specific value, as Foundation's
    /// `Thread.current.name` can name another thread.
    static var isCurrent: Bool { pthread_getspecific(mark) != nil }
    private static let mark: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
    // `@unchecked`: `jobs` and `idle` are read and written only with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var idle = 0

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        // More jobs than idle threads to take them (a signalled thread counts as idle until it wakes): one more.
        let start = jobs.count > idle
        if !start { condition.signal() }
        condition.unlock()
        if start {
            let thread = Thread { [self] in work() }
            thread.stackSize = 8 << 20  // a default thread's stack on Linux, as the pool's threads have
            thread.start()
        }
    }

    private func work() {
        pthread_setspecific(Self.mark, UnsafeRawPointer(bitPattern: 1))
        let executor = asUnownedTaskExecutor()
        condition.lock()
        while true {
            if jobs.isEmpty {
                idle += 1
                condition.wait()
                idle -= 1
                continue
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: executor)
            condition.lock()
        }
    }
}
