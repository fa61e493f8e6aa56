import Dispatch
import Foundation

/// What a test waited for did not happen in time.
public struct TimedOut: Error, CustomStringConvertible {
    /// What the test was waiting for, and for how long.
    public let description: String

    /// An error saying what was awaited.
    public init(_ description: String) {
        self.description = description
    }
}

extension Duration {
    /// How long a test waits, unless it says otherwise, for what it expects to happen: a server to start, an answer,
    /// a client to go live. Far longer than that takes on an idle machine, as CI machines are shared and one was seen
    /// ten times slower than usual. On CI a client started early in a run took its first step only after
    /// more than a minute: its refresh loop runs on the cooperative pool at a low priority, behind the thousands of
    /// ordinary tests queued there at first. A passing test waits only as long as the thing takes, so only a
    /// failing one waits this long. A test that measures a time says so with a timeout of its own.
    public static let patience = Duration.seconds(180)
}

/// Polls `condition` every `interval` until it holds or `timeout` passes, blocking the calling thread; whether it
/// held. For synchronous tests; an async test uses `eventually`, which gives its thread back while it waits.
public func waitUntil(
    timeout: Duration = .patience, every interval: Duration = .milliseconds(5), _ condition: () -> Bool
) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: interval.seconds)
    }
    return condition()
}

/// Polls `condition` every `interval` until it holds or `timeout` passes; whether it held.
public func eventually(
    timeout: Duration = .patience, every interval: Duration = .milliseconds(5), _ condition: () async -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if await condition() { return true }
        do {
            try await Task.sleep(for: interval)
        } catch {
            break  // cancelled: answer from one last look
        }
    }
    return await condition()
}

/// Polls `condition` until it holds, or throws `TimedOut` naming `what` once `timeout` has passed.
public func eventually(
    _ what: String, timeout: Duration = .patience, every interval: Duration = .milliseconds(5),
    _ condition: () async -> Bool
) async throws {
    guard await eventually(timeout: timeout, every: interval, condition) else {
        throw TimedOut("timed out after \(timeout) waiting for: \(what)")
    }
}

/// Runs blocking work (socket reads, `waitpid`) on a Dispatch thread and awaits it, so that it never holds one of
/// the few threads of the cooperative pool (two on a two-core machine) that every async test needs to make progress.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

extension Duration {
    /// The duration in seconds, for APIs that take a `TimeInterval`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
