import FlagLock
import Foundation

/// The client's background loops, and whether the app suspended them.
struct BackgroundWork: Sendable {
    /// The refresh loop; after a `resume()`, the task that waits for the cancelled one, then refreshes.
    var refresh: Task<Void, Never>?
    /// The telemetry reporter's loop; it pauses rather than ends while suspended, so that reports not sent yet
    /// stay in its backlog.
    var telemetry: Task<Void, Never>?
    var suspended = false
    /// `shutdown()` or `deinit`: nothing starts again.
    var ended = false

    init(refresh: Task<Void, Never>, telemetry: Task<Void, Never>?) {
        self.refresh = refresh
        self.telemetry = telemetry
    }

    /// Cancels both loops for good.
    mutating func end() {
        refresh?.cancel()
        telemetry?.cancel()
        (refresh, telemetry, ended) = (nil, nil, true)
    }
}

extension FlagClient {
    /// Fetches the set now, applies what came, and answers whether the client is live afterwards: `true` when the
    /// server sent a set (a new one, or 304 for the one in use), `false` when it could not be reached, refused the
    /// key, or sent a set that was refused. Works in every ``RefreshMode``, `.off` too, and while suspended; it does
    /// not reopen a suspended stream. For `BGAppRefreshTask`, and a debug menu's "refresh now".
    ///
    /// ```swift
    /// let live = await client.refresh()
    /// task.setTaskCompleted(success: live)
    /// ```
    public func refresh() async -> Bool {
        await refresher.refreshNow()
    }
}

extension Refresher {
    /// One fetch of the document outside the loop, applied as the loop applies one; `true` when the client is live
    /// after it.
    func refreshNow() async -> Bool {
        // The cached set is compiled first, as the loop does at its start: a refresh that came before the loop
        // started must not be replaced by the older cached set afterwards.
        compileCached()
        guard await fetchOnce(wait: 0) == .fetched else { return false }
        if case .live = core.state { return true }
        return false
    }
}
