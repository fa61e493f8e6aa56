/// One Server-Sent Event, as dispatched by the parser.
struct SSEEvent: Sendable, Equatable {
    /// The `event:` field; `message` when the event named none.
    var type: String
    /// The `data:` lines joined with `\n`.
    var data: String
    /// The last `id:` seen on the stream (it persists across events, as the standard says).
    var id: String?
    /// The event's `signature:` field (docs/signing.md), if it had one: a field of this event only, unlike `id`.
    /// Parsers that do not know the field ignore it, as the standard says of unknown fields.
    var signature: String? = nil
}

/// What the parser found in a chunk of the stream, in order.
enum SSEItem: Sendable, Equatable {
    /// A complete event.
    case event(SSEEvent)
    /// A comment line (`: heartbeat`): proof that the connection is alive.
    case comment(String)
    /// A valid `retry:` field: the server's reconnection delay in milliseconds.
    case retry(Int)
}

/// A pure state machine for the `text/event-stream` format (WHATWG HTML, "Server-sent events"): feed it bytes as
/// they arrive, split anywhere (inside a line, between CR and LF, inside a UTF-8 sequence), and it returns what
/// became complete.
///
/// ```swift
/// var parser = SSEParser()
/// for item in parser.feed(Array("event: put\nid: 3\ndata: {}\n\n".utf8)) { … }
/// ```
struct SSEParser: Sendable {
    private var line: [UInt8] = []
    /// A CR ended the last line: a LF right after it belongs to that line ending, even in the next chunk.
    private var afterCR = false
    private var sawBOMCheck = false
    private var eventType = ""
    private var data: [UInt8] = []
    private var hasData = false
    private var signature: String?
    private var lastEventID: String?
    /// Lines longer than this are cut, so that a hostile stream cannot make the client hold unbounded memory.
    let maximumLineLength: Int

    /// A parser that holds at most `maximumLineLength` bytes of one line and of one event's data.
    init(maximumLineLength: Int = 16 << 20) {
        self.maximumLineLength = maximumLineLength
    }

    /// The last event id seen, sent back as `Last-Event-ID` on reconnect.
    var lastID: String? { lastEventID }

    /// Consumes `bytes` and returns the events, comments and retry fields completed by them.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [SSEItem] {
        var items: [SSEItem] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0D:
                afterCR = true
                finishLine(into: &items)
            case 0x0A:
                finishLine(into: &items)
            default:
                if line.count < maximumLineLength { line.append(byte) }
            }
        }
        return items
    }

    /// Forgets a partial line and event, as on a new connection; the last event id is kept.
    mutating func reset() {
        line.removeAll(keepingCapacity: true)
        afterCR = false
        sawBOMCheck = false
        eventType = ""
        data.removeAll()
        hasData = false
        signature = nil
    }

    private mutating func finishLine(into items: inout [SSEItem]) {
        defer { line.removeAll(keepingCapacity: true) }
        if !sawBOMCheck {
            sawBOMCheck = true
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        }
        guard !line.isEmpty else {
            dispatch(into: &items)
            return
        }
        if line[0] == UInt8(ascii: ":") {
            var text = line.dropFirst()
            if text.first == UInt8(ascii: " ") { text = text.dropFirst() }
            items.append(.comment(String(decoding: text, as: UTF8.self)))
            return
        }
        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = line[..<colon]
            value = line[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            field = line[...]
            value = []
        }
        switch String(decoding: field, as: UTF8.self) {
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "data":
            // The line feed joining data lines counts toward the limit too: empty `data` lines would otherwise
            // grow an event without bound.
            let separator = hasData ? 1 : 0
            if data.count + separator + value.count <= maximumLineLength {
                if hasData { data.append(0x0A) }
                data.append(contentsOf: value)
            }
            hasData = true
        case "id":
            // An id containing NUL is ignored, as the standard says.
            if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        case "signature":
            signature = String(decoding: value, as: UTF8.self)
        case "retry":
            let digits = value.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            if digits, !value.isEmpty, let milliseconds = Int(String(decoding: value, as: UTF8.self)) {
                items.append(.retry(milliseconds))
            }
        default:
            break  // Unknown fields are ignored.
        }
    }

    private mutating func dispatch(into items: inout [SSEItem]) {
        defer {
            eventType = ""
            data.removeAll(keepingCapacity: true)
            hasData = false
            signature = nil
        }
        // An event with no data line is not dispatched (its id still counts, already recorded).
        guard hasData else { return }
        let type = eventType.isEmpty ? "message" : eventType
        items.append(
            .event(
                SSEEvent(
                    type: type, data: String(decoding: data, as: UTF8.self), id: lastEventID, signature: signature)))
    }
}
