import Glibc

/// Work handed to a loop by other threads.
enum LoopMessage: Sendable {
    case respond(ConnectionID, sequence: Int, HTTPResponse)
    case startStream(ConnectionID, sequence: Int, HTTPResponse)
    case streamWrite(ConnectionID, sequence: Int, [UInt8])
    case streamFinish(ConnectionID, sequence: Int)
    case shutdown(deadline: Int64)
}

/// The entry points responders and streams call from any thread: direct on the loop thread, queued otherwise.
extension EventLoop {
    func respond(_ id: ConnectionID, sequence: Int, _ response: HTTPResponse) {
        if inLoopThread {
            connection(for: id)?.deliver(sequence: sequence, response)
        } else {
            enqueue(.respond(id, sequence: sequence, response))
        }
    }

    func startStream(_ id: ConnectionID, sequence: Int, _ head: HTTPResponse) {
        if inLoopThread {
            connection(for: id)?.startStream(sequence: sequence, head)
        } else {
            enqueue(.startStream(id, sequence: sequence, head))
        }
    }

    func streamWrite(_ id: ConnectionID, sequence: Int, _ bytes: [UInt8]) {
        // A stream started from another thread may still have its start queued: queue behind it to keep order.
        if inLoopThread, let connection = connection(for: id), connection.streamWrite(sequence: sequence, bytes) {
            return
        }
        enqueue(.streamWrite(id, sequence: sequence, bytes))
    }

    func streamFinish(_ id: ConnectionID, sequence: Int) {
        if inLoopThread, let connection = connection(for: id), connection.streamFinish(sequence: sequence) {
            return
        }
        enqueue(.streamFinish(id, sequence: sequence))
    }

    /// Queues a message and wakes the loop, once per batch: only the first message after a drain writes the eventfd.
    func enqueue(_ message: LoopMessage) {
        let wake = inbox.withLock { inbox -> Bool in
            guard inbox.isOpen else { return false }
            inbox.append(message)
            if case .respond = message { answersWaiting.store(true, ordering: .releasing) }
            guard !inbox.wakePending else { return false }
            inbox.wakePending = true
            return true
        }
        if wake {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
        }
    }

    /// Runs on the loop thread when the eventfd fires. Producers are not woken again (no eventfd writes) until the
    /// inbox has been found empty, so a burst of writes from another thread costs one wake-up, not one per write.
    func drainInbox() {
        var counter: UInt64 = 0
        _ = read(wakeFD, &counter, MemoryLayout<UInt64>.size)
        var batch = spareMessages
        var responses = spareResponses
        // A few rounds at most, so a producer that never stops cannot starve this loop's sockets.
        for _ in 0..<4 {
            inbox.withLock { inbox in
                if inbox.isEmpty {
                    inbox.wakePending = false
                } else {
                    swap(&inbox.messages, &batch)
                    swap(&inbox.responses, &responses)
                    answersWaiting.store(false, ordering: .relaxed)
                }
            }
            if batch.isEmpty && responses.isEmpty {
                (spareMessages, spareResponses) = (batch, responses)
                return
            }
            process(responses)  // answers first: see `Inbox.append`
            process(batch)
            batch.emptyKeepingCapacity()
            responses.emptyKeepingCapacity()
        }
        (spareMessages, spareResponses) = (batch, responses)
        // Still busy: wake up again right after the sockets have had their turn.
        var one: UInt64 = 1
        _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    /// Answers that came while the loop works through a batch of stream events, taken at once rather than after it.
    private func answerWaitingRequests() {
        var answers: [LoopMessage] = []
        inbox.withLock { inbox in
            swap(&inbox.responses, &answers)
            answersWaiting.store(false, ordering: .relaxed)
        }
        process(answers)
    }

    private func process(_ batch: [LoopMessage]) {
        for (index, message) in batch.enumerated() {
            // A flag read every few messages: a fan-out to thousands of streams does not hold up a writer's answer.
            if index % 32 == 31, answersWaiting.load(ordering: .acquiring) { answerWaitingRequests() }
            switch message {
            case .respond(let id, let sequence, let response):
                connection(for: id)?.deliver(sequence: sequence, response)
            case .startStream(let id, let sequence, let head):
                connection(for: id)?.startStream(sequence: sequence, head)
            case .streamWrite(let id, let sequence, let bytes):
                _ = connection(for: id)?.streamWrite(sequence: sequence, bytes)
            case .streamFinish(let id, let sequence):
                _ = connection(for: id)?.streamFinish(sequence: sequence)
            case .shutdown(let deadline):
                beginDrain(deadline: deadline)
            }
        }
    }
}
