import Glibc

/// What the parser produced from the bytes fed so far.
public enum HTTPParserEvent: Sendable {
    /// A complete request, head and body.
    case request(HTTPRequest)
    /// The head of a request carrying `Expect: 100-continue` is complete and none of its body has arrived yet.
    case continueExpected
    /// The input is not acceptable; answer with the rejection's status and close the connection. Boxed, so that
    /// the rare rejection does not make every event as large as itself.
    indirect case rejected(HTTPRejection)
}

/// An incremental, I/O-free HTTP/1.1 request parser (RFC 9112), strict where leniency enables smuggling.
///
/// Feed it bytes in any chunking with `append(_:)`, then call `next()` until it returns nil. Pipelined requests come
/// out one per call, in order; the bytes after a body (chunked or not) are the start of the next request.
///
/// Decisions the RFC leaves open, all answered with the connection closed afterwards:
/// - Line endings are strictly CRLF: a bare LF or a bare CR → 400.
/// - Any second `Content-Length` field, even with an equal value, and list values like `5, 5` → 400
///   (RFC 9112 §6.3 allows either rejecting or merging identical values; rejecting is the simpler safe choice).
/// - `Content-Length` together with `Transfer-Encoding` → 400; codings that do not end with `chunked`
///   (`xchunked`, `chunked, identity`) or list it twice → 400 (RFC 9112 §6.3: the body's end is unknown); other
///   codings before a final `chunked` (`gzip, chunked`) → 501; `Transfer-Encoding` on an HTTP/1.0 request → 400.
/// - A request line longer than `maxRequestLineBytes` → 414; a head longer than `maxHeaderBytes` or with more than
///   `maxHeaderCount` fields → 431 (the same limits apply to the trailer section of a chunked body).
/// - Obsolete line folding, whitespace before a field name's colon and non-token bytes in methods or field
///   names → 400. HTTP/1.1 requests need exactly one `Host` → 400 otherwise.
/// - Versions other than HTTP/1.0 and HTTP/1.1 → 505. Empty lines before a request line are skipped (RFC 9112 §2.2)
///   but count toward the head size.
public struct HTTPRequestParser: Sendable {
    /// The limits this parser enforces.
    public let limits: HTTPParserLimits

    var buffer: [UInt8] = []
    var readIndex = 0
    var state = State.requestLine
    /// Bytes after `readIndex` already searched for LF, so a line fed one byte at a time is scanned once.
    var lineScanned = 0
    var head = PartialHead()
    var body: [UInt8] = []
    /// Bytes of the trailer section (chunked bodies) consumed so far, and its field count.
    var trailerBytes = 0
    var trailerCount = 0
    /// Given to every request this parser makes (the engine sets them; the request is not copied to add them).
    var origin = RequestOrigin()
    var connection: HTTPConnectionContext?
    /// The client last read from a trusted proxy's `X-Forwarded-For`, with its text: one proxy connection mostly
    /// carries requests of one client in a row, which then need no new `String`.
    private var lastForwarded: (address: IPAddress, text: String)?
    /// When the bytes last appended were read (monotonic nanoseconds), for `HTTPRequest.receivedAt`.
    var receivedAt: Int64 = 0

    enum State: Equatable {
        case requestLine
        case headerFields
        case body(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailerFields
        case failed
    }

    /// A parser with the given limits.
    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        self.limits = limits
    }

    /// Appends bytes received from the peer; call `next()` afterwards. Bytes after a rejection are ignored.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard state != .failed, !bytes.isEmpty else { return }
        if readIndex > 0 {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Appends bytes received from the peer; call `next()` afterwards.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        Array(bytes).withUnsafeBytes { append($0) }
    }

    /// The next complete request, a `100-continue` notice, or a rejection; nil when more bytes are needed
    /// (or after a rejection, which is reported once).
    public mutating func next() -> HTTPParserEvent? {
        guard state != .failed else { return nil }
        let storage = buffer
        let event = storage.withUnsafeBytes { step($0) }
        if readIndex == buffer.count && readIndex > 0 {
            // Drained: give the memory back, so an idle keep-alive connection holds no buffer.
            buffer = []
            readIndex = 0
        }
        return event
    }

    /// `next()` over bytes the caller owns, parsed where they lie instead of being copied into the parser first
    /// (one allocation and copy less per read on a keep-alive connection). Only for a parser holding no input
    /// (`hasBufferedInput` false): call it with the same `bytes`, starting at `offset` 0, until it returns nil or the
    /// caller stops, then give what is left (`bytes[offset...]`) to `append(_:)` before `bytes` goes away.
    mutating func next(from bytes: UnsafeRawBufferPointer, offset: inout Int) -> HTTPParserEvent? {
        guard state != .failed, readIndex == buffer.count else { return nil }
        buffer = []
        readIndex = offset
        let event = step(bytes)
        // After a rejection the rest of the input is ignored, as `append` does.
        offset = state == .failed ? bytes.count : readIndex
        readIndex = 0
        return event
    }

    /// Whether bytes received and not yet parsed are held (then `next(from:offset:)` may not be used).
    var hasBufferedInput: Bool { readIndex < buffer.count }

    /// Whether nothing of a next request has been received: no buffered bytes and no request half-read.
    public var isIdle: Bool {
        state == .requestLine && readIndex == buffer.count && head.headBytes == 0
    }

    /// Whether the parser is inside a request head (some of it received, not all).
    public var isReadingHead: Bool {
        (state == .requestLine && (readIndex < buffer.count || head.headBytes > 0)) || state == .headerFields
    }

    /// Body bytes (after de-chunking) received so far for the request being read.
    var receivedBodyBytes: Int { body.count }

    /// Bytes held for requests not yet complete (leftovers and partial bodies), for memory accounting.
    public var bufferedByteCount: Int { buffer.count - readIndex + body.count }

    // MARK: - The state machine

    private mutating func step(_ raw: UnsafeRawBufferPointer) -> HTTPParserEvent? {
        while true {
            switch state {
            case .requestLine:
                switch findLine(raw) {
                case .incomplete(let available):
                    return requestLineLimitRejection(raw, length: available).map { fail($0) }
                case .bareLineFeed(let length):
                    if let rejection = requestLineLimitRejection(raw, length: length) { return fail(rejection) }
                    return fail(.badRequest, "bare LF in the request line; lines must end with CRLF")
                case .complete(let line):
                    if let rejection = requestLineLimitRejection(raw, length: line.count + 1) { return fail(rejection) }
                    readIndex = line.upperBound + 2
                    head.headBytes += line.count + 2
                    if line.isEmpty { continue }  // RFC 9112 §2.2: empty lines before the request line are skipped
                    if let rejection = parseRequestLine(UnsafeRawBufferPointer(rebasing: raw[line])) {
                        return fail(rejection)
                    }
                    state = .headerFields
                }
            case .headerFields:
                switch findLine(raw) {
                case .incomplete(let available):
                    if head.headBytes + available + 1 > limits.maxHeaderBytes {
                        return fail(.headTooLarge("request head", limits))
                    }
                    return nil
                case .bareLineFeed(let length):
                    // The size limit first, as when the LF comes in a later read than the bytes before it.
                    if head.headBytes + length + 1 > limits.maxHeaderBytes {
                        return fail(.headTooLarge("request head", limits))
                    }
                    return fail(.badRequest, "bare LF after header field \(head.fields.count + 1); use CRLF")
                case .complete(let line):
                    readIndex = line.upperBound + 2
                    head.headBytes += line.count + 2
                    if head.headBytes > limits.maxHeaderBytes {
                        return fail(.headTooLarge("request head", limits))
                    }
                    if line.isEmpty {
                        if let event = finishHead(raw) { return event }
                        continue
                    }
                    if head.fields.count >= limits.maxHeaderCount {
                        return fail(.tooManyFields("header", limits))
                    }
                    if let rejection = parseHeaderField(UnsafeRawBufferPointer(rebasing: raw[line])) {
                        return fail(rejection)
                    }
                }
            case .body(let remaining):
                let left = readBody(raw, remaining: remaining)
                guard left == 0 else {
                    state = .body(remaining: left)
                    return nil
                }
                return completeRequest()
            case .chunkSize, .chunkData, .chunkDataEnd, .trailerFields:
                switch stepChunked(raw) {
                case .needMoreInput: return nil
                case .continue: continue
                case .event(let event): return event
                }
            case .failed:
                return nil
            }
        }
    }

    /// Moves the body bytes that `raw` holds, up to `remaining`, into `body` (a Content-Length body or one chunk's
    /// data); how many are still to come.
    mutating func readBody(_ raw: UnsafeRawBufferPointer, remaining: Int) -> Int {
        let take = min(remaining, raw.count - readIndex)
        body.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[readIndex..<(readIndex + take)]))
        readIndex += take
        return remaining - take
    }

    /// Called at the end of the head: decides the framing. Returns an event to emit, or nil to keep stepping.
    private mutating func finishHead(_ raw: UnsafeRawBufferPointer) -> HTTPParserEvent? {
        if let rejection = head.framingRejection(limits: limits) { return fail(rejection) }
        let expectsContinue = head.expectsContinue && readIndex == raw.count
        if head.transferEncodingChunked {
            state = .chunkSize
        } else if let length = head.contentLength, length > 0 {
            state = .body(remaining: length)
            body.reserveCapacity(min(length, 64 * 1024))
        } else {
            return completeRequest()
        }
        return expectsContinue ? .continueExpected : nil
    }

    /// Emits the request built so far and resets for the next one.
    mutating func completeRequest() -> HTTPParserEvent {
        let request: HTTPRequest
        if let proxies = origin.proxies, let peer = origin.peer {
            let client = forwardedClient(proxies, peer: peer)
            request = head.makeRequest(
                body: body, remoteAddress: origin.remoteAddress, client: client.address, clientAddress: client.text,
                connection: connection, receivedAt: receivedAt)
        } else {
            request = head.makeRequest(
                body: body, remoteAddress: origin.remoteAddress, client: origin.peer, clientAddress: origin.peerText,
                connection: connection, receivedAt: receivedAt)
        }
        head = PartialHead()
        body = []
        trailerBytes = 0
        trailerCount = 0
        state = .requestLine
        return .request(request)
    }

    /// The client of the request being completed, which came from `peer`, a trusted proxy.
    private mutating func forwardedClient(
        _ proxies: TrustedProxies, peer: IPAddress
    ) -> (address: IPAddress, text: String) {
        let address = proxies.forwardedClient(peer: peer, headers: HTTPHeaders(raw: head.fields))
        if address == peer { return (peer, origin.peerText) }
        if let lastForwarded, lastForwarded.address == address { return lastForwarded }
        let client = (address: address, text: address.description)
        lastForwarded = client
        return client
    }

    /// The limit passed by a request line of which `length` bytes (up to its LF, if any) have arrived, judged as
    /// if they had come one at a time, so that the status does not depend on how the peer's writes were split.
    private func requestLineLimitRejection(_ raw: UnsafeRawBufferPointer, length: Int) -> HTTPRejection? {
        // The line is too long at maxRequestLineBytes + 1 bytes, unless the last of them is a CR that may end it.
        var lineTooLongAt = limits.maxRequestLineBytes + 1
        if lineTooLongAt <= length && raw[readIndex + lineTooLongAt - 1] == ASCII.cr { lineTooLongAt += 1 }
        // The head is too large when its bytes so far and the LF still to come exceed the limit.
        let headTooLargeAt = limits.maxHeaderBytes - head.headBytes
        guard min(lineTooLongAt, headTooLargeAt) <= length else { return nil }
        if lineTooLongAt <= headTooLargeAt {
            return .requestLineTooLong(limits)
        }
        return .headTooLarge("request head", limits)
    }

    mutating func fail(_ kind: HTTPRejection.Kind, _ message: String) -> HTTPParserEvent {
        fail(HTTPRejection(kind, message))
    }

    mutating func fail(_ rejection: HTTPRejection) -> HTTPParserEvent {
        var rejection = rejection
        // Past the request line the route is known, so the rejection can be answered in that route's shape.
        if state != .requestLine { rejection.path = head.path }
        state = .failed
        buffer = []
        readIndex = 0
        body = []
        head = PartialHead()
        return .rejected(rejection)
    }

    // MARK: - Lines

    enum Line {
        /// A line's content without its CRLF, as a range of the buffer.
        case complete(Range<Int>)
        case incomplete(available: Int)
        /// A LF without a CR before it, after `length` bytes of the line.
        case bareLineFeed(length: Int)
    }

    /// Finds the CRLF-terminated line that starts at `readIndex`; does not consume it.
    mutating func findLine(_ raw: UnsafeRawBufferPointer) -> Line {
        let searchStart = readIndex + lineScanned
        let end = raw.count
        guard searchStart < end, let base = raw.baseAddress,
            let found = memchr(base + searchStart, Int32(ASCII.lf), end - searchStart)
        else {
            lineScanned = end - readIndex
            return .incomplete(available: end - readIndex)
        }
        let lineFeed = base.distance(to: UnsafeRawPointer(found))
        lineScanned = 0
        guard lineFeed > readIndex, raw[lineFeed - 1] == ASCII.cr else {
            return .bareLineFeed(length: lineFeed - readIndex)
        }
        return .complete(readIndex..<(lineFeed - 1))
    }
}
