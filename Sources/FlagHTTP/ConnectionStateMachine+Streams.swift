/// A streamed response (Server-Sent Events): its head, its writes and its end, in request order like any other.
extension ConnectionStateMachine {
    /// Starts a streamed response for request `sequence` with the head `encodeHead` makes for the request's
    /// version; no further requests are read on this connection. False if the request is not waiting for one.
    mutating func streamStarted(
        sequence: Int, body: [UInt8], encodeHead: (HTTPVersion) -> [UInt8]
    ) -> Bool {
        guard phase == .open, let index = index(of: sequence), case .waiting = outstanding[index].state else {
            return false
        }
        var pending = [encodeHead(outstanding[index].version)]
        if !outstanding[index].isHeadRequest && !body.isEmpty { pending.append(body) }
        outstanding[index].state = .streaming(pending: pending, finished: isDraining)
        input = .discarding
        if index == 0 { advance() }
        return true
    }

    /// Where a stream event for request `sequence` goes: its streaming entry, or the answer when it has none (not
    /// started yet, already answered, or the connection is closing).
    private enum StreamEntry {
        case stream(index: Int, pending: [[UInt8]], finished: Bool)
        case answer(StreamReaction)
    }

    private func stream(_ sequence: Int) -> StreamEntry {
        guard phase == .open, let index = index(of: sequence) else { return .answer(.ignored) }
        switch outstanding[index].state {
        case .waiting: return .answer(.notStarted)
        case .done: return .answer(.ignored)
        case .streaming(let pending, let finished): return .stream(index: index, pending: pending, finished: finished)
        }
    }

    /// Stream bytes for request `sequence`.
    mutating func streamWrite(sequence: Int, _ bytes: [UInt8]) -> StreamReaction {
        switch stream(sequence) {
        case .answer(let reaction):
            return reaction
        case .stream(let index, var pending, let finished):
            guard !finished, !outstanding[index].isHeadRequest else { return .ignored }
            if index == 0 {
                output.append(bytes)
            } else {
                pending.append(bytes)
                outstanding[index].state = .streaming(pending: pending, finished: false)
            }
            if output.byteCount + pending.reduce(0, { $0 + $1.count }) > configuration.maxPendingOutputBytes {
                return .close(.slowReader)
            }
            return .flush
        }
    }

    /// Ends the stream of request `sequence`: the connection closes once its bytes are written.
    mutating func streamFinished(sequence: Int) -> StreamReaction {
        switch stream(sequence) {
        case .answer(let reaction):
            return reaction
        case .stream(let index, let pending, _):
            outstanding[index].state = .streaming(pending: pending, finished: true)
            if index == 0 { advance() }
            return .flush
        }
    }
}
