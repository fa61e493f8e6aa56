import FlagLock
import Synchronization

/// Captures what a handler answers, without sockets: for request → response tests of routes.
///
/// ```swift
/// let recorder = HTTPResponseRecorder()
/// handler(HTTPRequest(method: "GET", target: "/healthz"), recorder.responder)
/// let response = await recorder.waitForResponse(timeout: .seconds(1))
/// ```
public final class HTTPResponseRecorder: Sendable {
    /// The responder to pass to the handler.
    public let responder: HTTPResponder
    private let sink: RecordingSink

    /// A recorder with a fresh responder.
    public init() {
        sink = RecordingSink()
        responder = HTTPResponder(target: .recorder(sink))
    }

    /// The complete response, or the head of a streamed one; nil until the handler answers.
    public var response: HTTPResponse? { sink.recording.withLock { $0.response } }

    /// Whether the handler answered with `startStream`.
    public var isStream: Bool { sink.recording.withLock { $0.streamed } }

    /// The bytes written to the stream so far.
    public var streamBody: [UInt8] { sink.recording.withLock { $0.streamBody } }

    /// Whether the handler finished its stream.
    public var isStreamFinished: Bool { sink.recording.withLock { $0.streamFinished } }

    /// Simulates the client going away: runs the responder's `onClose` callbacks and closes its stream.
    public func disconnectClient() {
        responder.connectionClosed()
    }

    /// Waits until the handler answers (or starts a stream), polling every millisecond; nil on timeout.
    public func waitForResponse(timeout: Duration) async -> HTTPResponse? {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if let response { return response }
            do {
                try await Task.sleep(for: .milliseconds(1))
            } catch {
                return response  // cancelled: report what there is
            }
        }
        return response
    }
}

/// Where a recorder's responder sends its answer; separate from the recorder so neither retains the other.
final class RecordingSink: Sendable {
    struct Recording {
        var response: HTTPResponse?
        var streamed = false
        var streamBody: [UInt8] = []
        var streamFinished = false
    }

    let recording = Locked(Recording())

    func record(_ response: HTTPResponse) {
        recording.withLock { $0.response = response }
    }

    func recordStreamHead(_ head: HTTPResponse) {
        recording.withLock {
            $0.response = head
            $0.streamed = true
            $0.streamBody.append(contentsOf: head.body)
        }
    }

    func recordStreamWrite(_ bytes: [UInt8]) {
        recording.withLock { $0.streamBody.append(contentsOf: bytes) }
    }

    func recordStreamFinish() {
        recording.withLock { $0.streamFinished = true }
    }
}
