import Testing

@testable import FlagHTTP

/// The connection's protocol decisions, driven event by event without a socket: a stand-in for the socket takes
/// the machine's output, and the tests check the actions the machine answers with.
@Suite("Connection state machine, without sockets")
struct ConnectionStateMachineTests {
    static let second: Int64 = 1_000_000_000

    static func configuration(
        maxPipelinedRequests: Int = 64, outputHighWater: Int = 256 * 1024, maxPendingOutputBytes: Int = 8 << 20,
        lingerTimeout: Int64 = 2 * second, maxBodyBytes: Int = 1 << 20, maxConnectionsPerAddress: Int = 0
    ) -> ConnectionStateMachine.Configuration {
        var limits = HTTPParserLimits()
        limits.maxBodyBytes = maxBodyBytes
        return ConnectionStateMachine.Configuration(
            parserLimits: limits, maxPipelinedRequests: maxPipelinedRequests, outputHighWater: outputHighWater,
            maxPendingOutputBytes: maxPendingOutputBytes, headerTimeout: 10 * second, idleTimeout: 60 * second,
            lingerTimeout: lingerTimeout, bodyNanosecondsPerByte: second / 1000,
            maxConnectionsPerAddress: maxConnectionsPerAddress)
    }

    /// What the socket code would have been told to do, in order, written as short words.
    struct Driver {
        var machine: ConnectionStateMachine
        var now: Int64 = 0
        /// Bytes the stand-in socket took.
        var written: [UInt8] = []
        /// How many bytes the socket takes per send; nil for all of them.
        var socketTakes: Int?
        var dispatched: [(sequence: Int, request: HTTPRequest)] = []
        var rejections: [HTTPRejection] = []
        var flushRequested = false
        /// The count of connections per client address, as the socket code keeps it for `.attribute`.
        var counts: ConnectionsPerAddress

        init(
            _ configuration: ConnectionStateMachine.Configuration = configuration(),
            origin: RequestOrigin = RequestOrigin(remoteAddress: "127.0.0.1:50000"), countedAddress: IPAddress? = nil
        ) {
            machine = ConnectionStateMachine(
                configuration: configuration, origin: origin, countedAddress: countedAddress, now: 0)
            counts = ConnectionsPerAddress(limit: max(1, configuration.maxConnectionsPerAddress))
        }

        var text: String { String(decoding: written, as: UTF8.self) }

        /// Bytes read at `now`; carries out the request actions and settles, as `Connection.readable` does.
        @discardableResult
        mutating func receive(_ string: String) -> ConnectionStateMachine.ReadOutcome {
            let bytes = Array(string.utf8)
            return bytes.withUnsafeBytes { raw in
                let outcome = machine.received(raw, at: now)
                if outcome == .parse {
                    pullRequests()
                    _ = machine.settle()
                }
                return outcome
            }
        }

        mutating func pullRequests() {
            while let action = machine.nextRequestAction() {
                switch action {
                case .dispatch(let request, let sequence):
                    dispatched.append((sequence, request))
                case .attribute(let request, let client):
                    if counts.move(from: machine.countedAddress, to: client) {
                        dispatched.append((machine.attributed(request, to: client), request))
                    } else {
                        reject(machine.refuseOverAddressCap(request))
                    }
                case .reject(let rejection):
                    reject(rejection)
                case .flush:
                    flushRequested = true
                }
            }
        }

        private mutating func reject(_ rejection: HTTPRejection) {
            rejections.append(rejection)
            let response = HTTPResponse(status: rejection.status, body: Array("rejected".utf8))
            let context = HTTPResponseEncoder.Context(isHeadRequest: false, version: .http1_1, close: true)
            let encoded = HTTPResponseEncoder.encode(response, context, date: [])
            machine.queueRejection([encoded.head] + (encoded.body.map { [$0] } ?? []))
            flushRequested = true
        }

        /// A response with `body` for request `sequence`.
        mutating func respond(
            _ sequence: Int, _ body: String, headers: HTTPHeaders = [:]
        ) -> ConnectionStateMachine.Reaction {
            let response = HTTPResponse(status: 200, headers: headers, body: Array(body.utf8))
            return machine.responseReady(
                sequence: sequence, requestsClose: HTTPResponseEncoder.requestsClose(response)
            ) { context in
                HTTPResponseEncoder.encode(response, context, date: [])
            }
        }

        /// Runs a flush as `Connection.flush` does and returns its last step.
        @discardableResult
        mutating func flush() -> ConnectionStateMachine.WriteStep {
            flushRequested = false
            var result = ConnectionStateMachine.WriteResult.start
            while true {
                let step = machine.nextWriteStep(after: result, now: now)
                switch step {
                case .send:
                    let pending = machine.output.unwritten
                    let take = min(pending.count, socketTakes ?? pending.count)
                    if take == 0 {
                        result = .wouldBlock
                    } else {
                        written += pending.prefix(take)
                        machine.output.consume(take)
                        result = .wrote
                    }
                case .readRequests:
                    pullRequests()
                    result = .readRequests
                case .close, .linger, .finished, .stop:
                    return step
                }
            }
        }
    }

    static func get(_ path: String, _ extra: String = "") -> String {
        "GET \(path) HTTP/1.1\r\nHost: h\r\n\(extra)\r\n"
    }

    // MARK: - Pipelining and keep-alive

    @Test func pipelinedAnswersAreWrittenInRequestOrder() {
        var driver = Driver()
        driver.receive(Self.get("/a") + Self.get("/b") + Self.get("/c"))
        #expect(driver.dispatched.map(\.sequence) == [0, 1, 2])
        #expect(driver.dispatched.map(\.request.path) == ["/a", "/b", "/c"])

        #expect(driver.respond(2, "third") == .flush)
        #expect(driver.respond(1, "second") == .flush)
        driver.flush()
        #expect(driver.written.isEmpty, "answers held until the first request's turn")

        #expect(driver.respond(0, "first") == .flush)
        #expect(driver.flush() == .finished(nil))
        let text = driver.text
        let first = text.range(of: "first")!.lowerBound
        let second = text.range(of: "second")!.lowerBound
        let third = text.range(of: "third")!.lowerBound
        #expect(first < second && second < third)
        #expect(driver.respond(0, "again") == .none, "a request is answered once")
    }

    @Test func keepAliveServesTheNextRequestAndWaitsIdle() {
        var driver = Driver()
        driver.receive(Self.get("/a"))
        _ = driver.respond(0, "one")
        driver.now = 5 * Self.second
        #expect(driver.flush() == .finished(nil))
        #expect(driver.machine.phase == .open)
        #expect(driver.machine.deadlineReason == .idleTimeout)
        #expect(driver.machine.deadline == 65 * Self.second)
        #expect(!driver.text.contains("Connection: close"))

        driver.receive(Self.get("/b"))
        #expect(driver.dispatched.map(\.sequence) == [0, 1])
    }

    @Test func connectionCloseFromTheClientClosesAfterTheResponse() {
        var driver = Driver()
        driver.receive(Self.get("/a", "Connection: close\r\n") + Self.get("/ignored"))
        #expect(driver.dispatched.map(\.sequence) == [0], "nothing is read after a request that closes")
        #expect(driver.machine.input == .discarding)
        _ = driver.respond(0, "bye")
        #expect(driver.flush() == .close(.done))
        #expect(driver.text.lowercased().contains("connection: close"))
    }

    @Test func aResponseAskingForCloseClosesTheConnection() {
        var driver = Driver()
        driver.receive(Self.get("/a"))
        _ = driver.respond(0, "bye", headers: ["Connection": "close"])
        #expect(driver.flush() == .close(.done))
    }

    // MARK: - 100-continue

    @Test func expectContinueGetsAnInterimResponseBeforeTheBody() {
        var driver = Driver()
        driver.receive("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        #expect(driver.flushRequested)
        #expect(driver.dispatched.isEmpty)
        driver.flush()
        #expect(driver.text == "HTTP/1.1 100 Continue\r\n\r\n")
        driver.receive("data")
        #expect(driver.dispatched.map { $0.request.body } == [Array("data".utf8)])
    }

    @Test func expectContinueBehindAnUnansweredRequestSendsNoInterimResponse() {
        var driver = Driver()
        driver.receive(
            Self.get("/a") + "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        #expect(driver.machine.output.isEmpty)
        #expect(!driver.flushRequested)
    }

    // MARK: - Timeouts

    @Test func aSilentConnectionHasTheHeaderTimeout() {
        let driver = Driver()
        #expect(driver.machine.deadline == 10 * Self.second)
        #expect(driver.machine.deadlinePassed(at: 10 * Self.second - 1) == nil)
        #expect(driver.machine.deadlinePassed(at: 10 * Self.second) == .headerTimeout)
    }

    @Test func aTrickledHeadKeepsTheHeaderTimeoutFromItsFirstByte() {
        var driver = Driver()
        driver.now = 1 * Self.second
        driver.receive("GET / HTTP/1.1\r\n")
        driver.now = 9 * Self.second
        driver.receive("Host: h\r\n")
        #expect(driver.machine.deadlineReason == .headerTimeout)
        #expect(driver.machine.deadline == 11 * Self.second)
    }

    @Test func aSlowBodyHasTheBodyDeadlineAndAStalledOneTheIdleTimeout() {
        var driver = Driver()
        let head = "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n"
        driver.receive(head + String(repeating: "x", count: 10))
        // The header timeout plus a millisecond per byte at the configured rate, before the idle timeout.
        #expect(driver.machine.deadlineReason == .bodyTimeout)
        #expect(driver.machine.deadline == 10 * Self.second + 10 * 1_000_000)
        #expect(driver.machine.deadlinePassed(at: driver.machine.deadline) == .bodyTimeout)

        var fast = Driver()
        fast.receive(head + String(repeating: "x", count: 90000))
        #expect(fast.machine.deadlineReason == .idleTimeout)
        #expect(fast.machine.deadline == 60 * Self.second)
    }

    @Test func outputTheClientDoesNotReadMakesASlowReader() {
        var driver = Driver()
        driver.socketTakes = 0
        driver.receive(Self.get("/a"))
        _ = driver.respond(0, "blocked")
        driver.now = 3 * Self.second
        #expect(driver.flush() == .finished(ConnectionStateMachine.Interest(reading: true, writable: true)))
        #expect(driver.machine.deadlineReason == .slowReader)
        #expect(driver.machine.deadline == 63 * Self.second)
    }

    @Test func aWaitingRequestHasNoDeadline() {
        var driver = Driver()
        driver.receive(Self.get("/a"))
        #expect(driver.machine.deadline == 0)
        #expect(driver.machine.deadlinePassed(at: .max) == nil)
    }

    // MARK: - Rejections and lingering

    @Test func aRejectionIsAnsweredThenTheConnectionLingers() {
        var driver = Driver()
        driver.now = 1 * Self.second
        driver.receive("BAD\r\n\r\n")
        #expect(driver.rejections.map(\.status) == [400])
        #expect(driver.machine.input == .discarding)
        let step = driver.flush()
        #expect(step == .linger(nil))
        #expect(driver.text.hasPrefix("HTTP/1.1 400"))
        #expect(driver.machine.phase == .lingering)
        #expect(driver.machine.deadline == 3 * Self.second)
        #expect(driver.machine.deadlinePassed(at: 3 * Self.second) == .done)

        #expect(driver.receive("more bytes from the client") == .ignore)
        #expect(driver.machine.peerClosed() == (false, .done))
    }

    @Test func lingeringStopsAfterMoreThanTheBodyLimit() {
        var driver = Driver(Self.configuration(maxBodyBytes: 8))
        driver.receive("BAD\r\n\r\n")
        driver.flush()
        #expect(driver.receive("12345678") == .ignore)
        #expect(driver.receive("9") == .close(.done))
    }

    @Test func withoutALingerTimeoutARejectionClosesAtOnce() {
        var driver = Driver(Self.configuration(lingerTimeout: 0))
        driver.receive("BAD\r\n\r\n")
        #expect(driver.flush() == .close(.done))
    }

    @Test func aRejectionWaitsBehindEarlierAnswers() {
        var driver = Driver()
        driver.receive(Self.get("/a") + "BAD\r\n\r\n")
        #expect(driver.dispatched.map(\.sequence) == [0])
        #expect(driver.rejections.count == 1)
        driver.flush()
        #expect(driver.written.isEmpty)
        _ = driver.respond(0, "first")
        #expect(driver.flush() == .linger(nil))
        #expect(driver.text.hasPrefix("HTTP/1.1 200"))
        #expect(driver.text.contains("HTTP/1.1 400"))
    }

    // MARK: - Back-pressure

    @Test func readingPausesAtThePipelineLimitAndResumesWhenDrained() {
        var driver = Driver(Self.configuration(maxPipelinedRequests: 2))
        driver.receive(Self.get("/a") + Self.get("/b") + Self.get("/c"))
        #expect(driver.dispatched.map(\.sequence) == [0, 1])
        #expect(driver.machine.input == .paused)
        #expect(driver.machine.interest == ConnectionStateMachine.Interest(reading: false, writable: false))

        _ = driver.respond(0, "a")
        _ = driver.respond(1, "b")
        #expect(driver.flush() == .finished(ConnectionStateMachine.Interest(reading: true, writable: false)))
        #expect(driver.dispatched.map(\.sequence) == [0, 1, 2], "the buffered request is read after the drain")
    }

    @Test func readingPausesAtTheOutputHighWater() {
        var driver = Driver(Self.configuration(outputHighWater: 10))
        driver.socketTakes = 0
        driver.receive(Self.get("/a"))
        _ = driver.respond(0, "a body longer than the high water")
        driver.flush()
        driver.receive(Self.get("/b"))
        #expect(driver.dispatched.map(\.sequence) == [0])
        #expect(driver.machine.input == .paused)
        driver.socketTakes = nil
        driver.flush()
        #expect(driver.dispatched.map(\.sequence) == [0, 1])
    }

    @Test func aResponseOverThePendingOutputLimitClosesAsASlowReader() {
        var driver = Driver(Self.configuration(maxPendingOutputBytes: 50))
        driver.socketTakes = 0
        driver.receive(Self.get("/a") + Self.get("/b"))
        _ = driver.respond(0, String(repeating: "x", count: 60))
        driver.flush()
        #expect(driver.respond(1, "late") == .close(.slowReader))
    }

    // MARK: - Streams

    @Test func aStreamWritesItsHeadAndBytesThenClosesWhenFinished() {
        var driver = Driver()
        driver.receive(Self.get("/events"))
        #expect(driver.machine.streamWrite(sequence: 0, Array("early".utf8)) == .notStarted)
        let started = driver.machine.streamStarted(sequence: 0, body: Array("hello".utf8)) { _ in
            Array("HEAD\r\n\r\n".utf8)
        }
        #expect(started)
        #expect(driver.machine.input == .discarding)
        #expect(driver.machine.streamWrite(sequence: 0, Array(" world".utf8)) == .flush)
        #expect(driver.flush() == .finished(nil))
        #expect(driver.text == "HEAD\r\n\r\nhello world")
        #expect(driver.machine.streamFinished(sequence: 0) == .flush)
        #expect(driver.flush() == .close(.done))
    }

    @Test func aStreamBehindAnUnansweredRequestWaitsItsTurn() {
        var driver = Driver()
        driver.receive(Self.get("/a") + Self.get("/events"))
        _ = driver.machine.streamStarted(sequence: 1, body: []) { _ in Array("STREAM ".utf8) }
        #expect(driver.machine.streamWrite(sequence: 1, Array("held".utf8)) == .flush)
        driver.flush()
        #expect(driver.written.isEmpty)
        _ = driver.respond(0, "first")
        driver.flush()
        #expect(driver.text.hasSuffix("firstSTREAM held"))
    }

    @Test func streamBytesOverThePendingOutputLimitCloseAsASlowReader() {
        var driver = Driver(Self.configuration(maxPendingOutputBytes: 10))
        driver.receive(Self.get("/events"))
        _ = driver.machine.streamStarted(sequence: 0, body: []) { _ in Array("H".utf8) }
        #expect(driver.machine.streamWrite(sequence: 0, Array("0123456789".utf8)) == .close(.slowReader))
    }

    @Test func aHeadRequestStreamWritesNoBody() {
        var driver = Driver()
        driver.receive("HEAD /events HTTP/1.1\r\nHost: h\r\n\r\n")
        _ = driver.machine.streamStarted(sequence: 0, body: Array("body".utf8)) { _ in Array("HEAD ".utf8) }
        #expect(driver.machine.streamWrite(sequence: 0, Array("more".utf8)) == .ignored)
        driver.flush()
        #expect(driver.text == "HEAD ")
    }

    // MARK: - Drain, peer gone, close

    @Test func drainClosesAnIdleConnectionAtOnce() {
        var driver = Driver()
        #expect(driver.machine.drain() == .close(.shutdown))
    }

    @Test func drainLetsAnInFlightRequestFinishAndCloses() {
        var driver = Driver()
        driver.receive(Self.get("/a"))
        #expect(driver.machine.drain() == .flush)
        _ = driver.respond(0, "last")
        #expect(driver.flush() == .close(.done))
        #expect(driver.text.lowercased().contains("connection: close"))
    }

    @Test func drainEndsOpenStreams() {
        var driver = Driver()
        driver.receive(Self.get("/events"))
        _ = driver.machine.streamStarted(sequence: 0, body: []) { _ in Array("H".utf8) }
        #expect(driver.machine.drain() == .flush)
        #expect(driver.flush() == .close(.done))
    }

    @Test func aPeerGoneWithOutputPendingGetsOneLastWrite() {
        var driver = Driver()
        driver.socketTakes = 0
        driver.receive(Self.get("/a"))
        _ = driver.respond(0, "pending")
        driver.flush()
        #expect(driver.machine.peerClosed() == (true, .peerGone))
    }

    @Test func closingHandsBackTheRequestsInFlightOnce() {
        var driver = Driver()
        driver.receive(Self.get("/a") + Self.get("/b"))
        #expect(driver.machine.close()?.map(\.sequence) == [0, 1])
        #expect(driver.machine.close() == nil)
        #expect(driver.respond(0, "late") == .none)
        #expect(driver.machine.nextWriteStep(after: .start, now: 0) == .stop)
        #expect(driver.receive(Self.get("/c")) == .ignore)
    }
}
