import FlagPostgres
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Listens for the notifications PostgreSQL sends when another server writes a version or a token, on a
/// connection and a thread of its own, and hands them to `ReplicaSync`. The same thread runs the sync's check
/// every second. A lost connection is made again with backoff, and every set is then checked, since
/// notifications sent meanwhile are gone.
///
/// A thread of its own rather than the event loop: a notification is followed at once by a query for the
/// changed items, which must not run on a loop thread, so the loop would only hand it over (BENCHMARKS.md,
/// "Replicas", measures the whole path).
final class PostgresChangeListener: Sendable {
    private let info: PostgresConnectionInfo
    private let sync: ReplicaSync
    private let log: @Sendable (String) -> Void
    /// Set to end the thread, which notices within a second.
    private let stopped = Atomic<Bool>(false)

    /// How long to wait before connecting again: from 100 ms, doubling, to 5 s.
    static let backoff = (first: 0.1, limit: 5.0)
    /// How often every set's version is checked.
    static let checkInterval = 1.0

    private init(info: PostgresConnectionInfo, sync: ReplicaSync, log: @escaping @Sendable (String) -> Void) {
        self.info = info
        self.sync = sync
        self.log = log
    }

    /// Connects and listens, catches up once (so that nothing written since the sets were loaded is missed),
    /// then goes on on a thread of its own, which `sync.stop()` ends. When the first connection fails, the thread
    /// keeps trying, as after a lost one.
    static func start(info: PostgresConnectionInfo, sync: ReplicaSync, log: @escaping @Sendable (String) -> Void) {
        let listener = PostgresChangeListener(info: info, sync: sync, log: log)
        var connection: PostgresConnection?
        do {
            connection = try listener.connect()
            sync.check()
        } catch {
            log("cannot listen for changes on \(info.redacted) yet (\(error)); trying again")
        }
        let handoff = Handoff(connection)
        let thread = Thread { listener.run(handoff.take()) }
        thread.name = "flagserver.listen"
        thread.start()
        sync.onStop { listener.stopped.store(true, ordering: .relaxed) }
    }

    private func connect() throws -> PostgresConnection {
        let connection = try PostgresConnection(info)
        try connection.execute("LISTEN \(PostgresFlagStore.channel)")
        sync.setListening(true)
        return connection
    }

    private func run(_ first: PostgresConnection?) {
        var connection = first
        var delay = Self.backoff.first
        var nextCheck = Date().addingTimeInterval(Self.checkInterval)
        while !stopped.load(ordering: .relaxed) {
            if connection == nil {
                do {
                    connection = try connect()
                    log("listening for changes on \(info.redacted) again")
                    delay = Self.backoff.first
                    sync.check()
                } catch {
                    Thread.sleep(forTimeInterval: delay)
                    delay = min(delay * 2, Self.backoff.limit)
                    if Date() >= nextCheck {
                        sync.check()
                        nextCheck = Date().addingTimeInterval(Self.checkInterval)
                    }
                    continue
                }
            }
            guard let listening = connection else { continue }
            do {
                let wait = max(0, nextCheck.timeIntervalSinceNow)
                if try Self.waitForInput(on: listening.socket, seconds: wait) {
                    try listening.consumeInput()
                    while let notification = listening.nextNotification() { handle(notification) }
                }
                if Date() >= nextCheck {
                    let usage = try listening.queryFirst("SELECT pg_notification_queue_usage()") {
                        Double(try $0.text(0)) ?? 0
                    }
                    sync.setNotificationQueueUsage(usage ?? 0)
                    sync.check()
                    nextCheck = Date().addingTimeInterval(Self.checkInterval)
                }
            } catch {
                log("lost the connection listening for changes (\(error)); connecting again")
                sync.setListening(false)
                connection = nil
            }
        }
    }

    private func handle(_ notification: PostgresNotification) {
        switch PostgresFlagStore.change(fromPayload: notification.payload) {
        case .set(let set, let version): sync.setChanged(set, version: version)
        case .tokens: sync.tokensChanged()
        case nil: log("ignored a notification on \(notification.channel) that is not Flagstaff's")
        }
    }

    /// Waits until `socket` has input or `seconds` pass; whether it has input.
    private static func waitForInput(on socket: Int32, seconds: Double) throws -> Bool {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let result = poll(&descriptor, 1, Int32(min(seconds, Self.checkInterval) * 1000))
        if result < 0 && errno != EINTR {
            throw PostgresError.unreachable("poll failed: \(String(cString: strerror(errno)))")
        }
        return result > 0
    }
}

/// Hands the first connection, if there is one, to the listener's thread.
// @unchecked Sendable is safe: the connection is taken once, by the thread, after `start` has stopped using it.
private final class Handoff: @unchecked Sendable {
    private var connection: PostgresConnection?

    init(_ connection: PostgresConnection?) {
        self.connection = connection
    }

    func take() -> PostgresConnection? {
        defer { connection = nil }
        return connection
    }
}
