/// Serializes response heads (and small bodies) into wire bytes, adding the framing fields.
enum HTTPResponseEncoder {
    /// Bodies up to this size are copied behind the head so the response is one contiguous buffer.
    static let inlineBodyLimit = 16 * 1024

    /// How the response relates to its request and connection.
    struct Context {
        var isHeadRequest: Bool
        var version: HTTPVersion
        var close: Bool
    }

    /// The head, with the body appended when small; the body as its own chunk when large (written with `writev`)
    /// or when the response is prepared (its body is shared, so sending it from its own buffer costs no copy).
    static func encode(_ response: HTTPResponse, _ context: Context, date: [UInt8]) -> (head: [UInt8], body: [UInt8]?) {
        let sendsBody = !context.isHeadRequest && allowsBody(response.status) && !response.body.isEmpty
        if let prepared = response.prepared {
            let body = sendsBody ? response.body : nil
            if !prepared.hasDate, !context.close, context.version == .http1_1 {
                var head: [UInt8] = []
                head.reserveCapacity(prepared.bytes.count + date.count + prepared.keepAliveFraming.count)
                head.append(contentsOf: prepared.bytes)
                head.append(contentsOf: date)
                head.append(contentsOf: prepared.keepAliveFraming)
                return (head, body)
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(prepared.bytes.count + date.count + 64)
            bytes.append(contentsOf: prepared.bytes)
            if !prepared.hasDate { bytes.append(contentsOf: date) }
            appendFraming(response, context, contentLength: allowsBody(response.status), to: &bytes)
            return (bytes, body)
        }
        let inline = sendsBody && response.body.count <= inlineBodyLimit
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160 + response.headers.count * 48 + (inline ? response.body.count : 0))
        appendHead(response, context, date: date, contentLength: allowsBody(response.status), to: &bytes)
        if inline { bytes.append(contentsOf: response.body) }
        return (bytes, sendsBody && !inline ? response.body : nil)
    }

    /// The status line and fields of `response`, encoded once for `HTTPResponse.prepared`.
    static func prepare(_ response: HTTPResponse) -> PreparedHead {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + response.headers.count * 48)
        let hasDate = appendStatusAndFields(response, to: &bytes)
        var framing: [UInt8] = []
        let keepAlive = Context(isHeadRequest: false, version: .http1_1, close: false)
        appendFraming(response, keepAlive, contentLength: allowsBody(response.status), to: &framing)
        return PreparedHead(
            bytes: bytes, keepAliveFraming: framing, hasDate: hasDate, requestsClose: fieldsRequestClose(response))
    }

    /// The head of a streamed response: no `Content-Length`, and `Connection: close` because the body ends with it.
    static func encodeStreamHead(_ response: HTTPResponse, version: HTTPVersion, date: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160 + response.headers.count * 48)
        let context = Context(isHeadRequest: false, version: version, close: true)
        appendHead(response, context, date: date, contentLength: false, to: &bytes)
        return bytes
    }

    /// Whether the handler asked for the connection to close with `Connection: close`.
    static func requestsClose(_ response: HTTPResponse) -> Bool {
        if let prepared = response.prepared { return prepared.requestsClose }
        return fieldsRequestClose(response)
    }

    private static func fieldsRequestClose(_ response: HTTPResponse) -> Bool {
        for field in response.headers.fields where field.name.utf8.count == 10 {
            if HTTPHeaders.namesEqual(field.name, "connection") {
                var closes = false
                field.value.utf8.withContiguousStorageIfAvailable { value in
                    HTTPHeaders.forEachListElement(UnsafeRawBufferPointer(value)) { token in
                        if ASCII.equalsIgnoringCase(token, "close") { closes = true }
                    }
                }
                if closes { return true }
            }
        }
        return false
    }

    /// 1xx, 204 and 304 responses never carry a body or `Content-Length` (RFC 9110 §8.6).
    static func allowsBody(_ status: Int) -> Bool {
        !(status < 200 || status == 204 || status == 304)
    }

    private static func appendHead(
        _ response: HTTPResponse, _ context: Context, date: [UInt8], contentLength: Bool, to bytes: inout [UInt8]
    ) {
        if !appendStatusAndFields(response, to: &bytes) { bytes.append(contentsOf: date) }
        appendFraming(response, context, contentLength: contentLength, to: &bytes)
    }

    /// The status line and the handler's fields (framing fields left out); returns whether a `Date` was among them.
    private static func appendStatusAndFields(_ response: HTTPResponse, to bytes: inout [UInt8]) -> Bool {
        // A status outside 100...999 cannot be written; it is a handler bug, answered as 500.
        let status = (100...999).contains(response.status) ? response.status : 500
        appendStatic("HTTP/1.1 ", to: &bytes)
        appendDecimal(status, to: &bytes)
        bytes.append(ASCII.space)
        appendStatic(HTTPResponse.reasonPhrase(for: status), to: &bytes)
        appendStatic("\r\n", to: &bytes)
        var hasDate = false
        for field in response.headers.fields {
            switch framingField(field.name) {
            case .framing: continue
            case .date: hasDate = true
            case .other: break
            }
            guard appendName(field.name, to: &bytes) else { continue }
            appendStatic(": ", to: &bytes)
            appendValue(field.value, to: &bytes)
            appendStatic("\r\n", to: &bytes)
        }
        return hasDate
    }

    /// `Content-Length`, `Connection` and the blank line that ends the head.
    private static func appendFraming(
        _ response: HTTPResponse, _ context: Context, contentLength: Bool, to bytes: inout [UInt8]
    ) {
        if contentLength {
            appendStatic("Content-Length: ", to: &bytes)
            appendDecimal(response.body.count, to: &bytes)
            appendStatic("\r\n", to: &bytes)
        }
        if context.close {
            appendStatic("Connection: close\r\n", to: &bytes)
        } else if context.version == .http1_0 {
            appendStatic("Connection: keep-alive\r\n", to: &bytes)
        }
        appendStatic("\r\n", to: &bytes)
    }

    private enum FieldKind { case framing, date, other }

    private static func framingField(_ name: String) -> FieldKind {
        switch name.utf8.count {
        case 4: return HTTPHeaders.namesEqual(name, "date") ? .date : .other
        case 10: return HTTPHeaders.namesEqual(name, "connection") ? .framing : .other
        case 14: return HTTPHeaders.namesEqual(name, "content-length") ? .framing : .other
        case 17: return HTTPHeaders.namesEqual(name, "transfer-encoding") ? .framing : .other
        default: return .other
        }
    }

    /// Appends a field name if it is a valid token; a handler bug must not be able to split the response.
    private static func appendName(_ name: String, to bytes: inout [UInt8]) -> Bool {
        guard !name.isEmpty, name.utf8.allSatisfy(ASCII.isTokenByte) else { return false }
        bytes.append(contentsOf: name.utf8)
        return true
    }

    /// Appends a field value with CR, LF and other controls replaced by spaces (no response splitting).
    private static func appendValue(_ value: String, to bytes: inout [UInt8]) {
        if value.utf8.allSatisfy(ASCII.isFieldValueByte) {
            bytes.append(contentsOf: value.utf8)
        } else {
            for byte in value.utf8 { bytes.append(ASCII.isFieldValueByte(byte) ? byte : ASCII.space) }
        }
    }
}

/// The encoded status line and fields of a prepared response (see `HTTPResponse.prepared`).
final class PreparedHead: Sendable {
    let bytes: [UInt8]
    /// `Content-Length` and the blank line, as a kept-alive HTTP/1.1 connection (the usual one) frames the response.
    let keepAliveFraming: [UInt8]
    /// Whether the fields include a `Date`, so the engine does not add its own.
    let hasDate: Bool
    /// Whether the fields include `Connection: close`.
    let requestsClose: Bool

    init(bytes: [UInt8], keepAliveFraming: [UInt8], hasDate: Bool, requestsClose: Bool) {
        self.bytes = bytes
        self.keepAliveFraming = keepAliveFraming
        self.hasDate = hasDate
        self.requestsClose = requestsClose
    }
}
