import Glibc

/// How a raw exchange with the server ended.
public enum ExchangeEnd: Equatable, Sendable, CustomStringConvertible {
    /// `recv` returned 0: the server closed its side cleanly.
    case closed
    /// The server reset the connection (`ECONNRESET`).
    case reset
    /// Neither within the time allowed: the server kept the connection open.
    case timedOut

    public var description: String {
        switch self {
        case .closed: return "closed (recv returned 0)"
        case .reset: return "reset (ECONNRESET)"
        case .timedOut: return "still open"
        }
    }
}

/// What a raw exchange saw: every byte the server sent, and how the connection ended.
public struct RawExchangeResult: Sendable {
    public var received: [UInt8] = []
    public var end = ExchangeEnd.timedOut
    /// Request bytes the server did not take before it closed (it stopped reading after a rejection).
    public var unsent = 0
    /// Milliseconds from the first byte sent to the end.
    public var milliseconds = 0

    /// The status of every complete response received, in order (bodies are skipped by `Content-Length`).
    public var statuses: [Int] { responses.map(\.status) }

    /// The complete responses received, in order.
    public var responses: [TestResponse] { ResponseParser.responses(in: received) }
}

/// Sends `request` on a fresh non-blocking connection while reading whatever comes back, until the server closes
/// or resets the connection or `timeout` passes. Sending and reading overlap, so a server that answers early
/// (413 from the head) and stops reading cannot deadlock the client on a full socket buffer.
public func rawExchange(port: Int, _ request: [UInt8], timeout: Duration = .patience) throws -> RawExchangeResult {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { throw TestClientError(description: "socket() failed: errno \(errno)") }
    defer { close(fd) }
    var address = loopback(port: port)
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 || errno == EINPROGRESS else {
        throw TestClientError(description: "connect() failed: errno \(errno)")
    }
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start + timeout
    var result = RawExchangeResult()
    var offset = 0
    var sending = true
    var chunk = [UInt8](repeating: 0, count: 65_536)
    loop: while clock.now < deadline {
        var poller = pollfd(fd: fd, events: Int16(POLLIN) | (sending ? Int16(POLLOUT) : 0), revents: 0)
        let remaining = deadline - clock.now
        let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + 1)
        guard poll(&poller, 1, milliseconds) >= 0 || errno == EINTR else { break }
        if sending && poller.revents & Int16(POLLOUT) != 0 {
            let sent = request[offset...].withUnsafeBytes {
                send(fd, $0.baseAddress, min($0.count, 65_536), Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                offset += sent
                if offset == request.count { sending = false }
            } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                sending = false  // the server closed or reset; what it answered is still to be read
            }
        }
        if poller.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                result.received += chunk[..<count]
            } else if count == 0 {
                result.end = .closed
                break loop
            } else if errno == ECONNRESET {
                result.end = .reset
                break loop
            } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                throw TestClientError(description: "recv() failed: errno \(errno)")
            }
        }
    }
    result.unsent = request.count - offset
    let elapsed = (clock.now - start).components
    result.milliseconds = Int(elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000)
    return result
}
