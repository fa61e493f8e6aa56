import CSystem
import FlagLock
import Glibc
import Synchronization

/// Identifies a connection within its loop; the generation makes ids of closed connections stale, not reused.
struct ConnectionID: Hashable, Sendable {
    let slot: UInt32
    let generation: UInt32

    init(slot: UInt32, generation: UInt32) {
        self.slot = slot
        self.generation = generation
    }

    init(token: UInt64) {
        self.init(slot: UInt32(truncatingIfNeeded: token), generation: UInt32(truncatingIfNeeded: token >> 32))
    }

    /// The epoll user data for this connection.
    var token: UInt64 { UInt64(generation) << 32 | UInt64(slot) }
}

/// Configuration and shared state every loop of one server reads.
final class ServerShared: Sendable {
    let configuration: HTTPServerConfiguration
    let handler: HTTPHandler
    let metrics = MetricsStorage()
    /// What every connection's state machine is given: the limits and timeouts in bytes and nanoseconds.
    let connectionConfiguration: ConnectionStateMachine.Configuration
    /// `configuration.trustedProxies`; nil when there are none, so that a peer is checked against nothing.
    let trustedProxies: TrustedProxies?
    /// Open connections per client address, for every loop; nil when `maxConnectionsPerAddress` is 0. Taken once
    /// when a connection is accepted and once when it closes, and on a trusted proxy's connection when a request
    /// names another client than the one before; never on another request.
    let connectionsPerAddress: Locked<ConnectionsPerAddress>?
    /// How often a loop scans its connections for expired deadlines: a quarter of the shortest timeout,
    /// between 5 ms and 250 ms. Deadlines are therefore enforced within one tick: a header timeout closes a
    /// slowloris socket at most a quarter of that timeout late, and a scan of every slot a few times a second is cheap.
    let tick: Int64

    init(configuration: HTTPServerConfiguration, handler: @escaping HTTPHandler) {
        self.configuration = configuration
        self.handler = handler
        let headerTimeout = max(1, configuration.headerReadTimeout.nanoseconds)
        let idleTimeout = max(1, configuration.idleTimeout.nanoseconds)
        let maxConnectionsPerAddress = max(0, configuration.maxConnectionsPerAddress)
        connectionConfiguration = ConnectionStateMachine.Configuration(
            parserLimits: configuration.limits, maxPipelinedRequests: configuration.maxPipelinedRequests,
            outputHighWater: 256 * 1024, maxPendingOutputBytes: configuration.maxPendingOutputBytes,
            headerTimeout: headerTimeout, idleTimeout: idleTimeout,
            lingerTimeout: max(0, configuration.lingerTimeout.nanoseconds),
            bodyNanosecondsPerByte: 1_000_000_000 / Int64(max(1, configuration.minBodyBytesPerSecond)),
            maxConnectionsPerAddress: maxConnectionsPerAddress)
        trustedProxies = configuration.trustedProxies.isEmpty ? nil : TrustedProxies(configuration.trustedProxies)
        connectionsPerAddress =
            maxConnectionsPerAddress > 0 ? Locked(ConnectionsPerAddress(limit: maxConnectionsPerAddress)) : nil
        tick = min(250_000_000, max(5_000_000, min(headerTimeout, idleTimeout) / 4))
    }
}

extension ServerShared {
    /// Counts a connection counted for `old` (nil: for no one) for `new` instead, if `new` has room; true without a
    /// count when there is no cap.
    func moveConnection(from old: IPAddress?, to new: IPAddress) -> Bool {
        connectionsPerAddress?.withLock { $0.move(from: old, to: new) } ?? true
    }
}

/// One event-loop thread: an epoll instance, a listening socket of its own (`SO_REUSEPORT`) and its connections.
///
/// Level-triggered epoll: each readiness event costs one `read` (no read-until-EAGAIN), reading can be paused by
/// dropping `EPOLLIN` from the interest set, and `EPOLLOUT` is only registered while output is pending, so interest
/// changes (`epoll_ctl`) happen only on those state changes.
///
/// `@unchecked Sendable` is safe because every mutable stored property other than `inbox` and the atomics is
/// confined to the loop thread: it is touched only from `run()` and from the entry points below after they have
/// checked `inLoopThread`; other threads go through `enqueue(_:)` (a lock) and the eventfd.
final class EventLoop: @unchecked Sendable {
    static let listenerToken = UInt64.max
    static let wakeToken = UInt64.max - 1
    static let iovecCapacity = 64
    private static let eventCapacity = 256
    private static let readBufferSize = 64 * 1024

    let index: Int
    let shared: ServerShared
    /// Requests parsed by this loop; per loop so threads do not contend on one counter.
    let requestCount = Atomic<Int>(0)
    let wakeFD: Int32
    let inbox = Locked(Inbox())
    /// Whether `inbox` holds answers to requests: set with them, read without the lock while the loop writes a long
    /// batch of stream events.
    let answersWaiting = Atomic<Bool>(false)
    private let loopThread = Atomic<UInt>(0)

    // Loop-thread state.
    let epollFD: Int32
    var listenFD: Int32
    var listenerPausedUntil: Int64?
    var connections: [Connection?] = []
    var generations: [UInt32] = []
    var freeSlots: [Int] = []
    var liveConnections = 0
    private var dirty: [Connection] = []
    var spareMessages: [LoopMessage] = []
    var spareResponses: [LoopMessage] = []
    private(set) var now: Int64 = 0
    private(set) var dateCache = HTTPDateCache()
    private(set) var drainDeadline: Int64?
    private var nextTimerCheck: Int64 = 0
    let readBuffer: UnsafeMutableRawBufferPointer
    let iovecs: UnsafeMutablePointer<iovec>
    private let events: UnsafeMutablePointer<epoll_event>

    struct Inbox {
        /// Answers to requests: the loop takes them before `messages`.
        var responses: [LoopMessage] = []
        /// Everything else (stream starts, writes and ends, shutdown), in the order it came.
        var messages: [LoopMessage] = []
        var wakePending = false
        var isOpen = true

        /// Queues `message` in its lane: a writer's answer does not wait behind the stream events its write fanned
        /// out. Each lane keeps its order.
        mutating func append(_ message: LoopMessage) {
            if case .respond = message {
                responses.append(message)
            } else {
                messages.append(message)
            }
        }

        var isEmpty: Bool { responses.isEmpty && messages.isEmpty }
    }

    /// Creates the epoll instance and registers the listener and the wake-up eventfd (on the starting thread).
    init(index: Int, listenFD: Int32, shared: ServerShared) throws {
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw HTTPServerError.socket("epoll_create1()", "loop", index, errno: errno) }
        let wakeFD = csystem_eventfd()
        guard wakeFD >= 0 else {
            let code = errno
            close(epollFD)
            throw HTTPServerError.socket("eventfd()", "loop", index, errno: code)
        }
        self.index = index
        self.shared = shared
        self.epollFD = epollFD
        self.wakeFD = wakeFD
        self.listenFD = listenFD
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        iovecs = .allocate(capacity: Self.iovecCapacity)
        events = .allocate(capacity: Self.eventCapacity)
        var listenEvent = csystem_epoll_event(CSYSTEM_EPOLLIN, Self.listenerToken)
        var wakeEvent = csystem_epoll_event(CSYSTEM_EPOLLIN, Self.wakeToken)
        epoll_ctl(epollFD, EPOLL_CTL_ADD, listenFD, &listenEvent)
        epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &wakeEvent)
    }

    deinit {
        // The eventfd lives as long as this object so that a late `enqueue` never writes to a reused descriptor.
        close(wakeFD)
        readBuffer.deallocate()
        iovecs.deallocate()
        events.deallocate()
    }

    /// Whether the caller runs on this loop's thread (the fast path for responders and streams).
    var inLoopThread: Bool {
        loopThread.load(ordering: .relaxed) == UInt(pthread_self())
    }

    var isDraining: Bool { drainDeadline != nil }

    // MARK: - The loop

    /// Runs until drained after `shutdown`; the thread's whole life.
    func run() {
        loopThread.store(UInt(pthread_self()), ordering: .relaxed)
        now = Socket.monotonicNanoseconds()
        dateCache.update(secondsSince1970: HTTPDateCache.wallClockSeconds())
        nextTimerCheck = now + shared.tick
        while true {
            let count = epoll_wait(epollFD, events, Int32(Self.eventCapacity), pollTimeout())
            now = Socket.monotonicNanoseconds()
            dateCache.update(secondsSince1970: HTTPDateCache.wallClockSeconds())
            if count < 0 && errno != EINTR { break }
            for index in 0..<max(0, Int(count)) {
                handle(events + index)
            }
            flushDirty()
            if now >= nextTimerCheck {
                checkDeadlines()
                nextTimerCheck = now + shared.tick
            }
            if let deadline = drainDeadline, liveConnections == 0 || now >= deadline { break }
        }
        finish()
    }

    private func pollTimeout() -> Int32 {
        guard liveConnections > 0 || drainDeadline != nil || listenerPausedUntil != nil else { return -1 }
        var wait = nextTimerCheck - now
        if let deadline = drainDeadline { wait = min(wait, deadline - now) }
        return Int32(clamping: max(0, (wait + 999_999) / 1_000_000))
    }

    private func handle(_ event: UnsafePointer<epoll_event>) {
        let token = csystem_epoll_event_data(event)
        switch token {
        case Self.listenerToken:
            acceptConnections()
        case Self.wakeToken:
            drainInbox()
        default:
            connection(for: ConnectionID(token: token))?.handle(events: csystem_epoll_event_events(event))
        }
    }

    /// Closes what is left and stops accepting messages; later responses are dropped.
    private func finish() {
        inbox.withLock {
            $0.isOpen = false
            $0.messages = []
            $0.responses = []
        }
        closeListener()
        for case let connection? in connections {
            connection.close(.shutdown)
        }
        loopThread.store(0, ordering: .relaxed)
        close(epollFD)
    }

    /// Releases the descriptors of a loop whose thread never started.
    func discardUnstarted() {
        inbox.withLock { $0.isOpen = false }
        closeListener()
        close(epollFD)
    }

    // MARK: - Connections

    func connection(for id: ConnectionID) -> Connection? {
        let slot = Int(id.slot)
        guard slot < connections.count, let connection = connections[slot], connection.id == id else { return nil }
        return connection
    }

    /// Connections whose output changed; each is flushed once at the end of the loop iteration, so many responses
    /// (pipelined, or a fan-out to many streams) cost one write per connection.
    func markDirty(_ connection: Connection) {
        guard !connection.isDirty else { return }
        connection.isDirty = true
        dirty.append(connection)
    }

    private func flushDirty() {
        var index = 0
        while index < dirty.count {
            let connection = dirty[index]
            index += 1
            guard connection.isDirty else { continue }  // already flushed by its own event
            connection.isDirty = false
            connection.flush()
        }
        dirty.emptyKeepingCapacity()
    }

    private func checkDeadlines() {
        if let until = listenerPausedUntil, now >= until { resumeListener() }
        for case let connection? in connections {
            connection.checkDeadline(now: now)
        }
    }

    /// Graceful shutdown: stop accepting, close idle connections, let in-flight requests finish until `deadline`.
    func beginDrain(deadline: Int64) {
        guard drainDeadline == nil else { return }
        drainDeadline = deadline
        closeListener()
        for case let connection? in connections {
            connection.beginDrain()
        }
    }
}
