import Synchronization

/// The handler's way to answer one request; callable from any thread.
///
/// Call exactly one of `respond(_:)` or `startStream(_:)`; later calls are ignored. A response to a connection
/// that has closed meanwhile is dropped silently. Calling `respond` synchronously inside the handler is the fast
/// path: the response is written without any cross-thread hop, together with other pipelined responses.
public typealias HTTPHandler = @Sendable (HTTPRequest, HTTPResponder) -> Void

/// Answers one request, now or later, from any thread (see `HTTPHandler`).
public final class HTTPResponder: Sendable {
    enum Target: Sendable {
        case connection(EventLoop, ConnectionID, sequence: Int)
        case recorder(RecordingSink)
    }

    private enum State {
        case pending(onClose: [@Sendable () -> Void])
        case streaming(HTTPStream, onClose: [@Sendable () -> Void])
        /// Answered (or the stream finished by the handler): `onClose` callbacks are dropped, never called.
        case answered
        case closed
    }

    let target: Target
    private let state = Locked<State>(.pending(onClose: []))

    init(target: Target) {
        self.target = target
    }

    /// Sends a complete response. Only the first call of `respond`/`startStream` counts.
    public func respond(_ response: HTTPResponse) {
        let accepted = state.withLock { state -> Bool in
            guard case .pending = state else { return false }
            state = .answered
            return true
        }
        guard accepted else { return }
        switch target {
        case .connection(let loop, let id, let sequence): loop.respond(id, sequence: sequence, response)
        case .recorder(let recorder): recorder.record(response)
        }
    }

    /// Sends status and headers now and returns a stream for the body; the body has no `Content-Length` and ends
    /// when the stream finishes or the client leaves, closing the connection. After a first answer (or once the
    /// client has gone) the returned stream is already closed.
    public func startStream(_ head: HTTPResponse) -> HTTPStream {
        let stream = HTTPStream(responder: self)
        let accepted = state.withLock { state -> Bool in
            guard case .pending(let callbacks) = state else { return false }
            state = .streaming(stream, onClose: callbacks)
            return true
        }
        guard accepted else {
            stream.markClosed()
            return stream
        }
        switch target {
        case .connection(let loop, let id, let sequence): loop.startStream(id, sequence: sequence, head)
        case .recorder(let recorder): recorder.recordStreamHead(head)
        }
        return stream
    }

    /// Registers a callback for the client going away before the answer is complete (no response yet, or the
    /// stream still open). Called at most once, on any thread; at once if the client is already gone; never if
    /// the request was answered (or its stream finished) first.
    public func onClose(_ callback: @escaping @Sendable () -> Void) {
        let callNow = state.withLock { state -> Bool in
            switch state {
            case .pending(var callbacks):
                callbacks.append(callback)
                state = .pending(onClose: callbacks)
                return false
            case .streaming(let stream, var callbacks):
                callbacks.append(callback)
                state = .streaming(stream, onClose: callbacks)
                return false
            case .answered:
                return false
            case .closed:
                return true
            }
        }
        if callNow { callback() }
    }

    /// The connection closed: mark the stream closed and run the `onClose` callbacks, once.
    func connectionClosed() {
        let (callbacks, stream) = state.withLock { state -> ([@Sendable () -> Void], HTTPStream?) in
            defer { state = .closed }
            switch state {
            case .pending(let callbacks): return (callbacks, nil)
            case .streaming(let stream, let callbacks): return (callbacks, stream)
            case .answered, .closed: return ([], nil)
            }
        }
        stream?.markClosed()
        for callback in callbacks { callback() }
    }

    /// The handler finished its stream: from now on the client leaving is no longer reported.
    fileprivate func streamFinished() {
        state.withLock { state in
            if case .streaming = state { state = .answered }
        }
    }
}

/// The body of a streamed response (e.g. Server-Sent Events); writable from any thread.
public final class HTTPStream: Sendable {
    private let responder: HTTPResponder
    private let open = Atomic<Bool>(true)

    fileprivate init(responder: HTTPResponder) {
        self.responder = responder
    }

    /// Whether writes still go anywhere: false after `finish()` or once the client has gone.
    public var isOpen: Bool { open.load(ordering: .acquiring) }

    /// Queues bytes for the client. Cheap from any thread: writes to many streams of one loop share one wake-up.
    /// Dropped when the stream is closed; a client that does not keep up is disconnected at the output cap.
    public func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty, isOpen else { return }
        switch responder.target {
        case .connection(let loop, let id, let sequence): loop.streamWrite(id, sequence: sequence, bytes)
        case .recorder(let recorder): recorder.recordStreamWrite(bytes)
        }
    }

    /// Ends the body: what was written is flushed, then the connection closes. `onClose` will not be called.
    public func finish() {
        guard open.exchange(false, ordering: .acquiringAndReleasing) else { return }
        responder.streamFinished()
        switch responder.target {
        case .connection(let loop, let id, let sequence): loop.streamFinish(id, sequence: sequence)
        case .recorder(let recorder): recorder.recordStreamFinish()
        }
    }

    func markClosed() {
        open.store(false, ordering: .releasing)
    }
}
