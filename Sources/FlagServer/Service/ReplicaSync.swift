import FlagLock
import Foundation

/// Keeps this server in step with the other servers sharing its store (PostgreSQL): catches up on a set when a
/// notification says it moved, reloads the tokens when they changed, and once a second checks every set's latest
/// version and the token revision, in case a notification was missed (they are not persisted).
///
/// It never throws: a failure is logged when it starts and when it ends, and shows in `/metrics`. Client reads go on
/// from memory meanwhile.
package final class ReplicaSync: Sendable {
    /// What `/metrics` reports of the sync.
    package struct Status: Sendable, Equatable {
        /// Per set, how many versions the store was ahead of this server at the last check (0 while notifications
        /// arrive; more means they are being missed and the check is what catches up).
        package var lag: [String: Int] = [:]
        /// Notifications received.
        package var notifications = 0
        /// Versions and sets loaded from what other servers wrote.
        package var catchUps = 0
        /// Whether the connection that listens for notifications is up.
        package var listening = false
        /// The fraction of PostgreSQL's notification queue in use (`pg_notification_queue_usage()`).
        package var notificationQueueUsage: Double = 0
        /// Why the last check or catch-up failed, while it fails.
        package var failure: String?
    }

    let service: FlagService
    let tokens: TokenAuthority
    private let log: @Sendable (String) -> Void
    private let state = Locked(Status())
    private let stops = Locked<[@Sendable () -> Void]>([])

    /// A sync of `service` and `tokens` with their store.
    package init(service: FlagService, tokens: TokenAuthority, log: @escaping @Sendable (String) -> Void) {
        self.service = service
        self.tokens = tokens
        self.log = log
    }

    /// What the sync has seen.
    package var status: Status { state.withLock { $0 } }

    /// Another server made `version` of `set`: load it, unless this server serves it already (its own write).
    package func setChanged(_ set: String, version: Int) {
        state.withLock { $0.notifications += 1 }
        if let served = service.state(set), served.version >= version { return }
        attempt("catching up on flag set \(set)") {
            if try service.catchUp(set) { state.withLock { $0.catchUps += 1 } }
        }
    }

    /// Another server made or revoked a token.
    package func tokensChanged() {
        state.withLock { $0.notifications += 1 }
        attempt("loading the tokens") { try tokens.reload() }
    }

    /// Loads the tokens when their revision moved, then compares every set's stored version with the one served and
    /// catches up where the store is ahead. Tokens first: a stream whose token was revoked before a version was
    /// written must end before that version is published to it.
    package func check() {
        attempt("checking the stored versions") {
            try tokens.reload()
            try service.refreshSigningKeys()
            let stored = try service.store.sets()
            var lag: [String: Int] = [:]
            for summary in stored { lag[summary.name] = summary.version - (service.state(summary.name)?.version ?? 0) }
            state.withLock { $0.lag = lag }
            for (set, behind) in lag where behind > 0 {
                if try service.catchUp(set) { state.withLock { $0.catchUps += 1 } }
            }
        }
    }

    /// Runs `stop` when the sync stops (the listener's thread ends with it).
    package func onStop(_ stop: @escaping @Sendable () -> Void) {
        stops.withLock { $0.append(stop) }
    }

    /// Stops listening; the server goes on serving what it has.
    package func stop() {
        for stop in stops.withLock({ stops in
            defer { stops = [] }
            return stops
        }) { stop() }
    }

    /// Records whether the listening connection is up.
    package func setListening(_ listening: Bool) {
        state.withLock { $0.listening = listening }
    }

    /// Records the notification queue's use, as the listening connection read it.
    package func setNotificationQueueUsage(_ usage: Double) {
        state.withLock { $0.notificationQueueUsage = usage }
    }

    /// Runs `body`, logging the first failure of a streak and the recovery after it.
    private func attempt(_ action: String, _ body: () throws -> Void) {
        do {
            try body()
            let recovered = state.withLock { status in
                defer { status.failure = nil }
                return status.failure != nil
            }
            if recovered { log("in step with the store again") }
        } catch {
            let message = "\(action) failed: \(error)"
            let first = state.withLock { status in
                defer { status.failure = message }
                return status.failure == nil
            }
            if first { log("\(message) (serving what is in memory; retrying every second)") }
        }
    }
}
