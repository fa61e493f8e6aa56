/// An HTTP protocol version as sent on a request line.
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    /// The major version digit.
    public var major: Int
    /// The minor version digit.
    public var minor: Int

    /// A version from its two digits.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    // The names swift-nio and async-http-client give these versions, which readers of server code know.
    /// HTTP/1.0: connections close after each response unless the client asks for `keep-alive`.
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    // swift-format-ignore: AlwaysUseLowerCamelCase
    /// HTTP/1.1: connections persist unless either side sends `Connection: close`.
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    /// The version as written on the wire, e.g. `HTTP/1.1`.
    public var description: String { "HTTP/\(major).\(minor)" }
}

/// A complete HTTP request: head and body, as the parser produced it.
///
/// A value type over one immutable box: the engine and the application pass a request along several times per
/// request (parser event, dispatch, handler, exchange), and a copy is then one reference-count operation rather
/// than one per part.
public struct HTTPRequest: Sendable {
    /// The request's parts, never changed after the parser or `init` made them.
    // Visible to inlinable code so that the application's reads of a request's parts are plain loads (each was a
    // call across the module boundary on every request).
    @usableFromInline
    final class Storage: Sendable {
        @usableFromInline let method: String
        @usableFromInline let target: String
        @usableFromInline let rawPath: String
        @usableFromInline let path: String
        @usableFromInline let rawQuery: String?
        @usableFromInline let headers: HTTPHeaders
        @usableFromInline let body: [UInt8]
        @usableFromInline let version: HTTPVersion
        @usableFromInline let keepAlive: Bool
        @usableFromInline let remoteAddress: String
        @usableFromInline let clientAddress: String
        /// `clientAddress` as an address, for the engine's count of connections per client.
        let client: IPAddress?
        @usableFromInline let connection: HTTPConnectionContext?
        @usableFromInline let receivedAt: Int64

        init(
            method: String, target: String, rawPath: String, path: String, rawQuery: String?, headers: HTTPHeaders,
            body: [UInt8], version: HTTPVersion, keepAlive: Bool, remoteAddress: String, clientAddress: String,
            client: IPAddress?, connection: HTTPConnectionContext?, receivedAt: Int64
        ) {
            self.method = method
            self.target = target
            self.rawPath = rawPath
            self.path = path
            self.rawQuery = rawQuery
            self.headers = headers
            self.body = body
            self.version = version
            self.keepAlive = keepAlive
            self.remoteAddress = remoteAddress
            self.clientAddress = clientAddress
            self.client = client
            self.connection = connection
            self.receivedAt = receivedAt
        }
    }

    @usableFromInline let storage: Storage

    /// The method, e.g. `GET` (case-sensitive, as sent).
    @inlinable public var method: String { storage.method }
    /// The request target exactly as sent, e.g. `/v1/sets/ios%2Dprod?wait=30`.
    @inlinable public var target: String { storage.target }
    /// The path part of the target, still percent-encoded (`*` for `OPTIONS *`).
    @inlinable public var rawPath: String { storage.rawPath }
    /// The path part of the target, percent-decoded (the parser rejects targets that do not decode to UTF-8).
    @inlinable public var path: String { storage.path }
    /// The query part of the target after `?`, still percent-encoded; nil when the target has no `?`.
    @inlinable public var rawQuery: String? { storage.rawQuery }
    /// The header fields in wire order.
    @inlinable public var headers: HTTPHeaders { storage.headers }
    /// The body, de-chunked; empty when the request has none.
    @inlinable public var body: [UInt8] { storage.body }
    /// The protocol version of the request line.
    @inlinable public var version: HTTPVersion { storage.version }
    /// Whether the connection may stay open after the response (per version and `Connection`).
    @inlinable public var keepAlive: Bool { storage.keepAlive }
    /// The peer's address, e.g. `127.0.0.1:53142` or `[::1]:53142`; empty when not from a socket.
    @inlinable public var remoteAddress: String { storage.remoteAddress }
    /// The client's IP address without port, e.g. `192.0.2.1` or `2001:db8::1`: the peer's, or, when the peer is a
    /// trusted proxy (`HTTPServerConfiguration.trustedProxies`), the client its `X-Forwarded-For` names. What to
    /// key rate limits on and to log. Empty when not from a socket.
    @inlinable public var clientAddress: String { storage.clientAddress }
    /// The connection the request arrived on, shared by every request on it; nil when not from a socket.
    @inlinable public var connection: HTTPConnectionContext? { storage.connection }
    /// When the engine read the request's last bytes (`CLOCK_MONOTONIC` nanoseconds); 0 when not from a socket.
    /// The application times its answer from here, so it needs no clock reading of its own at the start.
    @inlinable public var receivedAt: Int64 { storage.receivedAt }

    /// Now, on the clock `receivedAt` is read from (`CLOCK_MONOTONIC` nanoseconds).
    public static func monotonicNow() -> Int64 { Socket.monotonicNanoseconds() }

    /// A request from its parts; `path` and `rawQuery` are derived from `target`, and `clientAddress`, unless
    /// given, from `remoteAddress` without its port (as from a peer that is not a trusted proxy).
    public init(
        method: String,
        target: String,
        headers: HTTPHeaders = [:],
        body: [UInt8] = [],
        version: HTTPVersion = .http1_1,
        keepAlive: Bool = true,
        remoteAddress: String = "",
        clientAddress: String? = nil,
        connection: HTTPConnectionContext? = nil
    ) {
        let parts = HTTPTarget.split(target)
        let clientAddress = clientAddress ?? String(RequestOrigin.host(of: remoteAddress))
        storage = Storage(
            method: method, target: target, rawPath: parts.rawPath,
            path: HTTPTarget.decodedPath(parts.rawPath)?.path ?? parts.rawPath,
            rawQuery: parts.rawQuery, headers: headers, body: body, version: version, keepAlive: keepAlive,
            remoteAddress: remoteAddress, clientAddress: clientAddress, client: IPAddress(clientAddress),
            connection: connection, receivedAt: 0)
    }

    /// Memberwise construction for the parser, which has already split and decoded the target.
    init(
        method: String, target: String, rawPath: String, path: String, rawQuery: String?,
        headers: HTTPHeaders, body: [UInt8], version: HTTPVersion, keepAlive: Bool, remoteAddress: String,
        clientAddress: String, client: IPAddress?, connection: HTTPConnectionContext?, receivedAt: Int64
    ) {
        storage = Storage(
            method: method, target: target, rawPath: rawPath, path: path, rawQuery: rawQuery, headers: headers,
            body: body, version: version, keepAlive: keepAlive, remoteAddress: remoteAddress,
            clientAddress: clientAddress, client: client, connection: connection, receivedAt: receivedAt)
    }

    /// The decoded value of the first query parameter with this name (`+` decodes to a space), or nil.
    ///
    /// Parsed on demand, so a request whose handler never asks pays nothing for its query.
    public func query(_ name: String) -> String? {
        guard let rawQuery else { return nil }
        for item in rawQuery.split(separator: "&", omittingEmptySubsequences: true) {
            let (key, value) = Self.splitQueryItem(item)
            if HTTPTarget.percentDecoded(key, plusAsSpace: true) == name {
                return HTTPTarget.percentDecoded(value, plusAsSpace: true) ?? String(value)
            }
        }
        return nil
    }

    /// Every query parameter, decoded, in order; items that do not decode are kept raw.
    public var queryItems: [(name: String, value: String)] {
        guard let rawQuery else { return [] }
        return rawQuery.split(separator: "&", omittingEmptySubsequences: true).map { item in
            let (key, value) = Self.splitQueryItem(item)
            return (
                HTTPTarget.percentDecoded(key, plusAsSpace: true) ?? String(key),
                HTTPTarget.percentDecoded(value, plusAsSpace: true) ?? String(value)
            )
        }
    }

    private static func splitQueryItem(_ item: Substring) -> (Substring, Substring) {
        guard let equals = item.firstIndex(of: "=") else { return (item, item[item.endIndex...]) }
        return (item[..<equals], item[item.index(after: equals)...])
    }
}

/// Request-target helpers shared by the parser and `HTTPRequest`.
enum HTTPTarget {
    /// Splits an origin-form or absolute-form target into its raw path and raw query.
    static func split(_ target: String) -> (rawPath: String, rawQuery: String?) {
        var pathPart = Substring(target)
        if !target.hasPrefix("/"), let scheme = target.firstRange(of: "://") {
            // absolute-form (RFC 9112 §3.2.2): the path starts at the first "/" after the authority.
            let afterAuthority = target[scheme.upperBound...]
            pathPart = afterAuthority.firstIndex(where: { $0 == "/" || $0 == "?" }).map { afterAuthority[$0...] } ?? ""
        }
        guard let question = pathPart.firstIndex(of: "?") else {
            return (pathPart.isEmpty ? "/" : String(pathPart), nil)
        }
        let path = pathPart[..<question]
        return (path.isEmpty ? "/" : String(path), String(pathPart[pathPart.index(after: question)...]))
    }

    /// Percent-decodes a request path segment by segment: an encoded slash (`%2F`) stays encoded, so it never
    /// becomes a separator that a proxy's rule for a path prefix did not see; `encodedSlash` says one was there (the
    /// parser refuses such a request). Nil if an escape is malformed or the result is not valid UTF-8.
    static func decodedPath(_ rawPath: String) -> (path: String, encodedSlash: Bool)? {
        var encodedSlash = false
        let path = percentDecoded(rawPath, plusAsSpace: false) { byte in
            guard byte == ASCII.slash else { return nil }
            encodedSlash = true
            return Array("%2F".utf8)
        }
        return path.map { ($0, encodedSlash) }
    }

    /// Percent-decodes `text`; nil if an escape is malformed or the result is not valid UTF-8. `keep` may answer
    /// the bytes to write instead of a decoded byte.
    static func percentDecoded(
        _ text: some StringProtocol, plusAsSpace: Bool, keep: (UInt8) -> [UInt8]? = { _ in nil }
    ) -> String? {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == ASCII.percent || (plusAsSpace && $0 == ASCII.plus) }) else {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == ASCII.percent {
                guard let high = iterator.next().flatMap(ASCII.hexValue),
                    let low = iterator.next().flatMap(ASCII.hexValue)
                else { return nil }
                let decoded = UInt8(high << 4 | low)
                if let kept = keep(decoded) {
                    bytes += kept
                } else {
                    bytes.append(decoded)
                }
            } else if plusAsSpace && byte == ASCII.plus {
                bytes.append(ASCII.space)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
