import CSystem
import FlagLock
import Glibc
import Synchronization

/// An HTTP/1.1 server on POSIX sockets: one epoll event-loop thread per core, each with its own listening socket.
///
/// ```swift
/// let server = HTTPServer(configuration: .init(port: 0)) { request, responder in
///     responder.respond(HTTPResponse(status: 200, body: Array("ok".utf8)))
/// }
/// let port = try server.start()
/// …
/// server.shutdown(deadline: .seconds(5))
/// ```
/// The handler runs on a loop thread and must not block it; answer later from any thread through the responder.
public final class HTTPServer: Sendable {
    private enum State {
        case idle
        case running(loops: [EventLoop], threads: [pthread_t], port: Int)
        case stopped(loops: [EventLoop])
    }

    private let shared: ServerShared
    private let state = Locked(State.idle)

    /// A server that answers every request through `handler`; nothing is bound until `start()`.
    public init(configuration: HTTPServerConfiguration, handler: @escaping HTTPHandler) {
        shared = ServerShared(configuration: configuration, handler: handler)
    }

    /// The configuration the server was created with.
    public var configuration: HTTPServerConfiguration { shared.configuration }

    /// Binds the listening sockets and starts the loop threads; returns the bound port (useful with port 0).
    ///
    /// Also raises the open-file limit to its hard maximum and ignores `SIGPIPE` for the whole process.
    public func start() throws -> Int {
        try state.withLock { state in
            guard case .idle = state else { throw HTTPServerError.alreadyStarted }
            Socket.raiseFileLimit()
            signal(SIGPIPE, SIG_IGN)
            let configuration = shared.configuration
            var loops: [EventLoop] = []
            var port = configuration.port
            try Socket.ensureAvailable(host: configuration.host, port: port)
            do {
                for index in 0..<max(1, configuration.loopCount) {
                    let fd = try Socket.listen(host: configuration.host, port: port, backlog: configuration.backlog)
                    if index == 0 {
                        // Port 0: the first socket picks a port; the others join it through SO_REUSEPORT.
                        guard let bound = Socket.boundPort(fd) else {
                            let code = errno
                            close(fd)
                            throw HTTPServerError.socket("getsockname()", configuration.host, port, errno: code)
                        }
                        port = bound
                    }
                    do {
                        loops.append(try EventLoop(index: index, listenFD: fd, shared: shared))
                    } catch {
                        close(fd)
                        throw error
                    }
                }
            } catch {
                for loop in loops { loop.discardUnstarted() }
                throw error
            }
            let threads = try Self.spawnAll(loops)
            state = .running(loops: loops, threads: threads, port: port)
            return port
        }
    }

    /// The bound port while running; nil before `start()` and after `shutdown`.
    public var port: Int? {
        state.withLock { state in
            if case .running(_, _, let port) = state { return port }
            return nil
        }
    }

    /// Stops accepting, closes idle connections and open streams, lets in-flight requests finish until `deadline`
    /// (then closes whatever is left), and returns once every loop thread has exited.
    /// Must not be called from a handler (it waits for the loop threads).
    public func shutdown(deadline: Duration) {
        let running = state.withLock { state -> (loops: [EventLoop], threads: [pthread_t])? in
            guard case .running(let loops, let threads, _) = state else { return nil }
            state = .stopped(loops: loops)
            return (loops, threads)
        }
        guard let running else { return }
        let deadlineNanoseconds = Socket.monotonicNanoseconds() + max(0, deadline.nanoseconds)
        for loop in running.loops {
            loop.enqueue(.shutdown(deadline: deadlineNanoseconds))
        }
        for thread in running.threads {
            pthread_join(thread, nil)
        }
    }

    /// Current counters: open connections and streams, requests, and refusals by reason.
    public var metrics: HTTPServerMetrics {
        let loops = state.withLock { state -> [EventLoop] in
            switch state {
            case .idle: return []
            case .running(let loops, _, _), .stopped(let loops): return loops
            }
        }
        let requests = loops.reduce(0) { $0 + $1.requestCount.load(ordering: .relaxed) }
        return shared.metrics.snapshot(requests: requests)
    }

    /// Requests parsed per loop, for tests that check connections spread over the loops.
    var requestsPerLoop: [Int] {
        state.withLock { state -> [Int] in
            switch state {
            case .idle: return []
            case .running(let loops, _, _), .stopped(let loops):
                return loops.map { $0.requestCount.load(ordering: .relaxed) }
            }
        }
    }

    /// Starts one thread per loop; if one cannot be created, the started ones are stopped again before throwing.
    private static func spawnAll(_ loops: [EventLoop]) throws -> [pthread_t] {
        var threads: [pthread_t] = []
        for loop in loops {
            do {
                threads.append(try spawn(loop))
            } catch {
                for started in loops.prefix(threads.count) {
                    started.enqueue(.shutdown(deadline: Socket.monotonicNanoseconds()))
                }
                for thread in threads { pthread_join(thread, nil) }
                for unstarted in loops.dropFirst(threads.count) { unstarted.discardUnstarted() }
                throw error
            }
        }
        return threads
    }

    private static func spawn(_ loop: EventLoop) throws -> pthread_t {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(loop).toOpaque()
        let result = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                let loop = Unmanaged<EventLoop>.fromOpaque(context).takeRetainedValue()
                csystem_set_thread_name("http-loop-\(loop.index)")
                loop.run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<EventLoop>.fromOpaque(context).release()
            throw HTTPServerError.thread(errno: result)
        }
        return thread
    }
}
