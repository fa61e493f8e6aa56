import Glibc

@testable import FlagServer

/// A response as a raw client saw it.
struct TestResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

struct TestClientError: Error, CustomStringConvertible {
    let description: String
}

/// A blocking POSIX-socket HTTP client for live tests: sends raw bytes, reads responses or until close.
final class TestClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var sawClose = false

    init(port: Int, receiveTimeout: Duration = .seconds(5)) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestClientError(description: "socket() failed: errno \(errno)") }
        var timeout = timeval(
            tv_sec: Int(receiveTimeout.components.seconds),
            tv_usec: Int(receiveTimeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
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

    func send(_ text: String) {
        send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// The local port of this client's socket, as the server sees it.
    var localPort: Int {
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
    func readResponse(headRequest: Bool = false) throws -> TestResponse {
        while true {
            if let (response, consumed) = try parseBuffered(headRequest: headRequest, untilClose: false) {
                buffer.removeFirst(consumed)
                return response
            }
            guard fill() else {
                throw TestClientError(description: "connection ended before a full response: \(text(buffer))")
            }
        }
    }

    /// Reads just a response head (for streams); the body bytes after it stay buffered for `read(count:)`.
    func readHead() throws -> TestResponse {
        while true {
            if let end = headEnd() {
                let response = try parseHead(Array(buffer[..<end]))
                buffer.removeFirst(end + 4)
                return response
            }
            guard fill() else { throw TestClientError(description: "no response head: \(text(buffer))") }
        }
    }

    /// Reads until `count` body bytes are available (or the connection ends) and returns them.
    func read(count: Int) -> [UInt8] {
        while buffer.count < count, fill() {}
        let taken = Array(buffer.prefix(count))
        buffer.removeFirst(taken.count)
        return taken
    }

    /// Reads until the server closes the connection (or the receive timeout passes) and returns all bytes.
    func readUntilClose() -> [UInt8] {
        while fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// Whether the server closed the connection: EOF or reset before the receive timeout, with no more data.
    func isClosedByServer() -> Bool {
        let rest = readUntilClose()
        return rest.isEmpty && sawClose
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    private func parseBuffered(headRequest: Bool, untilClose: Bool) throws -> (TestResponse, Int)? {
        guard let end = headEnd() else { return nil }
        var response = try parseHead(Array(buffer[..<end]))
        let bodyStart = end + 4
        let noBody = headRequest || response.status < 200 || response.status == 204 || response.status == 304
        let length = noBody ? 0 : Int(response.header("content-length") ?? "") ?? 0
        guard buffer.count - bodyStart >= length else { return nil }
        response.body = Array(buffer[bodyStart..<(bodyStart + length)])
        return (response, bodyStart + length)
    }

    private func parseHead(_ head: [UInt8]) throws -> TestResponse {
        let lines = text(head).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0] == "HTTP/1.1", let status = Int(statusParts[1]) else {
            throw TestClientError(description: "bad status line: \(lines[0])")
        }
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: " "))
        }
        return TestResponse(status: status, headers: headers.map { (name: $0.0, value: $0.1) }, body: [])
    }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}

extension String {
    func components(separatedBy separator: String) -> [String] {
        split(separator: separator, omittingEmptySubsequences: false).map(String.init)
    }

    func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}

/// Parses every response in `bytes` (Content-Length bodies), for reading pipelined answers at once.
func statusLines(in bytes: [UInt8]) -> [String] {
    String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.1 ") }
}

/// Polls `condition` every 5 ms until it holds or `timeout` passes.
func waitUntil(timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}
