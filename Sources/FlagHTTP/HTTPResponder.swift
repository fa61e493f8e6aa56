import FlagLock
import Synchronization

/// The handler's way to answer one request; callable from any thread.
///
/// Call exactly one of `respond(_:)` or `startStream(_:)`; later calls are ignored. A response to a connection
/// that has closed meanwhile is dropped silently. Calling `respond` synchronously inside the handler is the fast
/// path: the response is written without any cross-thread hop, together with other pipelined responses.
public typealias HTTPHandler = @Sendable (HTTPRequest, HTTPResponder) -> Void

/// Answers one request, now or later, from any thread (see `HTTPHandler`).
///
/// Which of answer, stream and close comes first is decided by one atomic compare-and-exchange on `phase`; the
/// `onClose` callbacks and the stream live in a locked box made only when a handler registers a callback or starts
/// a stream (or the client leaves first), so a request answered at once costs no lock and no second allocation.
public final class HTTPResponder: Sendable {
    enum Target: Sendable {
        case connection(EventLoop, ConnectionID)
        case recorder(RecordingSink)
    }

    private enum Phase {
        static let pending = 0
        static let streaming = 1
        /// Answered (or the stream finished by the handler): `onClose` callbacks are dropped, never called.
        static let answered = 2
        static let closed = 3
    }

    /// What only streams and waiting handlers need. Everyone who reads or changes it holds its lock, and the close
    /// takes the lock after its phase change, so a callback added under the lock is either seen by the close or
    /// finds the phase closed and runs at once.
    private final class Extras: Sendable {
        struct State {
            var onClose: [@Sendable () -> Void] = []
            var stream: HTTPStream?
        }

        let state = Locked(State())
    }

    let target: Target
    /// The request's position on its connection.
    let sequence: Int
    private let phase = Atomic<Int>(Phase.pending)
    private let extras = AtomicLazyReference<Extras>()

    init(target: Target, sequence: Int = 0) {
        self.target = target
        self.sequence = sequence
    }

    /// The one box (whoever makes it first wins).
    private var sharedExtras: Extras {
        extras.load() ?? extras.storeIfNil(Extras())
    }

    /// Sends a complete response. Only the first call of `respond`/`startStream` counts.
    public func respond(_ response: HTTPResponse) {
        guard
            phase.compareExchange(
                expected: Phase.pending, desired: Phase.answered, ordering: .acquiringAndReleasing
            ).exchanged
        else { return }
        switch target {
        case .connection(let loop, let id): loop.respond(id, sequence: sequence, response)
        case .recorder(let recorder): recorder.record(response)
        }
    }

    /// Sends status and headers now and returns a stream for the body; the body has no `Content-Length` and ends
    /// when the stream finishes or the client leaves, closing the connection. After a first answer (or once the
    /// client has gone) the returned stream is already closed.
    public func startStream(_ head: HTTPResponse) -> HTTPStream {
        let stream = HTTPStream(responder: self)
        let accepted = sharedExtras.state.withLock { state -> Bool in
            guard
                phase.compareExchange(
                    expected: Phase.pending, desired: Phase.streaming, ordering: .acquiringAndReleasing
                ).exchanged
            else { return false }
            state.stream = stream
            return true
        }
        guard accepted else {
            stream.markClosed()
            return stream
        }
        switch target {
        case .connection(let loop, let id): loop.startStream(id, sequence: sequence, head)
        case .recorder(let recorder): recorder.recordStreamHead(head)
        }
        return stream
    }

    /// Registers a callback for the client going away before the answer is complete (no response yet, or the
    /// stream still open). Called at most once, on any thread; at once if the client is already gone; never if
    /// the request was answered (or its stream finished) first.
    public func onClose(_ callback: @escaping @Sendable () -> Void) {
        let callNow = sharedExtras.state.withLock { state -> Bool in
            switch phase.load(ordering: .acquiring) {
            case Phase.pending, Phase.streaming:
                state.onClose.append(callback)
                return false
            case Phase.closed:
                return true
            default:
                return false
            }
        }
        if callNow { callback() }
    }

    /// The connection closed: mark the stream closed and run the `onClose` callbacks, once.
    func connectionClosed() {
        var current = phase.load(ordering: .acquiring)
        while current == Phase.pending || current == Phase.streaming {
            let (exchanged, original) = phase.compareExchange(
                expected: current, desired: Phase.closed, ordering: .acquiringAndReleasing)
            if exchanged { break }
            current = original
        }
        guard current == Phase.pending || current == Phase.streaming else { return }
        let (callbacks, stream) = sharedExtras.state.withLock { state in
            defer { state = Extras.State() }
            return (state.onClose, state.stream)
        }
        stream?.markClosed()
        for callback in callbacks { callback() }
    }

    /// The handler finished its stream: from now on the client leaving is no longer reported.
    fileprivate func streamFinished() {
        _ = phase.compareExchange(expected: Phase.streaming, desired: Phase.answered, ordering: .acquiringAndReleasing)
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
        case .connection(let loop, let id): loop.streamWrite(id, sequence: responder.sequence, bytes)
        case .recorder(let recorder): recorder.recordStreamWrite(bytes)
        }
    }

    /// Ends the body: what was written is flushed, then the connection closes. `onClose` will not be called.
    public func finish() {
        guard open.exchange(false, ordering: .acquiringAndReleasing) else { return }
        responder.streamFinished()
        switch responder.target {
        case .connection(let loop, let id): loop.streamFinish(id, sequence: responder.sequence)
        case .recorder(let recorder): recorder.recordStreamFinish()
        }
    }

    func markClosed() {
        open.store(false, ordering: .releasing)
    }
}
