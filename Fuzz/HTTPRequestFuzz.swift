// libFuzzer harness for the HTTP/1.1 request parser: heads, bodies, pipelined requests, limits. Run with
// `Fuzz/run http`.
//
// The first input byte picks the limits (the defaults, or small ones that a 4 KiB input can exceed), the next two
// how the rest is split into reads. Properties checked on every input; a violation traps:
// - the events do not depend on how the bytes are split into reads (`100-continue` aside: by design it is sent
//   only when none of the body has arrived with the head), nor on whether a read is parsed where it lies
//   (`next(from:offset:)`, the engine's path when the parser holds nothing) or appended first;
// - after a rejection nothing more comes out; a `100-continue` is followed by its request or a rejection;
// - every request keeps the limits and the framing rules: body ≤ maxBodyBytes, fields ≤ maxHeaderCount, version
//   1.0 or 1.1, one Host on 1.1, Content-Length equal to the body, a body only with Content-Length or chunked;
//   methods and field names are tokens, field values are trimmed; the path is the decoded raw path, and the
//   public `HTTPRequest(method:target:)` derives the same path and query from the target;
// - a request's canonical bytes (one line per field, the body re-framed the same way) parse back to the same
//   request, and all of them pipelined back to the same sequence.

@testable import FlagHTTP

private let limitChoices: [HTTPParserLimits] = [
    HTTPParserLimits(),
    HTTPParserLimits(
        maxHeaderBytes: 200, maxHeaderCount: 4, maxRequestLineBytes: 64, maxBodyBytes: 100, maxChunkLineBytes: 16),
    // A request line limit above the head limit: which of 414 and 431 wins must not depend on the reads.
    HTTPParserLimits(
        maxHeaderBytes: 64, maxHeaderCount: 2, maxRequestLineBytes: 100, maxBodyBytes: 0, maxChunkLineBytes: 3),
    HTTPParserLimits(
        maxHeaderBytes: 1024, maxHeaderCount: 16, maxRequestLineBytes: 256, maxBodyBytes: 1, maxChunkLineBytes: 64),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let limits = input.pick(limitChoices)
    let sizes = input.readSizes(upTo: 32, 8)
    let bytes = Array(input.bytes)

    let whole = parseAll([bytes[...]], limits: limits)
    let split = parseAll(pieces(bytes, sizes: sizes), limits: limits)
    check(
        whole.withoutContinue == split.withoutContinue,
        "reads of \(sizes) give \(split.withoutContinue), all at once \(whole.withoutContinue): \(text(bytes))")
    let direct = parseAll(pieces(bytes, sizes: sizes), limits: limits, direct: true)
    check(
        direct.events == split.events,
        "reads of \(sizes) parsed in place give \(direct.events), appended \(split.events): \(text(bytes))")
    checkSequence(split.events)
    checkSequence(whole.events)

    // The round trip. Limits grow for the head: a byte that is not UTF-8 comes back as U+FFFD, three bytes.
    var relaxed = limits
    relaxed.maxHeaderBytes = 3 * limits.maxHeaderBytes + 64
    relaxed.maxChunkLineBytes = max(limits.maxChunkLineBytes, 16)
    var pipelined: [UInt8] = []
    for request in whole.requests {
        check(request, limits: limits)
        let canonical = canonicalBytes(request)
        pipelined += canonical
        let again = parseAll([canonical[...]], limits: relaxed)
        check(
            again.withoutContinue == [.request(Facts(request))],
            "canonical bytes \(text(canonical)) parse to \(again.withoutContinue), not \(Facts(request))")
    }
    let again = parseAll(pieces(pipelined, sizes: sizes), limits: relaxed)
    check(
        again.withoutContinue == whole.requests.map { .request(Facts($0)) },
        "the pipelined canonical bytes parse to other requests: \(text(pipelined))")
    return 0
}

/// A request's parts, comparable.
private struct Facts: Equatable, CustomStringConvertible {
    var method, target, rawPath, path: String
    var rawQuery: String?
    var fields: [HTTPHeaders.Field]
    var body: [UInt8]
    var version: HTTPVersion
    var keepAlive: Bool

    init(_ request: HTTPRequest) {
        (method, target, rawPath, path, rawQuery) =
            (request.method, request.target, request.rawPath, request.path, request.rawQuery)
        (fields, body, version, keepAlive) = (request.headers.fields, request.body, request.version, request.keepAlive)
    }

    var description: String { "\(method) \(target) \(version) \(fields.count) fields, \(body.count) bytes" }
}

private enum Event: Equatable, CustomStringConvertible {
    case request(Facts)
    case continueExpected
    case rejected(status: Int, code: String)

    var description: String {
        switch self {
        case .request(let facts): "request(\(facts))"
        case .continueExpected: "100-continue"
        case .rejected(let status, let code): "rejected(\(status) \(code))"
        }
    }
}

private struct Run {
    var events: [Event] = []
    var requests: [HTTPRequest] = []
    var withoutContinue: [Event] { events.filter { $0 != .continueExpected } }
}

/// Feeds the pieces in order, draining the parser after each; `direct`: a piece that arrives while the parser holds
/// nothing is parsed where it lies, as the engine does, and only its rest appended.
private func parseAll(_ pieces: [ArraySlice<UInt8>], limits: HTTPParserLimits, direct: Bool = false) -> Run {
    var parser = HTTPRequestParser(limits: limits)
    var run = Run()
    var fed = 0
    for piece in pieces {
        var events: [HTTPParserEvent] = []
        if direct && !parser.hasBufferedInput {
            piece.withUnsafeBytes { bytes in
                var offset = 0
                while let event = parser.next(from: bytes, offset: &offset) { events.append(event) }
                check((0...bytes.count).contains(offset), "offset \(offset) outside a read of \(bytes.count) bytes")
                parser.append(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            }
        } else {
            parser.append(piece)
        }
        fed += piece.count
        while let event = parser.next() { events.append(event) }
        for event in events {
            switch event {
            case .request(let request):
                run.requests.append(request)
                run.events.append(.request(Facts(request)))
            case .continueExpected:
                run.events.append(.continueExpected)
            case .rejected(let rejection):
                check([400, 413, 414, 431, 501, 505].contains(rejection.status), "rejected with \(rejection)")
                check(!rejection.message.isEmpty, "a rejection without a message")
                run.events.append(.rejected(status: rejection.status, code: rejection.code))
            }
        }
        check(
            (0...fed).contains(parser.bufferedByteCount),
            "\(parser.bufferedByteCount) bytes buffered after \(fed) fed")
    }
    check(parser.next() == nil, "next() gives an event without new input")
    return run
}

/// Order rules: nothing after a rejection; a `100-continue` comes before its request (or a rejection).
private func checkSequence(_ events: [Event]) {
    for (index, event) in events.enumerated() {
        switch event {
        case .rejected:
            check(index == events.count - 1, "events after a rejection: \(events)")
        case .continueExpected:
            if index + 1 < events.count, case .request(let facts) = events[index + 1] {
                let expect = facts.fields.first { HTTPHeaders.namesEqual($0.name, "expect") }
                check(expect != nil, "100-continue before a request without Expect: \(events)")
            } else {
                check(index + 1 == events.count || events[index + 1] != .continueExpected, "two 100-continues")
            }
        case .request:
            break
        }
    }
}

/// The per-request properties.
private func check(_ request: HTTPRequest, limits: HTTPParserLimits) {
    let headers = request.headers
    check(request.body.count <= limits.maxBodyBytes, "a body of \(request.body.count) bytes passed the limit")
    check(headers.count <= limits.maxHeaderCount, "\(headers.count) fields passed the limit")
    check(request.version == .http1_1 || request.version == .http1_0, "version \(request.version)")
    if request.version == .http1_1 {
        check(headers.values(for: "host").count == 1, "an HTTP/1.1 request with \(headers.values(for: "host")) hosts")
    }
    check(!request.method.isEmpty && request.method.utf8.allSatisfy(ASCII.isTokenByte), "method \(request.method)")
    for field in headers {
        check(!field.name.isEmpty && field.name.utf8.allSatisfy(ASCII.isTokenByte), "field name \(field.name)")
        let value = Array(field.value.utf8)
        check(
            value.first.map { !ASCII.isWhitespace($0) } ?? true && value.last.map { !ASCII.isWhitespace($0) } ?? true,
            "field value \(field.value.debugDescription) is not trimmed")
        check(!value.contains(ASCII.cr) && !value.contains(ASCII.lf) && !value.contains(0), "control in a value")
    }
    let lengths = headers.values(for: "content-length")
    let codings = headers.values(for: "transfer-encoding")
    check(lengths.count <= 1 && (lengths.isEmpty || codings.isEmpty), "Content-Length \(lengths), TE \(codings)")
    if let length = lengths.first {
        check(Int(length) == request.body.count, "Content-Length \(length) with a body of \(request.body.count)")
    } else if codings.isEmpty {
        check(request.body.isEmpty, "a body of \(request.body.count) bytes without framing")
    }
    check(HTTPTarget.percentDecoded(request.rawPath, plusAsSpace: false) == request.path, "path \(request.path)")
    let derived = HTTPRequest(method: request.method, target: request.target)
    check(
        derived.rawPath == request.rawPath && derived.path == request.path && derived.rawQuery == request.rawQuery,
        "HTTPRequest(target: \(request.target)) splits it differently from the parser")
    // Query access is on demand: it must not trap on whatever the target holds.
    _ = request.queryItems
    _ = request.query("a")
}

/// The request as a client would canonically send it: the same line and fields, the body framed as before
/// (chunked as one chunk, or with its Content-Length).
private func canonicalBytes(_ request: HTTPRequest) -> [UInt8] {
    var head = "\(request.method) \(request.target) \(request.version)\r\n"
    for field in request.headers {
        head += "\(field.name): \(field.value)\r\n"
    }
    head += "\r\n"
    var bytes = Array(head.utf8)
    if request.headers.contains("transfer-encoding") {
        if !request.body.isEmpty {
            bytes += Array("\(String(request.body.count, radix: 16))\r\n".utf8) + request.body + [ASCII.cr, ASCII.lf]
        }
        bytes += Array("0\r\n\r\n".utf8)
    } else {
        bytes += request.body
    }
    return bytes
}
