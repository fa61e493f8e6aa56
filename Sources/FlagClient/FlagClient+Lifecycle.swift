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

// MARK: - Apply policies

extension FlagClient {
    /// When a new version of the set, received while the process runs, is put in use (docs/client.md, "When new
    /// versions take effect"). Under every policy the version is stored in the cache as soon as it arrives, and its
    /// kills apply at once, to open sessions and new ones; a restore (un-kill) waits with the rest of the version.
    public enum ApplyPolicy: Sendable, Hashable {
        /// New sessions use a new version as soon as it arrives; open sessions keep their frozen values.
        case nextSession
        /// The process keeps the version it started with; the next launch starts from the newest version stored.
        /// ``FlagClient/activate()`` puts a waiting version in use sooner.
        case nextLaunch
        /// A new version waits until the app calls ``FlagClient/activate()``: the fetch-and-activate model. It waits
        /// across launches too: a launch starts from the version last activated, with the newest stored as
        /// ``FlagClient/pendingVersion`` (its kills applied at once), until ``FlagClient/activate()``.
        case manual
    }

    /// The version received and stored but not in use yet (``Configuration/applyNewVersions`` is `.nextLaunch`
    /// or `.manual`); `nil` when none waits. ``state`` names the version in use.
    public var pendingVersion: Int? { core.pendingVersion }

    /// Puts the waiting version (``pendingVersion``) in use for new sessions; `false` when none waits. Open sessions
    /// keep their frozen values, as with any new version.
    ///
    /// ```swift
    /// // At a point where changing the app's behaviour does not surprise the user, e.g. on the home screen:
    /// if client.pendingVersion != nil { client.activate() }
    /// ```
    @discardableResult
    public func activate() -> Bool {
        guard core.activate() else { return false }
        forgetActivated()
        return true
    }
}

// MARK: - Background and foreground

extension FlagClient {
    /// Stops refreshing and closes the stream, with no reconnect attempt, and pauses telemetry reports: for an app
    /// going to the background. Values keep being served; a live ``state`` becomes `.stale`. ``refresh()`` still
    /// fetches when called. Idempotent, and safe from any thread.
    ///
    /// ```swift
    /// .onChange(of: scenePhase) { _, phase in
    ///     if phase == .background { client.suspend() } else if phase == .active { client.resume() }
    /// }
    /// ```
    public func suspend() {
        let paused = background.withLock { work -> Bool in
            guard !work.suspended, !work.ended else { return false }
            work.suspended = true
            // Kept, so that `resume()` waits for the loop to have ended before starting it again.
            work.refresh?.cancel()
            return true
        }
        guard paused else { return }
        core.telemetry?.setPaused(true)
        core.suspended()
    }

    /// Starts again after ``suspend()``: fetches the set at once (a 304 when nothing changed), then reconnects the
    /// stream (or polls), and resumes telemetry reports. Does nothing unless suspended; with ``RefreshMode/off``,
    /// or after the server refused the key, it fetches nothing. Idempotent, and safe from any thread.
    ///
    /// ```swift
    /// client.resume()
    /// await client.ready(timeout: .seconds(2))   // live again once the fetch answered
    /// ```
    public func resume() {
        let resumed = background.withLock { work -> Bool in
            guard work.suspended, !work.ended else { return false }
            work.suspended = false
            let (suspended, refresher) = (work.refresh, refresher)
            work.refresh = Task.detached(priority: .utility) {
                // Two loops must never run at once: the cancelled one may still be finishing a request.
                await suspended?.value
                await refresher.resume()
            }
            return true
        }
        guard resumed else { return }
        core.telemetry?.setPaused(false)
    }
}

extension Refresher {
    /// The loop again after a suspension: one fetch at once, then what the mode does.
    func resume() async {
        guard !Task.isCancelled, machine.resume() else { return }
        let outcome = await fetchOnce(wait: 0)
        if Task.isCancelled { return }
        // A stream mode opens the stream next, whatever the fetch found; the polling modes go on from the fetch.
        if outcome != .fetched || machine.mode != .stream {
            machine.record(
                outcome, now: core.dependencies.now().timeIntervalSince1970, random: core.dependencies.random())
        }
        await loop()
    }
}
