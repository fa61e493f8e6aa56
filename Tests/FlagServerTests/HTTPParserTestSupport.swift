@testable import FlagServer

/// What a parser run produced, in a form tests can compare.
enum ParsedItem: Equatable, CustomStringConvertible {
    case request(method: String, target: String, body: [UInt8])
    case continueExpected
    case rejected(status: Int, code: String)

    var description: String {
        switch self {
        case .request(let method, let target, let body): return "\(method) \(target) [\(body.count) bytes]"
        case .continueExpected: return "100-continue"
        case .rejected(let status, let code): return "rejected \(status) \(code)"
        }
    }
}

/// Feeds `input` to a fresh parser in pieces of `pieceSize` bytes (the whole input when nil), draining after each.
func parse(
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

func parse(_ text: String, pieceSize: Int? = nil, limits: HTTPParserLimits = HTTPParserLimits())
    -> (items: [ParsedItem], requests: [HTTPRequest], rejection: HTTPRejection?)
{
    parse(Array(text.utf8), pieceSize: pieceSize, limits: limits)
}

/// The status a request is rejected with, or nil if it parses.
func rejectionStatus(_ text: String, limits: HTTPParserLimits = HTTPParserLimits()) -> Int? {
    parse(text, limits: limits).rejection?.status
}
