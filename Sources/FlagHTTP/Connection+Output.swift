import Glibc

/// Responses and streams arriving for a connection, written strictly in request order.
extension Connection {
    private func index(of sequence: Int) -> Int? {
        guard let first = outstanding.first else { return nil }
        let index = sequence - first.sequence
        return outstanding.indices.contains(index) ? index : nil
    }

    /// A complete response for request `sequence`; written now if it is next in line, else kept until it is.
    func deliver(sequence: Int, _ response: HTTPResponse) {
        guard phase == .open, let index = index(of: sequence), case .waiting = outstanding[index].state else { return }
        // The entry's fields read in place: a copy of the entry retained and released its responder.
        let prepared = response.prepared
        let closeAfter =
            !outstanding[index].keepAlive || loop.isDraining
            || (prepared.map(\.requestsClose) ?? HTTPResponseEncoder.requestsClose(response))
        let context = HTTPResponseEncoder.Context(
            isHeadRequest: outstanding[index].isHeadRequest, version: outstanding[index].version, close: closeAfter)
        let (head, body) =
            if let prepared {
                loop.preparedHeads.encode(response, prepared, context, date: loop.dateCache)
            } else {
                HTTPResponseEncoder.encode(response, context, date: loop.dateCache.line)
            }
        if index == 0 {
            if output.byteCount >= loop.shared.configuration.maxPendingOutputBytes {
                close(.slowReader)
                return
            }
            output.append(head)
            if let body { output.append(body) }
            outstanding.removeFirstQuickly()
            if closeAfter { beginClosing() } else { advance() }
        } else {
            outstanding[index].state = .done(chunks: body.map { [head, $0] } ?? [head], close: closeAfter)
        }
        loop.markDirty(self)
    }

    /// Starts a streamed response for request `sequence`; no further requests are read on this connection.
    func startStream(sequence: Int, _ head: HTTPResponse) {
        guard phase == .open, let index = index(of: sequence), case .waiting = outstanding[index].state else { return }
        let entry = outstanding[index]
        var pending = [HTTPResponseEncoder.encodeStreamHead(head, version: entry.version, date: loop.dateCache.line)]
        if !entry.isHeadRequest && !head.body.isEmpty { pending.append(head.body) }
        outstanding[index].state = .streaming(pending: pending, finished: false)
        loop.shared.metrics.openStreams.add(1, ordering: .relaxed)
        input = .discarding
        if loop.isDraining {
            outstanding[index].state = .streaming(pending: pending, finished: true)
        }
        if index == 0 { advance() }
        loop.markDirty(self)
    }

    /// Appends stream bytes. Returns false if the stream's start has not been applied yet (the caller queues the
    /// write behind it); true when the bytes were taken or dropped (stream finished, connection closing).
    func streamWrite(sequence: Int, _ bytes: [UInt8]) -> Bool {
        guard phase == .open, let index = index(of: sequence) else { return true }
        switch outstanding[index].state {
        case .waiting:
            return false
        case .done:
            return true
        case .streaming(var pending, let finished):
            guard !finished, !outstanding[index].isHeadRequest else { return true }
            if index == 0 {
                output.append(bytes)
            } else {
                pending.append(bytes)
                outstanding[index].state = .streaming(pending: pending, finished: false)
            }
            if output.byteCount + pending.reduce(0, { $0 + $1.count })
                > loop.shared.configuration.maxPendingOutputBytes
            {
                close(.slowReader)
                return true
            }
            loop.markDirty(self)
            return true
        }
    }

    /// Ends the stream of request `sequence`: the connection closes once its bytes are written.
    /// Returns false if the stream's start has not been applied yet.
    func streamFinish(sequence: Int) -> Bool {
        guard phase == .open, let index = index(of: sequence) else { return true }
        switch outstanding[index].state {
        case .waiting:
            return false
        case .done:
            return true
        case .streaming(let pending, _):
            outstanding[index].state = .streaming(pending: pending, finished: true)
            if index == 0 { advance() }
            loop.markDirty(self)
            return true
        }
    }

    /// Moves answered requests at the head of the line to the output, stopping at the first unanswered one.
    func advance() {
        while let first = outstanding.first {
            switch first.state {
            case .waiting:
                return
            case .done(let chunks, let close):
                output.append(contentsOf: chunks)
                outstanding.removeFirstQuickly()
                if close {
                    beginClosing()
                    return
                }
            case .streaming(let pending, let finished):
                output.append(contentsOf: pending)
                outstanding[0].state = .streaming(pending: [], finished: finished)
                if finished { beginClosing() }
                return
            }
        }
    }

    /// Writes what is queued; closes, lingers or resumes reading once it has all gone out.
    func flush() {
        if phase == .closed { return }
        if !wantsWritable && !output.isEmpty { lastWriteProgress = loop.now }
        while true {
            while !output.isEmpty {
                let written = output.send(to: fd, iovecs: loop.iovecs, capacity: EventLoop.iovecCapacity)
                if written > 0 {
                    lastWriteProgress = loop.now
                    continue
                }
                let code = errno
                if written < 0 && code == EINTR { continue }
                if written < 0 && (code == EAGAIN || code == EWOULDBLOCK) { break }
                close(.peerGone)
                return
            }
            wantsWritable = !output.isEmpty
            if wantsWritable { break }
            switch phase {
            case .closing(let linger):
                if linger { startLingering() } else { close(.done) }
                return
            case .open:
                break
            case .lingering, .closed:
                return
            }
            if outstanding.isEmpty { idleSince = loop.now }
            guard input == .paused else { break }
            input = .parsing
            processRequests()
            if output.isEmpty { break }
        }
        updateInterest()
        updateDeadline()
    }
}
