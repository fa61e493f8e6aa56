import Dispatch
import Glibc

/// Runs blocking socket work on a Dispatch thread and awaits it, so that it never holds one of the few threads of
/// the cooperative pool (two on a two-core machine) that every async test needs to make progress.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

/// How a raw exchange with the server ended.
enum ExchangeEnd: Equatable, Sendable, CustomStringConvertible {
    /// `recv` returned 0: the server closed its side cleanly.
    case closed
    /// The server reset the connection (`ECONNRESET`).
    case reset
    /// Neither within the time allowed: the server kept the connection open.
    case timedOut

    var description: String {
        switch self {
        case .closed: return "closed (recv returned 0)"
        case .reset: return "reset (ECONNRESET)"
        case .timedOut: return "still open"
        }
    }
}

/// What a raw exchange saw: every byte the server sent, and how the connection ended.
struct RawExchangeResult: Sendable {
    var received: [UInt8] = []
    var end = ExchangeEnd.timedOut
    /// Request bytes the server did not take before it closed (it stopped reading after a rejection).
    var unsent = 0
    /// Milliseconds from the first byte sent to the end.
    var milliseconds = 0

    /// The status of every complete response received, in order (bodies are skipped by `Content-Length`).
    var statuses: [Int] { responses.map(\.status) }

    /// The responses received: status, headers (lowercased names) and body.
    var responses: [(status: Int, headers: [String: String], body: [UInt8])] {
        var result: [(status: Int, headers: [String: String], body: [UInt8])] = []
        var offset = 0
        while let end = Self.headEnd(in: received, from: offset) {
            let head = String(decoding: received[offset..<end], as: UTF8.self)
            let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
            let parts = lines.first?.split(separator: " ") ?? []
            guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else { break }
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...])
                    .trimmingCharacters(in: " ")
            }
            let length = status < 200 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
            let bodyStart = end + 4
            guard received.count - bodyStart >= length else { break }
            result.append((status, headers, Array(received[bodyStart..<(bodyStart + length)])))
            offset = bodyStart + length
        }
        return result
    }

    private static func headEnd(in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count - start >= 4 else { return nil }
        for index in start...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}

/// Sends `request` on a fresh non-blocking connection while reading whatever comes back, until the server closes
/// or resets the connection or `timeout` passes. Sending and reading overlap, so a server that answers early
/// (413 from the head) and stops reading cannot deadlock the client on a full socket buffer.
func rawExchange(port: Int, _ request: [UInt8], timeout: Duration = .seconds(5)) throws -> RawExchangeResult {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { throw TestClientError(description: "socket() failed: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
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
