// libFuzzer harness for the chunked transfer coding of request bodies (RFC 9112 §7.1). Run with `Fuzz/run chunked`.
//
// The input (after a byte choosing the limits and two choosing the reads) is what follows a fixed head with
// `Transfer-Encoding: chunked`: chunk sizes, extensions, data, trailers, then perhaps more pipelined requests.
// A plain reference decoder, written from the RFC's grammar and the parser's documented limits, reads the same
// bytes. Properties checked; a violation traps:
// - the parser and the reference agree: the same body, or the same rejection status, or both wait for more;
// - after the body, the parser goes on exactly where the reference says the body ends: the rest of the events
//   equal those of a fresh parser given only the bytes after the body;
// - the body never exceeds maxBodyBytes; the events do not depend on how the bytes are split into reads.

@testable import FlagHTTP

private let head = Array("POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)

private let limitChoices: [HTTPParserLimits] = [
    HTTPParserLimits(),
    HTTPParserLimits(
        maxHeaderBytes: 64, maxHeaderCount: 2, maxRequestLineBytes: 64, maxBodyBytes: 16, maxChunkLineBytes: 8),
    HTTPParserLimits(
        maxHeaderBytes: 128, maxHeaderCount: 3, maxRequestLineBytes: 64, maxBodyBytes: 0, maxChunkLineBytes: 1),
    HTTPParserLimits(
        maxHeaderBytes: 256, maxHeaderCount: 8, maxRequestLineBytes: 64, maxBodyBytes: 300, maxChunkLineBytes: 32),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let limits = input.pick(limitChoices)
    let sizes = input.readSizes(upTo: 16, 4)
    let chunked = Array(input.bytes)
    let stream = head + chunked

    let whole = events([stream[...]], limits: limits)
    let split = events(pieces(stream, sizes: sizes), limits: limits)
    check(whole == split, "reads of \(sizes) give \(split), all at once \(whole): \(text(chunked))")

    switch decode(chunked, limits: limits) {
    case .incomplete:
        check(whole.isEmpty, "the reference waits for more, the parser gives \(whole): \(text(chunked))")
    case .rejected(let status):
        check(whole == [.rejected(status)], "the reference rejects with \(status), the parser gives \(whole)")
    case .body(let body, let end):
        check(body.count <= limits.maxBodyBytes, "the reference's body passed the limit")
        check(whole.first == .body(body), "the reference reads \(body.count) bytes, the parser \(whole.first as Any)")
        let rest = events([chunked[end...]], limits: limits, afterBody: true)
        check(Array(whole.dropFirst()) == rest, "after the body: \(whole.dropFirst()), alone: \(rest)")
    }
    return 0
}

private enum Event: Equatable {
    case body([UInt8])
    case request(method: String, target: String, body: [UInt8])
    case rejected(Int)
}

/// The parser's events: the first request's body (unless `afterBody`), then whatever follows it.
private func events(_ pieces: [ArraySlice<UInt8>], limits: HTTPParserLimits, afterBody: Bool = false) -> [Event] {
    var parser = HTTPRequestParser(limits: limits)
    var events: [Event] = []
    for piece in pieces {
        parser.append(piece)
        while let event = parser.next() {
            switch event {
            case .request(let request) where !afterBody && events.isEmpty:
                check(request.body.count <= limits.maxBodyBytes, "a body of \(request.body.count) bytes")
                events.append(.body(request.body))
            case .request(let request):
                events.append(.request(method: request.method, target: request.target, body: request.body))
            case .continueExpected:
                break
            case .rejected(let rejection):
                events.append(.rejected(rejection.status))
            }
        }
    }
    return events
}

private enum Decoded {
    case body([UInt8], end: Int)
    case rejected(Int)
    case incomplete
}

/// The reference: `*chunk last-chunk trailer-section CRLF`, read from the whole input at once.
private func decode(_ bytes: [UInt8], limits: HTTPParserLimits) -> Decoded {
    var index = 0
    var body: [UInt8] = []
    enum Line {
        case complete(ArraySlice<UInt8>)
        case bareLineFeed(length: Int)
        case incomplete(available: Int)
    }
    /// The CRLF-terminated line at `index`, consumed if complete.
    func line() -> Line {
        guard let lf = bytes[index...].firstIndex(of: 0x0A) else { return .incomplete(available: bytes.count - index) }
        guard lf > index, bytes[lf - 1] == 0x0D else { return .bareLineFeed(length: lf - index) }
        defer { index = lf + 1 }
        return .complete(bytes[index..<(lf - 1)])
    }

    while true {
        let sizeLine: ArraySlice<UInt8>
        switch line() {
        case .incomplete(let available): return available > limits.maxChunkLineBytes + 1 ? .rejected(400) : .incomplete
        case .bareLineFeed: return .rejected(400)
        case .complete(let text): sizeLine = text
        }
        guard sizeLine.count <= limits.maxChunkLineBytes, let size = chunkSize(sizeLine) else { return .rejected(400) }
        if size == 0 { break }
        // Subtracted, not added: a size near Int.max must not overflow the reference itself.
        guard size <= limits.maxBodyBytes - body.count else { return .rejected(413) }
        guard bytes.count - index >= size else { return .incomplete }
        body += bytes[index..<(index + size)]
        index += size
        guard index < bytes.count else { return .incomplete }
        guard bytes[index] == 0x0D else { return .rejected(400) }
        guard index + 1 < bytes.count else { return .incomplete }
        guard bytes[index + 1] == 0x0A else { return .rejected(400) }
        index += 2
    }
    // Trailer fields. The size limit is judged on the bytes before a line's end, whatever that end turns out to be:
    // as they arrive one by one, the limit is passed before the LF is seen.
    var trailerBytes = 0
    var trailerCount = 0
    while true {
        let field: ArraySlice<UInt8>
        switch line() {
        case .incomplete(let available):
            return trailerBytes + available + 1 > limits.maxHeaderBytes ? .rejected(431) : .incomplete
        case .bareLineFeed(let length):
            return trailerBytes + length + 1 > limits.maxHeaderBytes ? .rejected(431) : .rejected(400)
        case .complete(let text): field = text
        }
        trailerBytes += field.count + 2
        if trailerBytes > limits.maxHeaderBytes { return .rejected(431) }
        if field.isEmpty { return .body(body, end: index) }
        trailerCount += 1
        if trailerCount > limits.maxHeaderCount { return .rejected(431) }
        if !isFieldLine(field) { return .rejected(400) }
    }
}

/// `1*HEXDIG [BWS ";" chunk-ext]` with any bytes of a field value in the extension; nil when malformed or too big.
private func chunkSize(_ line: ArraySlice<UInt8>) -> Int? {
    let digits = line.prefix { hexDigit($0) != nil }
    guard !digits.isEmpty else { return nil }
    var size = 0
    for digit in digits {
        let (times16, overflow) = size.multipliedReportingOverflow(by: 16)
        let (sum, overflow2) = times16.addingReportingOverflow(hexDigit(digit) ?? 0)
        if overflow || overflow2 { return nil }
        size = sum
    }
    let rest = line.dropFirst(digits.count).drop { $0 == 0x20 || $0 == 0x09 }
    guard let first = rest.first else { return size }
    return first == 0x3B && rest.allSatisfy(isValueByte) ? size : nil
}

private func hexDigit(_ byte: UInt8) -> Int? {
    switch byte {
    case 0x30...0x39: Int(byte - 0x30)
    case 0x41...0x46: Int(byte - 0x41 + 10)
    case 0x61...0x66: Int(byte - 0x61 + 10)
    default: nil
    }
}

/// VCHAR, obs-text, SP, HTAB.
private func isValueByte(_ byte: UInt8) -> Bool { byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }

/// `field-name ":" OWS field-value OWS`, with a token name.
private func isFieldLine(_ line: ArraySlice<UInt8>) -> Bool {
    let tokenBytes = Set(Array("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8))
    guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex else { return false }
    return line[..<colon].allSatisfy(tokenBytes.contains) && line[(colon + 1)...].allSatisfy(isValueByte)
}
