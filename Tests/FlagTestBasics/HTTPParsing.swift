import FlagHTTP

/// What a parser run produced, in a form tests can compare.
public enum ParsedItem: Equatable, Sendable, CustomStringConvertible {
    case request(method: String, target: String, body: [UInt8])
    case continueExpected
    case rejected(status: Int, code: String)

    public var description: String {
        switch self {
        case .request(let method, let target, let body): return "\(method) \(target) [\(body.count) bytes]"
        case .continueExpected: return "100-continue"
        case .rejected(let status, let code): return "rejected \(status) \(code)"
        }
    }
}

/// Feeds `input` to a fresh parser in pieces of `pieceSize` bytes (the whole input when nil), draining after each.
public func parse(
    _ input: [UInt8], pieceSize: Int? = nil, limits: HTTPParserLimits = HTTPParserLimits()
) -> (items: [ParsedItem], requests: [HTTPRequest], rejection: HTTPRejection?) {
    var parser = HTTPRequestParser(limits: limits)
    var items: [ParsedItem] = []
    var requests: [HTTPRequest] = []
    var rejection: HTTPRejection?
    let size = max(1, pieceSize ?? input.count)
    var offset = 0
    repeat {
        let end = min(input.count, offset + size)
        parser.append(input[offset..<end])
        offset = end
        while let event = parser.next() {
            switch event {
            case .request(let request):
                requests.append(request)
                items.append(.request(method: request.method, target: request.target, body: request.body))
            case .continueExpected:
                items.append(.continueExpected)
            case .rejected(let value):
                rejection = value
                items.append(.rejected(status: value.status, code: value.code))
            }
        }
    } while offset < input.count
    return (items, requests, rejection)
}

public func parse(_ text: String, pieceSize: Int? = nil, limits: HTTPParserLimits = HTTPParserLimits())
    -> (items: [ParsedItem], requests: [HTTPRequest], rejection: HTTPRejection?)
{
    parse(Array(text.utf8), pieceSize: pieceSize, limits: limits)
}

/// The status a request is rejected with, or nil if it parses.
public func rejectionStatus(_ text: String, limits: HTTPParserLimits = HTTPParserLimits()) -> Int? {
    parse(text, limits: limits).rejection?.status
}

/// A request over one of the parser's limits, and how the parser must refuse it.
public struct LimitCase: Sendable, CustomStringConvertible {
    public let input: String
    public let limits: HTTPParserLimits
    public let limit: HTTPLimit
    public let status: Int
    public var description: String { limit.rawValue }
}

extension LimitCase {
    /// Small limits, so that a short request passes each.
    public static let small = HTTPParserLimits(
        maxHeaderBytes: 512, maxHeaderCount: 4, maxRequestLineBytes: 64, maxBodyBytes: 10, maxChunkLineBytes: 8)

    /// One request over each parser limit, on an OFREP path where the request line is complete.
    public static let overEachLimit: [LimitCase] = [
        LimitCase(
            input: "POST /ofrep/v1/evaluate/flags/nc HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\n",
            limits: small, limit: .maxBodyBytes, status: 413),
        LimitCase(
            input: "POST /ofrep/v1/evaluate/flags/nc HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n",
            limits: small, limit: .maxBodyBytes, status: 413),
        LimitCase(
            input:
                "POST /ofrep/v1/evaluate/flags/nc HTTP/1.1\r\nHost: t\r\nX: \(String(repeating: "a", count: 600))\r\n",
            limits: small, limit: .maxHeaderBytes, status: 431),
        LimitCase(
            input: "POST /ofrep/v1/evaluate/flags/nc HTTP/1.1\r\nHost: t\r\n"
                + (1...4).map { "X-\($0): v\r\n" }.joined(),
            limits: small, limit: .maxHeaderCount, status: 431),
        LimitCase(
            input: "POST /ofrep/v1/evaluate/flags/nc HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "1;ext=long\r\n",
            limits: small, limit: .maxChunkLineBytes, status: 400),
        LimitCase(
            input: "GET /\(String(repeating: "a", count: 80)) HTTP/1.1\r\n", limits: small,
            limit: .maxRequestLineBytes, status: 414),
    ]
}
