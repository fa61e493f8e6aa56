/// The protocol decisions of one HTTP/1.1 connection, without I/O: it takes events (bytes read, bytes written,
/// a response or stream write for request N, a timer tick, a drain) and answers with what the socket code must do
/// (dispatch request N, flush, change the epoll interest, shut down the write side and linger, close).
///
/// It owns the parser, the requests in flight in request order, the output queued as bytes, the input mode, the
/// phase and the single deadline with its reason. It reads no clock: every event that needs the time is given it.
/// The socket code (`Connection`) carries out the answers; tests drive it without sockets
/// (in the manner of async-http-client's `HTTP1ConnectionStateMachine`).
struct ConnectionStateMachine {
    private static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    let configuration: Configuration
    private(set) var parser: HTTPRequestParser
    /// The requests in flight, in request order (set here and in `+Streams`).
    var outstanding: [Outstanding] = []
    private(set) var nextSequence = 0
    /// Bytes waiting to be written; the socket code writes from it (`OutputQueue.send`) during `.send` steps.
    var output = OutputQueue()
    var input = Input.parsing
    private(set) var phase = Phase.open
    /// The interest last handed out, which the socket code has applied.
    private(set) var interest = Interest(reading: true, writable: false)
    private(set) var wantsWritable = false
    /// Monotonic nanoseconds at which the connection closes for `deadlineReason`; 0 for none.
    private(set) var deadline: Int64
    private(set) var deadlineReason = CloseReason.headerTimeout
    private(set) var isDraining = false
    private var headStart: Int64
    private var lastReadProgress: Int64
    private var lastWriteProgress: Int64
    private var idleSince: Int64
    private var hasServedRequest = false
    private var lingeredBytes = 0
    /// Set by a rejection: the client may still be sending, so closing lingers to let the error response arrive.
    private var lingerOnClose = false
    /// Whom the requests come from, given to the parser with the first bytes.
    private let origin: RequestOrigin
    /// The client address the connection is counted for against `maxConnectionsPerAddress`: the peer's from accept
    /// when the peer is not a trusted proxy, else that of the latest request's client; nil while none (a proxy's
    /// connection before its first request, or no cap). The socket code uncounts it when the connection closes.
    private(set) var countedAddress: IPAddress?
    /// Whether each request's client is counted: the peer is a trusted proxy and the cap is on.
    private let countsForwardedClients: Bool
    /// Bytes just read while the parser held none: parsed where they lie, and what is left of them is copied into
    /// the parser when `nextRequestAction()` answers nil. Valid only during that pull loop.
    private var direct: UnsafeRawBufferPointer?
    private var directOffset = 0

    /// A connection from `origin`, counted for `countedAddress` already when its peer is not a trusted proxy.
    init(configuration: Configuration, origin: RequestOrigin, countedAddress: IPAddress?, now: Int64) {
        self.configuration = configuration
        self.origin = origin
        self.countedAddress = countedAddress
        countsForwardedClients = origin.proxies != nil && configuration.maxConnectionsPerAddress > 0
        parser = HTTPRequestParser(limits: configuration.parserLimits)
        headStart = now
        lastReadProgress = now
        lastWriteProgress = now
        idleSince = now
        deadline = now + configuration.headerTimeout
    }

    var isClosed: Bool { phase == .closed }

    // MARK: - Input

    /// Bytes read from the socket at `now`. With `.parse`, `bytes` must stay valid until `nextRequestAction()` has
    /// answered nil.
    mutating func received(_ bytes: UnsafeRawBufferPointer, at now: Int64) -> ReadOutcome {
        lastReadProgress = now
        if phase == .lingering {
            lingeredBytes += bytes.count
            return lingeredBytes > configuration.parserLimits.maxBodyBytes ? .close(.done) : .ignore
        }
        guard phase == .open, input != .discarding else { return .ignore }
        if parser.isIdle { headStart = now }
        if parser.connection == nil {
            // Created with the first bytes, so a connection that never sends any costs nothing for it.
            parser.origin = origin
            parser.connection = HTTPConnectionContext()
        }
        parser.receivedAt = now
        if parser.hasBufferedInput {
            parser.append(bytes)
        } else {
            direct = bytes
            directOffset = 0
        }
        return .parse
    }

    /// The next request, rejection or interim response the input holds; nil when the parser needs more input,
    /// reading is paused or the connection serves no more requests.
    mutating func nextRequestAction() -> RequestAction? {
        while phase == .open && input == .parsing {
            if outstanding.count >= configuration.maxPipelinedRequests
                || output.byteCount >= configuration.outputHighWater
            {
                input = .paused
                break
            }
            let event: HTTPParserEvent?
            if let bytes = direct {
                event = parser.next(from: bytes, offset: &directOffset)
            } else {
                event = parser.next()
            }
            guard let event else { break }
            switch event {
            case .request(let request):
                if countsForwardedClients, let client = request.storage.client, client != countedAddress {
                    return .attribute(request, to: client)
                }
                return .dispatch(request, sequence: admit(request))
            case .continueExpected:
                if outstanding.isEmpty && output.isEmpty {
                    output.append(Self.continueResponse)
                    return .flush
                }
            case .rejected(let rejection):
                input = .discarding
                lingerOnClose = true
                return .reject(rejection)
            }
        }
        if let bytes = direct {
            direct = nil
            if directOffset < bytes.count && phase != .closed {
                parser.append(UnsafeRawBufferPointer(rebasing: bytes[directOffset...]))
            }
        }
        return nil
    }

    /// Takes `request` into the line of requests in flight; its sequence number.
    @inline(__always)
    private mutating func admit(_ request: HTTPRequest) -> Int {
        let sequence = nextSequence
        nextSequence += 1
        outstanding.append(
            Outstanding(
                sequence: sequence, responder: nil, keepAlive: request.keepAlive,
                isHeadRequest: request.method == "HEAD", version: request.version, state: .waiting))
        if !request.keepAlive { input = .discarding }
        hasServedRequest = true
        return sequence
    }

    /// After `.attribute`: the connection now counts for `client`, and `request` is admitted; its sequence number,
    /// to dispatch it with.
    mutating func attributed(_ request: HTTPRequest, to client: IPAddress) -> Int {
        countedAddress = client
        return admit(request)
    }

    /// After `.attribute`: the request's client has `maxConnectionsPerAddress` connections open already. No more
    /// requests are read; the rejection is to be rendered and given to `queueRejection(_:)`, after which the
    /// connection closes, counted until then for the client it was counted for.
    mutating func refuseOverAddressCap(_ request: HTTPRequest) -> HTTPRejection {
        input = .discarding
        lingerOnClose = true
        var rejection = HTTPRejection.overCapacityPerAddress(configuration.maxConnectionsPerAddress)
        rejection.path = request.path
        return rejection
    }

    /// The responder handed to the handler for request `sequence`, told if the connection closes first.
    mutating func attach(_ responder: HTTPResponder, to sequence: Int) {
        guard let last = outstanding.indices.last, outstanding[last].sequence == sequence else { return }
        outstanding[last].responder = responder
    }

    /// The encoded response to the last `.reject`, queued behind any earlier responses; the connection then
    /// lingers and closes. Always wants a flush.
    mutating func queueRejection(_ chunks: [[UInt8]]) {
        let sequence = nextSequence
        nextSequence += 1
        outstanding.append(
            Outstanding(
                sequence: sequence, responder: nil, keepAlive: false, isHeadRequest: false, version: .http1_1,
                state: .done(chunks: chunks, close: true)))
        advance()
    }

    /// The client closed its side. A half-closed client is treated as gone (as Go's net/http does): responses
    /// already produced are written if the socket takes them now (`sendFirst`), then the connection closes.
    func peerClosed() -> (sendFirst: Bool, reason: CloseReason) {
        (phase != .lingering && !output.isEmpty, phase == .lingering ? .done : .peerGone)
    }

    /// The interest and deadline after an event: the new interest if it changed.
    mutating func settle() -> Interest? {
        updateDeadline()
        return updateInterest()
    }

    /// A timer tick at `now`: the reason to close if the deadline has passed.
    func deadlinePassed(at now: Int64) -> CloseReason? {
        guard deadline != 0 && now >= deadline else { return nil }
        return phase == .lingering ? .done : deadlineReason
    }

    private mutating func updateInterest() -> Interest? {
        guard phase != .closed else { return nil }
        let desired = Interest(reading: input != .paused, writable: wantsWritable)
        guard desired != interest else { return nil }
        interest = desired
        return desired
    }

    /// Recomputes the single deadline that applies in the current state.
    private mutating func updateDeadline() {
        switch phase {
        case .closed, .lingering:
            return
        case .open, .closing:
            break
        }
        if !output.isEmpty {
            (deadline, deadlineReason) = (lastWriteProgress + configuration.idleTimeout, .slowReader)
        } else if input == .parsing && !parser.isIdle {
            if parser.isReadingHead {
                (deadline, deadlineReason) = (headStart + configuration.headerTimeout, .headerTimeout)
            } else {
                // Each byte resets the idle timeout, so the body also has an overall deadline that grows with
                // what has arrived: a byte every few seconds cannot hold the connection for hours.
                let bodyDeadline = configuration.bodyDeadline(
                    requestStart: headStart, bodyBytes: parser.receivedBodyBytes)
                let idleDeadline = lastReadProgress + configuration.idleTimeout
                (deadline, deadlineReason) =
                    bodyDeadline < idleDeadline ? (bodyDeadline, .bodyTimeout) : (idleDeadline, .idleTimeout)
            }
        } else if outstanding.isEmpty && phase == .open {
            (deadline, deadlineReason) =
                hasServedRequest
                ? (idleSince + configuration.idleTimeout, .idleTimeout)
                : (idleSince + configuration.headerTimeout, .headerTimeout)
        } else {
            deadline = 0
        }
    }

    // MARK: - Closing

    /// Shutdown: an idle connection closes now; in-flight requests may finish (their responses close the
    /// connection); open streams end.
    mutating func drain() -> Reaction {
        isDraining = true
        input = .discarding
        if outstanding.isEmpty {
            if output.isEmpty { return .close(.shutdown) }
            return beginClosing() ? .flush : .none
        }
        for index in outstanding.indices {
            if case .streaming(let pending, _) = outstanding[index].state {
                outstanding[index].state = .streaming(pending: pending, finished: true)
            }
        }
        advance()
        return .flush
    }

    /// Whether the phase changed: closing starts once, from an open connection.
    @discardableResult
    private mutating func beginClosing() -> Bool {
        guard phase == .open else { return false }
        phase = .closing(linger: lingerOnClose && configuration.lingerTimeout > 0)
        input = .discarding
        return true
    }

    /// The connection is closing now: the requests still in flight (their responders are to be told), or nil if
    /// it was closed already. Output and parser storage are released.
    mutating func close() -> [Outstanding]? {
        guard phase != .closed else { return nil }
        phase = .closed
        let entries = outstanding
        outstanding = []
        output.removeAll()
        parser = HTTPRequestParser(limits: parser.limits)
        direct = nil
        return entries
    }

    // MARK: - Output: responses and streams, strictly in request order, and the steps of a flush

    func index(of sequence: Int) -> Int? {
        guard let first = outstanding.first else { return nil }
        let index = sequence - first.sequence
        return outstanding.indices.contains(index) ? index : nil
    }

    /// A complete response for request `sequence`, encoded by `encode` for that request; queued now if it is next
    /// in line, else kept until it is. `requestsClose`: the response itself asks for `Connection: close`.
    mutating func responseReady(
        sequence: Int, requestsClose: Bool,
        encode: (HTTPResponseEncoder.Context) -> (head: [UInt8], body: [UInt8]?)
    ) -> Reaction {
        guard phase == .open, let index = index(of: sequence), case .waiting = outstanding[index].state else {
            return .none
        }
        // The entry's fields read in place: a copy of the entry retained and released its responder.
        let closeAfter = !outstanding[index].keepAlive || isDraining || requestsClose
        let context = HTTPResponseEncoder.Context(
            isHeadRequest: outstanding[index].isHeadRequest, version: outstanding[index].version, close: closeAfter)
        let (head, body) = encode(context)
        if index == 0 {
            if output.byteCount >= configuration.maxPendingOutputBytes { return .close(.slowReader) }
            output.append(head)
            if let body { output.append(body) }
            outstanding.removeFirstQuickly()
            if closeAfter { beginClosing() } else { advance() }
        } else {
            outstanding[index].state = .done(chunks: body.map { [head, $0] } ?? [head], close: closeAfter)
        }
        return .flush
    }

    /// Moves answered requests at the head of the line to the output, stopping at the first unanswered one.
    mutating func advance() {
        while let first = outstanding.first {
            switch first.state {
            case .waiting:
                return
            case .done(let chunks, let close):
                output.append(contentsOf: chunks)
                outstanding.removeFirstQuickly()
                if close {
                    beginClosing()
                    return
                }
            case .streaming(let pending, let finished):
                output.append(contentsOf: pending)
                outstanding[0].state = .streaming(pending: [], finished: finished)
                if finished { beginClosing() }
                return
            }
        }
    }

    /// The next step of a flush at `now`, given what the socket did in the last one: write what is queued; once
    /// it has all gone out, close, linger or resume reading.
    mutating func nextWriteStep(after result: WriteResult, now: Int64) -> WriteStep {
        guard phase != .closed else { return .stop }
        switch result {
        case .start:
            if !wantsWritable && !output.isEmpty { lastWriteProgress = now }
        case .wrote:
            lastWriteProgress = now
        case .wouldBlock:
            break
        case .readRequests:
            if output.isEmpty { return .finished(settle()) }
        }
        if result != .wouldBlock && !output.isEmpty { return .send }
        wantsWritable = !output.isEmpty
        if wantsWritable { return .finished(settle()) }
        switch phase {
        case .closing(let linger):
            guard linger else { return .close(.done) }
            phase = .lingering
            deadline = now + configuration.lingerTimeout
            return .linger(settle())
        case .open:
            break
        case .lingering, .closed:
            return .stop
        }
        if outstanding.isEmpty { idleSince = now }
        guard input == .paused else { return .finished(settle()) }
        input = .parsing
        return .readRequests
    }
}
