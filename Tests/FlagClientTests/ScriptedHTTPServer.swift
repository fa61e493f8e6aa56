import FlagHTTP
import FlagTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 and a free port, in the test process, on POSIX sockets: each request is
/// answered by a script, with the body written in chunks (with pauses) so that the client meets data split anywhere.
final class ScriptedHTTPServer: @unchecked Sendable {
    // @unchecked Sendable is safe: `listener` and `handler` are set in init and never change; `requests` is only
    // touched while holding `lock`.
    struct Request: Sendable {
        var method: String
        var path: String
        var headers: [String: String]
        /// The body a `Content-Length` announced (a telemetry report); empty for none.
        var body: [UInt8] = []
    }

    struct Response: Sendable {
        var status: Int
        var headers: [String: String]
        /// Written one after the other, `pause` apart.
        var chunks: [[UInt8]]
        var pause: Double = 0.02
        /// Keep the connection open after the last chunk (a stream) until the server stops.
        var keepOpen = false
    }

    private let listener: LoopbackListener
    private let lock = NSLock()
    private var requests: [Request] = []
    private let handler: @Sendable (Request) -> Response

    init(handler: @escaping @Sendable (Request) -> Response) throws {
        self.handler = handler
        listener = try LoopbackListener()
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    var port: UInt16 { UInt16(listener.port) }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    var received: [Request] {
        lock.lock()
        defer { lock.unlock() }
        return requests
    }

    /// Stops accepting and ends every open connection.
    func stop() {
        listener.stop()
    }

    private func acceptLoop() {
        while let fd = listener.accept() {
            guard listener.keep([fd]) else { return }
            let thread = Thread { [self] in serve(fd) }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { listener.close([fd]) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            // One request at a time on the connection: read its head, answer, repeat.
            while !buffer.containsHeadEnd {
                let count = read(fd, &chunk, chunk.count)
                guard count > 0 else { return }
                buffer += chunk[0..<count]
            }
            guard var request = parse(&buffer) else { return }
            let length = request.headers["content-length"].flatMap { Int($0) } ?? 0
            while buffer.count < length {
                let count = read(fd, &chunk, chunk.count)
                guard count > 0 else { return }
                buffer += chunk[0..<count]
            }
            request.body = Array(buffer[..<length])
            buffer.removeFirst(length)
            lock.lock()
            requests.append(request)
            lock.unlock()
            let response = handler(request)
            var head = "HTTP/1.1 \(response.status) Scripted\r\n"
            var headers = response.headers
            if !response.keepOpen {
                headers["Content-Length"] = String(response.chunks.reduce(0) { $0 + $1.count })
            } else {
                headers["Connection"] = "close"
            }
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "\r\n"
            guard sendAll(fd, Array(head.utf8)) else { return }
            for part in response.chunks {
                guard sendAll(fd, part) else { return }
                Thread.sleep(forTimeInterval: response.pause)
            }
            if response.keepOpen {
                // Hold the stream open until the client or `stop()` closes it.
                while read(fd, &chunk, chunk.count) > 0 {}
                return
            }
        }
    }

    private func parse(_ buffer: inout [UInt8]) -> Request? {
        guard let end = buffer.headEnd else { return nil }
        let text = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeFirst(end + 4)
        var lines = text.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count == 3 else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Request(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers)
    }
}

extension [UInt8] {
    fileprivate var headEnd: Int? {
        guard count >= 4 else { return nil }
        for index in 0...(count - 4)
        where self[index] == 13 && self[index + 1] == 10 && self[index + 2] == 13 && self[index + 3] == 10 {
            return index
        }
        return nil
    }

    fileprivate var containsHeadEnd: Bool { headEnd != nil }
}
