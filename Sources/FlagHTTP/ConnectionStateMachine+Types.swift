/// The types of `ConnectionStateMachine`'s events and answers, and the limits it enforces.
extension ConnectionStateMachine {
    /// The limits and timeouts one server's connections share, in nanoseconds and bytes.
    struct Configuration: Sendable {
        var parserLimits: HTTPParserLimits
        var maxPipelinedRequests: Int
        /// Output above which no more pipelined requests are read until it has drained.
        var outputHighWater: Int
        /// Output above which the client counts as a slow reader and the connection closes.
        var maxPendingOutputBytes: Int
        var headerTimeout: Int64
        var idleTimeout: Int64
        /// Zero: a rejected connection closes at once instead of lingering.
        var lingerTimeout: Int64
        /// Nanoseconds a request body may take per byte beyond the header read timeout.
        var bodyNanosecondsPerByte: Int64
        /// Open connections per client address (`HTTPServerConfiguration.maxConnectionsPerAddress`); 0: not counted.
        var maxConnectionsPerAddress = 0

        /// When a request that started at `requestStart` and has `bodyBytes` of its body so far must be complete:
        /// the header read timeout plus the time the minimum body rate allows for those bytes (saturating).
        func bodyDeadline(requestStart: Int64, bodyBytes: Int) -> Int64 {
            let allowance = Int64(bodyBytes).multipliedReportingOverflow(by: bodyNanosecondsPerByte)
            let deadline = (requestStart + headerTimeout).addingReportingOverflow(allowance.partialValue)
            return allowance.overflow || deadline.overflow ? .max : deadline.partialValue
        }
    }

    /// A request handed to the handler, in request order, until its response has been queued for writing.
    struct Outstanding {
        let sequence: Int
        /// Nil for the engine's own rejection response. Held only to tell it that the connection closed.
        var responder: HTTPResponder?
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

    enum Input: Equatable {
        case parsing
        /// Too much outstanding work: reading is off until the responses have drained.
        case paused
        /// No more requests will be served on this connection: bytes are read and dropped.
        case discarding
    }

    enum Phase: Equatable {
        case open
        /// Closes once the queued output has been written; then lingers first if the client may still be sending.
        case closing(linger: Bool)
        /// Our side is shut down; input is drained until EOF or the linger timeout, then closed.
        case lingering
        case closed
    }

    enum CloseReason: Equatable {
        case done, peerGone, headerTimeout, bodyTimeout, idleTimeout, slowReader, shutdown
    }

    /// The readiness the socket code should wait for.
    struct Interest: Equatable {
        var reading: Bool
        var writable: Bool
    }

    /// What to do with bytes just read.
    enum ReadOutcome: Equatable {
        /// Nothing more: they were dropped or counted.
        case ignore
        /// Pull `nextRequestAction()` until it answers nil, then `settle()`.
        case parse
        case close(CloseReason)
    }

    /// What the parsed input asks of the socket code.
    enum RequestAction {
        /// Hand the request to the handler as request `sequence` (after `attach(_:to:)`).
        case dispatch(HTTPRequest, sequence: Int)
        /// A trusted proxy's request for `client`, whom the connection is not counted for: count the connection for
        /// `client` instead if it has room, then `attributed(_:to:)` (dispatch) or `refuseOverAddressCap(_:)`
        /// (reject).
        case attribute(HTTPRequest, to: IPAddress)
        /// Count the rejection and give its encoded response to `queueRejection(_:)`.
        case reject(HTTPRejection)
        /// Output was queued: flush the connection.
        case flush
    }

    /// The answer to a response, a stream event or a drain.
    enum Reaction: Equatable {
        case none
        case flush
        case close(CloseReason)
    }

    /// The answer to a stream write or finish.
    enum StreamReaction: Equatable {
        /// The stream's start has not been applied yet: queue the event behind it.
        case notStarted
        /// Taken without new output, or dropped (stream finished, connection closing).
        case ignored
        case flush
        case close(CloseReason)
    }

    /// What the socket did since the last `nextWriteStep(after:now:)`.
    enum WriteResult: Equatable {
        /// A flush begins.
        case start
        /// Some bytes went out.
        case wrote
        /// The socket takes no more for now.
        case wouldBlock
        /// The requests that were waiting for the output to drain have been pulled.
        case readRequests
    }

    /// The next thing a flush must do.
    enum WriteStep: Equatable {
        /// Write from `output`, then report `.wrote` or `.wouldBlock`.
        case send
        /// Reading resumed: pull `nextRequestAction()` until nil, then report `.readRequests`.
        case readRequests
        case close(CloseReason)
        /// Shut down the write side, apply the interest if any, and wait for the linger deadline or EOF.
        case linger(Interest?)
        /// Done for now: apply the interest if any.
        case finished(Interest?)
        /// Done: nothing to apply.
        case stop
    }
}
