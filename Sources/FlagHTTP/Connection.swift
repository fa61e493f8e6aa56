import CSystem
import Glibc

/// One client connection, owned by its loop's thread: reading, parsing, dispatch, ordered output and timeouts.
///
/// Memory per idle connection is a few hundred bytes: reads go into the loop's buffer, and the parser and the
/// output queue release their storage whenever they drain.
final class Connection {
    /// A request handed to the handler, in request order, until its response has been queued for writing.
    struct Outstanding {
        let sequence: Int
        /// Nil for the engine's own rejection response.
        let responder: HTTPResponder?
        let keepAlive: Bool
        let isHeadRequest: Bool
        let version: HTTPVersion
        var state: State

        enum State {
            case waiting
            /// Answered out of order: encoded, waiting for the requests before it.
            case done(chunks: [[UInt8]], close: Bool)
            /// A stream: bytes written before it reached the head of the line wait in `pending`.
            case streaming(pending: [[UInt8]], finished: Bool)
        }
    }

    enum Input {
        case parsing
        /// Too much outstanding work: `EPOLLIN` is off until the responses have drained.
        case paused
        /// No more requests will be served on this connection: bytes are read and dropped.
        case discarding
    }

    enum Phase: Equatable {
        case open
        /// Closes once the queued output has been written; then lingers first if the client may still be sending.
        case closing(linger: Bool)
        /// Our side is shut down (`SHUT_WR`); input is drained until EOF or the linger timeout, then closed.
        case lingering
        case closed
    }

    enum CloseReason {
        case done, peerGone, headerTimeout, bodyTimeout, idleTimeout, slowReader, shutdown
    }

    /// `unowned(unsafe)`: the loop holds every connection in its table and outlives them all (it closes them in
    /// `finish()` before it goes), so the reference is always valid; the checked `unowned` cost an atomic
    /// `swift_unownedRetainStrong` on each of the many `loop.` accesses per request (2 % of the serving profile).
    unowned(unsafe) let loop: EventLoop
    let fd: Int32
    let id: ConnectionID
    let remoteAddress: String
    // The mutable state below is `@exclusivity(unchecked)`: it belongs to the loop thread, and the loop's methods
    // never hand an `inout` reference to one of these properties to code that reaches the same property again, so
    // the runtime's access tracking (about 25 `swift_beginAccess` calls per request, a tenth of the serving path's
    // instructions) cannot find anything. The debug tests ran with it checked before it was switched off.
    /// Created with the first bytes read, so a connection that never sends any costs nothing for it.
    @exclusivity(unchecked) var context: HTTPConnectionContext?
    @exclusivity(unchecked) var parser: HTTPRequestParser
    @exclusivity(unchecked) var outstanding: [Outstanding] = []
    @exclusivity(unchecked) var nextSequence = 0
    @exclusivity(unchecked) var output = OutputQueue()
    @exclusivity(unchecked) var input = Input.parsing
    @exclusivity(unchecked) var phase = Phase.open
    @exclusivity(unchecked) var registeredEvents = CSYSTEM_EPOLLIN | CSYSTEM_EPOLLRDHUP
    @exclusivity(unchecked) var wantsWritable = false
    @exclusivity(unchecked) var isDirty = false
    /// Monotonic nanoseconds at which `deadlineExpired` runs; 0 for none.
    @exclusivity(unchecked) var deadline: Int64 = 0
    @exclusivity(unchecked) var deadlineReason = CloseReason.headerTimeout
    @exclusivity(unchecked) var headStart: Int64
    @exclusivity(unchecked) var lastReadProgress: Int64
    @exclusivity(unchecked) var lastWriteProgress: Int64
    @exclusivity(unchecked) var idleSince: Int64
    @exclusivity(unchecked) var hasServedRequest = false
    @exclusivity(unchecked) var lingeredBytes = 0
    /// Set by a rejection: the client may still be sending, so closing lingers to let the error response arrive.
    @exclusivity(unchecked) var lingerOnClose = false
    /// The last request's responder, reused for the next request when nothing else holds it any more.
    @exclusivity(unchecked) var spareResponder: HTTPResponder?

    init(loop: EventLoop, fd: Int32, id: ConnectionID, remoteAddress: String) {
        self.loop = loop
        self.fd = fd
        self.id = id
        self.remoteAddress = remoteAddress
        self.parser = HTTPRequestParser(limits: loop.shared.configuration.limits)
        headStart = loop.now
        lastReadProgress = loop.now
        lastWriteProgress = loop.now
        idleSince = loop.now
        deadline = loop.now + loop.shared.headerTimeout
    }

    // MARK: - Events

    func handle(events: UInt32) {
        if events & CSYSTEM_EPOLLERR != 0 {
            close(.peerGone)
            return
        }
        let hangUp = events & (CSYSTEM_EPOLLRDHUP | CSYSTEM_EPOLLHUP) != 0
        if events & CSYSTEM_EPOLLIN != 0 || (hangUp && input != .paused) {
            readable()
        } else if hangUp {
            peerGone()
        }
        if phase != .closed && events & CSYSTEM_EPOLLOUT != 0 {
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
        lastReadProgress = loop.now
        if phase == .lingering {
            lingeredBytes += count
            if lingeredBytes > loop.shared.configuration.limits.maxBodyBytes { close(.done) }
            return
        }
        guard phase == .open, input != .discarding else { return }
        if parser.isIdle { headStart = loop.now }
        if context == nil {
            let context = HTTPConnectionContext()
            self.context = context
            parser.remoteAddress = remoteAddress
            parser.connection = context
        }
        parser.receivedAt = loop.now
        let bytes = UnsafeRawBufferPointer(rebasing: loop.readBuffer[..<count])
        if parser.hasBufferedInput {
            parser.append(bytes)
            processRequests()
        } else {
            processRequests(direct: bytes)
        }
        updateDeadline()
    }

    /// The client closed its side. A half-closed client is treated as gone (as Go's net/http does): responses
    /// already produced are written if the socket takes them now, the rest are dropped and `onClose` fires.
    private func peerGone() {
        if phase != .lingering && !output.isEmpty {
            _ = output.send(to: fd, iovecs: loop.iovecs, capacity: EventLoop.iovecCapacity)
        }
        close(phase == .lingering ? .done : .peerGone)
    }

    // MARK: - Requests

    /// Parses and dispatches buffered requests until the parser needs input or back-pressure pauses reading.
    /// `direct` bytes (just read, while the parser holds none) are parsed in the loop's read buffer; what is left of
    /// them is handed to the parser at the end, since the read buffer is reused.
    func processRequests(direct bytes: UnsafeRawBufferPointer? = nil) {
        // One field, not the whole configuration: copying that would retain its renderer closure on every read.
        let maxPipelinedRequests = loop.shared.configuration.maxPipelinedRequests
        var offset = 0
        defer {
            if let bytes, offset < bytes.count, phase != .closed {
                parser.append(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            }
        }
        while phase == .open && input == .parsing {
            if outstanding.count >= maxPipelinedRequests
                || output.byteCount >= loop.shared.outputHighWater
            {
                input = .paused
                break
            }
            let event: HTTPParserEvent?
            if let bytes {
                event = parser.next(from: bytes, offset: &offset)
            } else {
                event = parser.next()
            }
            guard let event else { break }
            switch event {
            case .request(let request):
                dispatch(request)
            case .continueExpected:
                if outstanding.isEmpty && output.isEmpty {
                    output.append(Self.continueResponse)
                    loop.markDirty(self)
                }
            case .rejected(let rejection):
                reject(rejection)
            }
        }
        updateInterest()
    }

    private static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private func dispatch(_ request: HTTPRequest) {
        let sequence = nextSequence
        nextSequence += 1
        let responder: HTTPResponder
        if isKnownUniquelyReferenced(&spareResponder), let spare = spareResponder, spare.reuse(sequence: sequence) {
            responder = spare
        } else {
            responder = HTTPResponder(target: .connection(loop, id), sequence: sequence)
            spareResponder = responder
        }
        outstanding.append(
            Outstanding(
                sequence: sequence, responder: responder, keepAlive: request.keepAlive,
                isHeadRequest: request.method == "HEAD", version: request.version, state: .waiting))
        if !request.keepAlive { input = .discarding }
        hasServedRequest = true
        loop.requestCount.add(1, ordering: .relaxed)
        loop.shared.handler(request, responder)
    }

    /// Queues the rejection's error, as the configuration renders it, behind any earlier responses; the connection
    /// then lingers and closes.
    private func reject(_ rejection: HTTPRejection) {
        loop.shared.metrics.count(rejection.code)
        input = .discarding
        let context = HTTPResponseEncoder.Context(isHeadRequest: false, version: .http1_1, close: true)
        let response = loop.shared.configuration.renderRejection(rejection)
        let encoded = HTTPResponseEncoder.encode(response, context, date: loop.dateCache.line)
        let sequence = nextSequence
        nextSequence += 1
        outstanding.append(
            Outstanding(
                sequence: sequence, responder: nil, keepAlive: false, isHeadRequest: false, version: .http1_1,
                state: .done(chunks: [encoded.head] + (encoded.body.map { [$0] } ?? []), close: true)))
        lingerOnClose = true
        advance()
        loop.markDirty(self)
    }
}
