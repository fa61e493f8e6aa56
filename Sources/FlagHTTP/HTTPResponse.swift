/// An HTTP response as a handler gives it: status, header fields and body.
///
/// The engine adds `Date` (unless given), `Content-Length` and `Connection`; those three and
/// `Transfer-Encoding` are framing and are never copied from `headers`, except a `Connection: close`, which is
/// honoured by closing the connection after this response.
public struct HTTPResponse: Sendable {
    /// The status code, e.g. 200.
    public var status: Int {
        didSet { prepared = nil }
    }
    /// Header fields in the order they are written.
    public var headers: HTTPHeaders {
        didSet { prepared = nil }
    }
    /// The body; not sent for `HEAD` requests and for 1xx, 204 and 304 responses.
    public var body: [UInt8] {
        didSet { prepared = nil }
    }

    /// A response from its parts.
    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The status line and fields already encoded, for a response served many times; dropped on any change.
    var prepared: PreparedHead?

    /// A response whose head is encoded once, now, for answers served many times (each version's 200 and 304):
    /// serving it copies the encoded head around the loop's `Date` line instead of encoding every field again, and
    /// sends the body from its own buffer without copying it.
    public static func prepared(status: Int, headers: HTTPHeaders, body: [UInt8] = []) -> HTTPResponse {
        var response = HTTPResponse(status: status, headers: headers, body: body)
        response.prepared = HTTPResponseEncoder.prepare(response)
        return response
    }

    /// The JSON error body of the spec: `{"error":{"code":…,"message":…,"path":…}}` with `Content-Type` set.
    public static func jsonError(status: Int, code: String, message: String, path: String? = nil) -> HTTPResponse {
        var json = #"{"error":{"code":"#
        JSONText.appendQuoted(code, to: &json)
        json += #","message":"#
        JSONText.appendQuoted(message, to: &json)
        json += #","path":"#
        if let path {
            JSONText.appendQuoted(path, to: &json)
        } else {
            json += "null"
        }
        json += "}}"
        return HTTPResponse(
            status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: Array(json.utf8))
    }

    /// The standard reason phrase of a status code ("Unknown" for codes without one).
    public static func reasonPhrase(for status: Int) -> StaticString {
        switch status {
        case 100: return "Continue"
        case 101: return "Switching Protocols"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 406: return "Not Acceptable"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 417: return "Expectation Failed"
        case 422: return "Unprocessable Content"
        case 428: return "Precondition Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        default: return "Unknown"
        }
    }
}

/// Minimal JSON string quoting for the error bodies the engine writes itself.
enum JSONText {
    /// Appends `text` as a quoted JSON string, escaping quotes, backslashes and control characters.
    static func appendQuoted(_ text: String, to json: inout String) {
        json += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case "\n": json += "\\n"
            case "\r": json += "\\r"
            case "\t": json += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                json += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                json.unicodeScalars.append(scalar)
            }
        }
        json += "\""
    }
}
