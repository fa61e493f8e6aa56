import CSystem
import Glibc

/// One client connection, owned by its loop's thread: the socket side of a `ConnectionStateMachine`. It reads,
/// writes, changes the epoll interest, shuts down, closes and calls the handler as the machine's answers say; every
/// protocol decision is the machine's.
///
/// Memory per idle connection is a few hundred bytes: reads go into the loop's buffer, and the parser and the
/// output queue release their storage whenever they drain.
final class Connection {
    typealias CloseReason = ConnectionStateMachine.CloseReason

    /// The loop that owns this connection. The two hold each other until the connection closes and leaves the
    /// loop's table.
    let loop: EventLoop
    let fd: Int32
    let id: ConnectionID
    /// All the protocol state, so an event is one access to one property.
    // The one field of the engine whose exclusivity is not checked at run time: every event is an access to it, and
    // the runtime's tracking costs a measurable share of a keep-alive request (BENCHMARKS.md). It belongs to the loop
    // thread, and no method hands an `inout` reference to it to code that reaches it again (the handler, called
    // between two machine events, reaches the machine through `deliver` only after the pull loop's access ended).
    @exclusivity(unchecked) var machine: ConnectionStateMachine
    /// On the loop's list of connections to flush at the end of this iteration.
    var isDirty = false

    init(loop: EventLoop, fd: Int32, id: ConnectionID, origin: RequestOrigin, countedAddress: IPAddress?) {
        self.loop = loop
        self.fd = fd
        self.id = id
        machine = ConnectionStateMachine(
            configuration: loop.shared.connectionConfiguration, origin: origin, countedAddress: countedAddress,
            now: loop.now)
    }

    /// The epoll events that stand for `interest`; the peer's half-close is always watched.
    static func epollEvents(_ interest: ConnectionStateMachine.Interest) -> UInt32 {
        var events = CSYSTEM_EPOLLRDHUP
        if interest.reading { events |= CSYSTEM_EPOLLIN }
        if interest.writable { events |= CSYSTEM_EPOLLOUT }
        return events
    }

    // MARK: - Socket events

    func handle(events: UInt32) {
        if events & CSYSTEM_EPOLLERR != 0 {
            close(.peerGone)
            return
        }
        let hangUp = events & (CSYSTEM_EPOLLRDHUP | CSYSTEM_EPOLLHUP) != 0
        if events & CSYSTEM_EPOLLIN != 0 || (hangUp && machine.input != .paused) {
            readable()
        } else if hangUp {
            peerGone()
        }
        if events & CSYSTEM_EPOLLOUT != 0 && !machine.isClosed {
            loop.markDirty(self)
        }
        // Answers to this connection's own requests go out now rather than after the whole epoll batch:
        // lower latency, and the output buffers are released sooner.
        if isDirty {
            isDirty = false
            flush()
        }
    }

    private func readable() {
        let count = read(fd, loop.readBuffer.baseAddress, loop.readBuffer.count)
        guard count > 0 else {
            if count == 0 {
                peerGone()
            } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                close(.peerGone)
            }
            return
        }
        // Parsed in the loop's read buffer, which stays untouched until the pull loop below has ended.
        switch machine.received(UnsafeRawBufferPointer(rebasing: loop.readBuffer[..<count]), at: loop.now) {
        case .ignore:
            return
        case .close(let reason):
            close(reason)
        case .parse:
            processRequests()
            apply(machine.settle())
        }
    }

    private func peerGone() {
        let (sendFirst, reason) = machine.peerClosed()
        if sendFirst {
            _ = machine.output.send(to: fd, iovecs: loop.iovecs, capacity: EventLoop.iovecCapacity)
        }
        close(reason)
    }

    /// Carries out what the parsed input asks until the machine needs more input or stops reading.
    private func processRequests() {
        while let action = machine.nextRequestAction() {
            // Consumed: the request moves out of the action instead of being copied and the action destroyed.
            switch consume action {
            case .dispatch(let request, let sequence):
                dispatch(request, sequence: sequence)
            case .attribute(let request, let client):
                if loop.shared.moveConnection(from: machine.countedAddress, to: client) {
                    dispatch(request, sequence: machine.attributed(request, to: client))
                } else {
                    reject(machine.refuseOverAddressCap(request))
                }
            case .reject(let rejection):
                reject(rejection)
            case .flush:
                loop.markDirty(self)
            }
        }
    }

    @inline(__always)
    private func dispatch(_ request: HTTPRequest, sequence: Int) {
        let responder = HTTPResponder(target: .connection(loop, id), sequence: sequence)
        machine.attach(responder, to: sequence)
        loop.requestCount.add(1, ordering: .relaxed)
        loop.shared.handler(request, responder)
    }

    private func reject(_ rejection: HTTPRejection) {
        machine.queueRejection(loop.refusal(rejection))
        loop.markDirty(self)
    }

    private func apply(_ interest: ConnectionStateMachine.Interest?) {
        guard let interest else { return }
        var event = csystem_epoll_event(Self.epollEvents(interest), id.token)
        epoll_ctl(loop.epollFD, EPOLL_CTL_MOD, fd, &event)
    }

    /// Writes what is queued, then closes, lingers or resumes reading as the machine says.
    func flush() {
        var result = ConnectionStateMachine.WriteResult.start
        while true {
            switch machine.nextWriteStep(after: result, now: loop.now) {
            case .send:
                var written: Int
                repeat {
                    written = machine.output.send(to: fd, iovecs: loop.iovecs, capacity: EventLoop.iovecCapacity)
                } while written < 0 && errno == EINTR
                if written > 0 {
                    result = .wrote
                } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    result = .wouldBlock
                } else {
                    close(.peerGone)
                    return
                }
            case .readRequests:
                processRequests()
                result = .readRequests
            case .close(let reason):
                close(reason)
                return
            case .linger(let interest):
                shutdown(fd, Int32(SHUT_WR))
                apply(interest)
                return
            case .finished(let interest):
                apply(interest)
                return
            case .stop:
                return
            }
        }
    }

    // MARK: - Responses and streams

    /// A complete response for request `sequence`.
    func deliver(sequence: Int, _ response: HTTPResponse) {
        let date = loop.dateCache.line
        react(
            machine.responseReady(sequence: sequence, requestsClose: HTTPResponseEncoder.requestsClose(response)) {
                context in HTTPResponseEncoder.encode(response, context, date: date)
            })
    }

    /// Starts a streamed response for request `sequence`.
    func startStream(sequence: Int, _ head: HTTPResponse) {
        let started = machine.streamStarted(sequence: sequence, body: head.body) { version in
            HTTPResponseEncoder.encodeStreamHead(head, version: version, date: loop.dateCache.line)
        }
        guard started else { return }
        loop.shared.metrics.openStreams.add(1, ordering: .relaxed)
        loop.markDirty(self)
    }

    /// Appends stream bytes. Returns false if the stream's start has not been applied yet (the caller queues the
    /// write behind it); true when the bytes were taken or dropped.
    func streamWrite(sequence: Int, _ bytes: [UInt8]) -> Bool {
        react(machine.streamWrite(sequence: sequence, bytes))
    }

    /// Ends the stream of request `sequence`. Returns false if the stream's start has not been applied yet.
    func streamFinish(sequence: Int) -> Bool {
        react(machine.streamFinished(sequence: sequence))
    }

    private func react(_ reaction: ConnectionStateMachine.Reaction) {
        switch reaction {
        case .none: break
        case .flush: loop.markDirty(self)
        case .close(let reason): close(reason)
        }
    }

    private func react(_ reaction: ConnectionStateMachine.StreamReaction) -> Bool {
        switch reaction {
        case .notStarted: return false
        case .ignored: break
        case .flush: loop.markDirty(self)
        case .close(let reason): close(reason)
        }
        return true
    }

    // MARK: - Timers and closing

    /// A timer tick: closes the connection if its deadline has passed.
    func checkDeadline(now: Int64) {
        if let reason = machine.deadlinePassed(at: now) { close(reason) }
    }

    /// Shutdown: idle connections close now; in-flight requests may finish; open streams end.
    func beginDrain() {
        react(machine.drain())
    }

    func close(_ reason: CloseReason) {
        guard let entries = machine.close() else { return }
        // Counted before the descriptor closes, so a client that sees the close also sees the counts.
        switch reason {
        case .headerTimeout: loop.shared.metrics.count("header_timeout")
        case .bodyTimeout: loop.shared.metrics.count("body_timeout")
        case .idleTimeout: loop.shared.metrics.count("idle_timeout")
        case .slowReader: loop.shared.metrics.count("slow_reader")
        case .done, .peerGone, .shutdown: break
        }
        for entry in entries {
            if case .streaming = entry.state { loop.shared.metrics.openStreams.subtract(1, ordering: .relaxed) }
        }
        loop.remove(self)
        Glibc.close(fd)
        for entry in entries {
            entry.responder?.connectionClosed()
        }
    }
}
