import Dispatch
import FlagLock
import FlagTestBasics
import Glibc
import Synchronization
import Testing

@testable import FlagHTTP

/// Many sockets that each send a request one byte at a time, and record when the server closes them.
final class Trickler {
    private(set) var descriptors: [Int32] = []
    /// Seconds from each socket's first byte until the server closed it (nil while open).
    private(set) var closedAfter: [Double?] = []
    /// Everything each socket received.
    private(set) var received: [[UInt8]] = []
    private var firstByte: [ContinuousClock.Instant?] = []
    private var sent: [Int] = []
    private let clock = ContinuousClock()

    init(port: Int, count: Int) throws {
        for _ in 0..<count {
            let client = try TestClient(port: port)
            let fd = dup(client.fd)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            descriptors.append(fd)
        }
        closedAfter = Array(repeating: nil, count: count)
        received = Array(repeating: [], count: count)
        firstByte = Array(repeating: nil, count: count)
        sent = Array(repeating: 0, count: count)
    }

    deinit {
        for fd in descriptors { close(fd) }
    }

    var openCount: Int { closedAfter.filter { $0 == nil }.count }

    /// What the sockets saw, to check on the test's task.
    struct Outcome: Sendable {
        /// Seconds from each socket's first byte until the server closed it (nil while open).
        let closedAfter: [Double?]
        /// Everything each socket received.
        let received: [[UInt8]]

        var openCount: Int { closedAfter.filter { $0 == nil }.count }
        var slowestClose: Double { closedAfter.compactMap { $0 }.max() ?? .infinity }
        var refused: [String] {
            received.map { String(decoding: $0, as: UTF8.self) }.filter { $0.hasPrefix("HTTP/1.1 503") }
        }
    }

    /// Opens `count` sockets and runs them on a Dispatch thread (see `offThePool`) until closed or `timeout`.
    static func attack(
        port: Int, count: Int, prefix: [UInt8] = [], payload: [UInt8], interval: Duration, timeout: Duration
    ) async throws -> Outcome {
        try await offThePool {
            let trickler = try Trickler(port: port, count: count)
            trickler.run(prefix: prefix, payload: payload, interval: interval, timeout: timeout)
            return Outcome(closedAfter: trickler.closedAfter, received: trickler.received)
        }
    }

    /// Sends `prefix` at once, then the next byte of `payload` on every open socket every `interval`, reading
    /// whatever arrives, until all are closed or `timeout` passes.
    func run(prefix: [UInt8] = [], payload: [UInt8], interval: Duration, timeout: Duration) {
        for fd in descriptors where !prefix.isEmpty {
            _ = prefix.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        let deadline = clock.now + timeout
        var nextSend = clock.now
        var chunk = [UInt8](repeating: 0, count: 4096)
        while openCount > 0 && clock.now < deadline {
            if clock.now >= nextSend {
                for index in descriptors.indices where closedAfter[index] == nil && sent[index] < payload.count {
                    let result = payload[sent[index]...].withUnsafeBytes {
                        send(descriptors[index], $0.baseAddress, 1, Int32(MSG_NOSIGNAL))
                    }
                    if result == 1 {
                        if firstByte[index] == nil { firstByte[index] = clock.now }
                        sent[index] += 1
                    }
                }
                nextSend = clock.now + interval
            }
            var pollers = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&pollers, nfds_t(pollers.count), 5)
            for (index, poller) in pollers.enumerated() where closedAfter[index] == nil && poller.revents != 0 {
                let count = chunk.withUnsafeMutableBytes { recv(descriptors[index], $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received[index] += chunk[..<count]
                } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                    let start = firstByte[index] ?? clock.now
                    let elapsed = (clock.now - start).components
                    closedAfter[index] = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
                }
            }
        }
    }
}

@Suite("HTTP server against slow clients, live", .live)
struct HTTPServerSlowClientLiveTests {
    /// Header timeout 300 ms (a quarter of it is the deadline scan), bodies at 1,000 bytes/s at least.
    static func quick(_ configuration: inout HTTPServerConfiguration) {
        configuration.headerReadTimeout = .milliseconds(300)
        configuration.idleTimeout = .seconds(30)
        configuration.minBodyBytesPerSecond = 1000
    }

    @Test func aBodyTrickledOneByteAtATimeIsCutOffByTheBodyDeadline() async throws {
        try await withServer(Self.quick, handler: basicHandler) { server, port in
            // The head in one go, then a byte every 50 ms: each byte resets the 30 s idle timeout, but the body
            // deadline is 300 ms plus 1 ms per byte received.
            let outcome = try await Trickler.attack(
                port: port, count: 1,
                prefix: Array("POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n".utf8),
                payload: Array(repeating: 0x78, count: 100), interval: .milliseconds(50), timeout: .seconds(5))
            #expect(outcome.openCount == 0, "the trickling connection is still open")
            // About 0.4 s; the bound leaves room for a loaded machine and is still far below the idle timeout.
            #expect(outcome.slowestClose < 3.0)
            #expect(server.metrics.rejections["body_timeout"] == 1)
            #expect(server.metrics.requests == 0)
        }
    }

    @Test func aSteadyBodyAboveTheMinimumRateOutlastsTheHeaderTimeout() async throws {
        let slowBodies: (inout HTTPServerConfiguration) -> Void = {
            Self.quick(&$0)
            $0.minBodyBytesPerSecond = 20
        }
        try await withServer(slowBodies, handler: basicHandler) { server, port in
            let (status, text) = try await offThePool {
                let client = try TestClient(port: port)
                client.send("POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n")
                // 10 bytes per 50 ms for 500 ms: past the 300 ms header timeout, and each 10 bytes buy 500 ms, so
                // even sleeps ten times too long on a loaded machine stay within the deadline.
                for _ in 0..<10 {
                    usleep(50_000)
                    client.send(String(repeating: "y", count: 10))
                }
                let response = try client.readResponse()
                return (response.status, response.text)
            }
            #expect(status == 200)
            #expect(text == String(repeating: "y", count: 100))
            #expect(server.metrics.rejections["body_timeout"] == nil)
        }
    }

    @Test func trickledHeadsAreClosedByTheHeaderTimeoutWhileOthersAreServed() async throws {
        try await withServer(Self.quick, handler: basicHandler) { server, port in
            let payload = Array(("GET /slow HTTP/1.1\r\nHost: t\r\nX: " + String(repeating: "a", count: 500)).utf8)
            // A keep-alive client asks every 10 ms on another thread while the 200 sockets trickle.
            let stop = Atomic(false)
            let tally = Locked((served: 0, failed: 0, slowest: Duration.zero))
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                defer { done.signal() }
                guard let normal = try? TestClient(port: port) else { return }
                let clock = ContinuousClock()
                while !stop.load(ordering: .relaxed) {
                    let start = clock.now
                    normal.send("GET /ok HTTP/1.1\r\nHost: t\r\n\r\n")
                    let ok = (try? normal.readResponse().status) == 200
                    tally.withLock {
                        if ok { $0.served += 1 } else { $0.failed += 1 }
                        $0.slowest = max($0.slowest, clock.now - start)
                    }
                    usleep(10_000)
                }
            }
            let outcome = try await Trickler.attack(
                port: port, count: 200, payload: payload, interval: .milliseconds(100), timeout: .seconds(5))
            stop.store(true, ordering: .relaxed)
            try await offThePool { done.wait() }
            #expect(outcome.openCount == 0)
            // 300 ms from the first byte plus one 75 ms scan; the bound leaves room for a loaded machine and is
            // still far below the 30 s idle timeout.
            #expect(outcome.slowestClose < 3.0)
            #expect(server.metrics.rejections["header_timeout"] == 200)
            let result = tally.withLock { $0 }
            #expect(result.failed == 0)
            #expect(result.served >= 5)
            #expect(result.slowest < .seconds(2))
        }
    }

    @Test func theConnectionCapAnswers503AndCapacityReturnsWhenTheLoadGoes() async throws {
        // A 1 s header timeout, so that on a loaded machine no early socket is closed (freeing a slot) before the
        // last of the 80 has been accepted.
        let capped: (inout HTTPServerConfiguration) -> Void = {
            Self.quick(&$0)
            $0.headerReadTimeout = .seconds(1)
            $0.maxConnections = 50
        }
        try await withServer(capped, handler: basicHandler) { server, port in
            let outcome = try await Trickler.attack(
                port: port, count: 80, payload: Array("GET /slow HTTP/1.1\r\n".utf8), interval: .milliseconds(100),
                timeout: .seconds(5))
            #expect(outcome.refused.count == 30)
            #expect(outcome.refused.allSatisfy { $0.contains(#""code":"overloaded""#) })
            #expect(outcome.openCount == 0)
            #expect(server.metrics.rejections["connection_limit"] == 30)
            #expect(server.metrics.rejections["header_timeout"] == 50)
            #expect(await eventually { server.metrics.openConnections == 0 })
            let text = try await offThePool {
                let client = try TestClient(port: port)
                client.send("GET /again HTTP/1.1\r\nHost: t\r\n\r\n")
                return try client.readResponse().text
            }
            #expect(text == "/again")
        }
    }
}

@Suite("HTTP server deadline scan", .live)
struct DeadlineScanTests {
    @Test(arguments: [
        (Duration.seconds(10), Duration.seconds(60), Int64(250_000_000)),
        (.milliseconds(300), .seconds(30), 75_000_000),
        (.milliseconds(1), .milliseconds(1), 5_000_000),
    ])
    func timeoutsAreEnforcedWithinAQuarterOfTheShortestOrAt250Milliseconds(
        header: Duration, idle: Duration, tick: Int64
    ) {
        let configuration = HTTPServerConfiguration(headerReadTimeout: header, idleTimeout: idle)
        let shared = ServerShared(configuration: configuration, handler: basicHandler)
        #expect(shared.tick == tick)
    }
}
