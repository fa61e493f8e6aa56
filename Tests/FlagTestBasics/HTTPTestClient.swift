import Glibc

/// A raw client's failure: what it could not do, with the bytes it had, if any.
public struct TestClientError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}

/// A blocking POSIX-socket HTTP client for live tests: sends raw bytes, reads responses or until close.
public final class TestClient {
    /// The connection's socket, for tests that shut it down or watch it themselves.
    public let fd: Int32
    private var buffer: [UInt8] = []
    /// Whether the server closed (or reset) the connection.
    public private(set) var sawClose = false

    /// Connects to 127.0.0.1:`port`; reads give up after `receiveTimeout` without data.
    public init(port: Int, receiveTimeout: Duration = .patience) throws {
        LiveTest.expectOwnThread("a test client of port \(port)")
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestClientError(description: "socket() failed: errno \(errno)") }
        var timeout = timeval(
            tv_sec: Int(receiveTimeout.components.seconds),
            tv_usec: Int(receiveTimeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            // No close here: the instance is fully initialized, so throwing runs `deinit`, which closes `fd`.
            // Closing it here as well closed it twice, and the second close could hit a descriptor another
            // test's thread had just been given (a stream test saw its connection closed under it).
            throw TestClientError(description: "connect() failed: errno \(errno)")
        }
    }

    deinit {
        Glibc.close(fd)
    }

    /// Sends `text` as UTF-8, all of it unless the connection fails.
    public func send(_ text: String) {
        send(Array(text.utf8))
    }

    /// Sends `bytes`, all of them unless the connection fails.
    public func send(_ bytes: [UInt8]) {
        _ = sendAll(fd, bytes)
    }

    /// The local port of this client's socket, as the server sees it.
    public var localPort: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Reads once into the buffer; false on EOF, reset or timeout.
    @discardableResult
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
        if count == 0 || errno == ECONNRESET { sawClose = true }
        return false
    }

    /// Reads one complete response (a body delimited by Content-Length, or none for 1xx/204/304/HEAD).
    public func readResponse(headRequest: Bool = false) throws -> TestResponse {
        while true {
            if let (response, next) = try ResponseParser.response(in: buffer, headRequest: headRequest) {
                buffer.removeFirst(next)
                return response
            }
            guard fill() else {
                throw TestClientError(description: "connection ended before a full response: \(text(buffer))")
            }
        }
    }

    /// Reads just a response head (for streams); the body bytes after it stay buffered for `read(count:)`.
    public func readHead() throws -> TestResponse {
        while true {
            if let end = ResponseParser.headEnd(in: buffer) {
                guard let response = ResponseParser.head(buffer[..<end]) else {
                    throw TestClientError(description: "bad status line: \(text(buffer))")
                }
                buffer.removeFirst(end + 4)
                return response
            }
            guard fill() else { throw TestClientError(description: "no response head: \(text(buffer))") }
        }
    }

    /// Reads until `count` body bytes are available (or the connection ends) and returns them.
    public func read(count: Int) -> [UInt8] {
        while buffer.count < count, fill() {}
        let taken = Array(buffer.prefix(count))
        buffer.removeFirst(taken.count)
        return taken
    }

    /// Reads until the bytes received contain `marker` (or the connection ends, or a read waits longer than the
    /// receive timeout), and returns them as text, the marker included; what came after it stays buffered.
    public func readUntil(_ marker: String) -> String {
        let pattern = Array(marker.utf8)
        while true {
            if let range = buffer.firstRange(of: pattern) {
                defer { buffer.removeFirst(range.upperBound) }
                return text(Array(buffer[..<range.upperBound]))
            }
            guard fill() else { return text(buffer) }
        }
    }

    /// Reads until the server closes the connection (or the receive timeout passes) and returns all bytes.
    public func readUntilClose() -> [UInt8] {
        while fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// Whether the server closed the connection: EOF or reset before the receive timeout, with no more data.
    public func isClosedByServer() -> Bool {
        let rest = readUntilClose()
        return rest.isEmpty && sawClose
    }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}

/// The address 127.0.0.1:`port`.
func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// A listening socket on 127.0.0.1 and a free port, for the test servers and proxies that accept connections
/// themselves; the caller closes it.
public func listenOnLoopback(backlog: Int32 = 16) throws -> (socket: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestClientError(description: "socket() failed: errno \(errno)") }
    var yes: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = loopback(port: 0)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(fd, backlog) == 0 else {
        let error = errno
        close(fd)
        throw TestClientError(description: "bind/listen on 127.0.0.1 failed: errno \(error)")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

/// Sends all of `bytes` on the connected socket `fd`; false once the peer is gone (never a `SIGPIPE`).
public func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent > 0 else { return false }
        offset += sent
    }
    return true
}
