import Glibc

/// The head of the request being parsed, with the framing facts gathered from its fields.
struct PartialHead {
    var method = ""
    var target = ""
    var rawPath = ""
    var path = ""
    var rawQuery: String?
    var version = HTTPVersion.http1_1
    var fields = HTTPRawFields()
    /// Bytes of the head consumed so far, CRLFs and skipped empty lines included.
    var headBytes = 0

    var contentLength: Int?
    var transferEncodingSeen = false
    /// Transfer codings listed across all `Transfer-Encoding` fields: how many, how many were `chunked`, and whether
    /// the last one was (RFC 9112 §6.3: only a final `chunked` delimits the body).
    var transferCodingCount = 0
    var chunkedCodingCount = 0
    var finalCodingIsChunked = false
    var connectionClose = false
    var connectionKeepAlive = false
    var hostCount = 0
    var expectsContinue = false

    var transferEncodingChunked: Bool { transferEncodingSeen && transferCodingCount == 1 && chunkedCodingCount == 1 }

    /// The framing verdict once the head is complete; nil when the request is acceptable.
    func framingRejection(limits: HTTPParserLimits) -> HTTPRejection? {
        if version == .http1_1 && hostCount != 1 {
            return HTTPRejection(.badRequest, hostCount == 0 ? "missing Host header" : "more than one Host header")
        }
        if hostCount > 1 { return HTTPRejection(.badRequest, "more than one Host header") }
        if transferEncodingSeen {
            if contentLength != nil {
                return HTTPRejection(.badRequest, "both Content-Length and Transfer-Encoding are present")
            }
            if version == .http1_0 {
                return HTTPRejection(.badRequest, "Transfer-Encoding is not allowed on an HTTP/1.0 request")
            }
            if transferCodingCount == 0 { return HTTPRejection(.badRequest, "empty Transfer-Encoding header") }
            // RFC 9112 §6.3: unless chunked comes last, the body's end cannot be found: 400, never a guess (which
            // is what lets a front end and this server disagree about where the next request starts).
            if !finalCodingIsChunked {
                return HTTPRejection(.badRequest, "Transfer-Encoding must end with \"chunked\"")
            }
            if chunkedCodingCount > 1 {
                return HTTPRejection(.badRequest, "Transfer-Encoding lists \"chunked\" more than once")
            }
            // Framing is clear, but a coding before chunked (gzip, …) is one this server does not decode.
            if !transferEncodingChunked {
                return HTTPRejection(.notImplemented, "only the transfer coding \"chunked\" (alone) is supported")
            }
        }
        if let contentLength, contentLength > limits.maxBodyBytes {
            return .bodyTooLarge("body of \(contentLength) bytes", limits)
        }
        return nil
    }

    func makeRequest(
        body: [UInt8], remoteAddress: String, client: IPAddress?, clientAddress: String,
        connection: HTTPConnectionContext?, receivedAt: Int64
    ) -> HTTPRequest {
        let keepAlive = !connectionClose && (version == .http1_1 || connectionKeepAlive)
        return HTTPRequest(
            method: method, target: target, rawPath: rawPath, path: path, rawQuery: rawQuery,
            headers: HTTPHeaders(raw: fields), body: body, version: version, keepAlive: keepAlive,
            remoteAddress: remoteAddress, clientAddress: clientAddress, client: client, connection: connection,
            receivedAt: receivedAt)
    }
}

extension HTTPRequestParser {
    /// Parses `method SP request-target SP HTTP-version` (single spaces, RFC 9112 §3) into `head`.
    mutating func parseRequestLine(_ line: UnsafeRawBufferPointer) -> HTTPRejection? {
        var index = 0
        while index < line.count, line[index] != ASCII.space {
            guard ASCII.isTokenByte(line[index]) else {
                return HTTPRejection(.badRequest, "invalid byte 0x\(hex(line[index])) in the method")
            }
            index += 1
        }
        guard index > 0, index < line.count else { return HTTPRejection(.badRequest, "malformed request line") }
        let methodEnd = index
        index += 1
        let targetStart = index
        while index < line.count, line[index] != ASCII.space {
            guard ASCII.isTargetByte(line[index]) else {
                return HTTPRejection(.badRequest, "invalid byte 0x\(hex(line[index])) in the request target")
            }
            index += 1
        }
        guard index > targetStart, index < line.count else {
            return HTTPRejection(.badRequest, "malformed request line: expected method, target and version")
        }
        let targetEnd = index
        let versionBytes = UnsafeRawBufferPointer(rebasing: line[(index + 1)...])
        guard let version = Self.parseVersion(versionBytes) else {
            return HTTPRejection(.badRequest, "malformed HTTP version in the request line")
        }
        guard version == .http1_1 || version == .http1_0 else {
            return HTTPRejection(.versionNotSupported, "\(version) is not supported; use HTTP/1.1")
        }
        head.version = version
        head.method = Self.method(UnsafeRawBufferPointer(rebasing: line[..<methodEnd]))
        let target = UnsafeRawBufferPointer(rebasing: line[targetStart..<targetEnd])
        return parseTarget(target)
    }

    /// The method as a `String`; the common ones as literals, without decoding.
    private static func method(_ bytes: UnsafeRawBufferPointer) -> String {
        if bytes.count == 3 && bytes[0] == 0x47 && bytes[1] == 0x45 && bytes[2] == 0x54 { return "GET" }
        if bytes.count == 4 && bytes[0] == 0x48 && bytes[1] == 0x45 && bytes[2] == 0x41 && bytes[3] == 0x44 {
            return "HEAD"
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Accepts origin-form (`/path?query`), absolute-form (`http://host/path`) and `*` (OPTIONS only).
    private mutating func parseTarget(_ target: UnsafeRawBufferPointer) -> HTTPRejection? {
        let text = String(decoding: target, as: UTF8.self)
        head.target = text
        if target[0] == ASCII.slash {
            // The common case, split here without searching for "://".
            if let question = Self.index(of: ASCII.question, in: target) {
                head.rawPath = String(decoding: UnsafeRawBufferPointer(rebasing: target[..<question]), as: UTF8.self)
                head.rawQuery = String(
                    decoding: UnsafeRawBufferPointer(rebasing: target[(question + 1)...]), as: UTF8.self)
            } else {
                head.rawPath = text
            }
        } else if text == "*" {
            guard head.method == "OPTIONS" else {
                return HTTPRejection(.badRequest, "the target \"*\" is only allowed with OPTIONS")
            }
            head.rawPath = text
        } else if let schemeEnd = text.firstRange(of: "://"), text[..<schemeEnd.lowerBound].allSatisfy(\.isLetter),
            !text[..<schemeEnd.lowerBound].isEmpty
        {
            (head.rawPath, head.rawQuery) = HTTPTarget.split(text)
        } else {
            return HTTPRejection(.badRequest, "request target must start with \"/\" or be an absolute URI")
        }
        if Self.index(of: ASCII.percent, in: target) == nil {
            // Nothing to decode: the path is the raw path (the same string, not a copy).
            head.path = head.rawPath
            return nil
        }
        guard let decoded = HTTPTarget.decodedPath(head.rawPath) else {
            return HTTPRejection(.badRequest, "invalid percent-encoding in the request path")
        }
        head.path = decoded.path
        guard !decoded.encodedSlash else {
            return HTTPRejection(
                .badRequest,
                "the request path has an encoded slash (%2F) inside a segment, which no route has: send \"/\" "
                    + "unencoded between segments, and leave it out of names")
        }
        return nil
    }

    /// The first position of `byte` in `bytes` (`memchr`: the generic `firstIndex(of:)` showed in the profile).
    private static func index(of byte: UInt8, in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress, let found = memchr(base, Int32(byte), bytes.count) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// Parses exactly `HTTP/<digit>.<digit>` (case-sensitive, RFC 9112 §2.3).
    static func parseVersion(_ bytes: UnsafeRawBufferPointer) -> HTTPVersion? {
        guard bytes.count == 8, bytes[0] == 0x48, bytes[1] == 0x54, bytes[2] == 0x54, bytes[3] == 0x50,
            bytes[4] == ASCII.slash, bytes[6] == 0x2E,
            (0x30...0x39).contains(bytes[5]), (0x30...0x39).contains(bytes[7])
        else { return nil }
        return HTTPVersion(major: Int(bytes[5] - ASCII.zero), minor: Int(bytes[7] - ASCII.zero))
    }

    /// Parses one `field-name ":" OWS field-value OWS` line into `head`, interpreting the framing fields.
    mutating func parseHeaderField(_ line: UnsafeRawBufferPointer) -> HTTPRejection? {
        let field: (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
        switch Self.splitField(line) {
        case .failure(let rejection): return rejection
        case .success(let parts): field = parts
        }
        let (name, value) = field
        switch name.count {
        case 4 where ASCII.equalsIgnoringCase(name, "host"):
            head.hostCount += 1
        case 6 where ASCII.equalsIgnoringCase(name, "expect"):
            head.expectsContinue = head.version == .http1_1 && ASCII.equalsIgnoringCase(value, "100-continue")
        case 10 where ASCII.equalsIgnoringCase(name, "connection"):
            HTTPHeaders.forEachListElement(value) { token in
                if ASCII.equalsIgnoringCase(token, "close") { head.connectionClose = true }
                if ASCII.equalsIgnoringCase(token, "keep-alive") { head.connectionKeepAlive = true }
            }
        case 14 where ASCII.equalsIgnoringCase(name, "content-length"):
            guard head.contentLength == nil else {
                return HTTPRejection(.badRequest, "more than one Content-Length header")
            }
            guard let length = Self.parseContentLength(value) else {
                return HTTPRejection(.badRequest, "invalid Content-Length; expected one decimal number")
            }
            head.contentLength = length
        case 17 where ASCII.equalsIgnoringCase(name, "transfer-encoding"):
            head.transferEncodingSeen = true
            HTTPHeaders.forEachListElement(value) { coding in
                let chunked = ASCII.equalsIgnoringCase(coding, "chunked")
                head.transferCodingCount += 1
                if chunked { head.chunkedCodingCount += 1 }
                head.finalCodingIsChunked = chunked
            }
        default:
            break
        }
        head.fields.append(name: name, value: value)
        return nil
    }

    /// Splits and validates a field line; shared by header and trailer fields.
    static func splitField(
        _ line: UnsafeRawBufferPointer
    ) -> Result<(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer), HTTPRejection> {
        if ASCII.isWhitespace(line[0]) {
            return .failure(HTTPRejection(.badRequest, "obsolete line folding (a line starting with whitespace)"))
        }
        var colon = 0
        while colon < line.count, line[colon] != ASCII.colon {
            guard ASCII.isTokenByte(line[colon]) else {
                let what =
                    ASCII.isWhitespace(line[colon]) ? "whitespace before the colon" : "byte 0x\(hex(line[colon]))"
                return .failure(HTTPRejection(.badRequest, "invalid field name: \(what)"))
            }
            colon += 1
        }
        guard colon < line.count, colon > 0 else {
            return .failure(HTTPRejection(.badRequest, "header line without a field name and colon"))
        }
        var start = colon + 1
        var end = line.count
        while start < end, ASCII.isWhitespace(line[start]) { start += 1 }
        while end > start, ASCII.isWhitespace(line[end - 1]) { end -= 1 }
        let valueBytes = UnsafeRawBufferPointer(rebasing: line[start..<end])
        if !ASCII.allFieldValueBytes(valueBytes), let bad = valueBytes.first(where: { !ASCII.isFieldValueByte($0) }) {
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
            return .failure(HTTPRejection(.badRequest, "invalid byte 0x\(hex(bad)) in the \(name) value"))
        }
        return .success(
            (UnsafeRawBufferPointer(rebasing: line[..<colon]), UnsafeRawBufferPointer(rebasing: line[start..<end])))
    }

    /// `1*DIGIT` without sign, list or whitespace; nil if invalid or absurdly large.
    static func parseContentLength(_ value: UnsafeRawBufferPointer) -> Int? {
        guard !value.isEmpty, value.count <= 18 else { return nil }
        var result = 0
        for byte in value {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            result = result * 10 + Int(byte - ASCII.zero)
        }
        return result
    }
}

/// Two uppercase hex digits, for error messages about bad bytes.
func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}
