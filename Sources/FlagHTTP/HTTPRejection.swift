/// Why the engine refused a request before any route saw it: the status and error to answer with, after which the
/// connection closes.
///
/// What the client is told is decided by the configuration's `renderRejection`, so that an application can answer
/// in the shape of the route the request was for and name its own setting behind a `limit`; `response` is the
/// engine's own, generic rendering.
public struct HTTPRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status to answer with (400, 413, 414, 431, 501, 503 or 505).
    public let status: Int
    /// The machine-readable error code of the engine's JSON body, e.g. `header_fields_too_large`.
    public let code: String
    /// What was wrong and where, for people.
    public let message: String
    /// The engine limit the request or connection went over, when that is why it was refused; nil for input that
    /// is malformed whatever the limits.
    public let limit: HTTPLimit?
    /// The request's decoded path, when its request line had been read before the refusal.
    public internal(set) var path: String?

    init(_ kind: Kind, _ message: String, limit: HTTPLimit? = nil) {
        self.status = kind.status
        self.code = kind.rawValue
        self.message = message
        self.limit = limit
    }

    /// The engine's JSON error response for this rejection, `{"error":{"code","message","path":null}}`.
    public var response: HTTPResponse {
        HTTPResponse.jsonError(status: status, code: code, message: message)
    }

    /// A human-readable summary with status and code.
    public var description: String { "\(status) \(code): \(message)" }

    /// `what` (`request head`, `trailer section`) is larger than `maxHeaderBytes`: 431.
    static func headTooLarge(_ what: String, _ limits: HTTPParserLimits) -> HTTPRejection {
        exceeding(.maxHeaderBytes, limits.maxHeaderBytes, what, .headerFieldsTooLarge)
    }

    /// More `header` or `trailer` fields than `maxHeaderCount`: 431.
    static func tooManyFields(_ what: String, _ limits: HTTPParserLimits) -> HTTPRejection {
        HTTPRejection(
            .headerFieldsTooLarge, "more than \(limits.maxHeaderCount) \(what) fields", limit: .maxHeaderCount)
    }

    /// A request line longer than `maxRequestLineBytes`: 414.
    static func requestLineTooLong(_ limits: HTTPParserLimits) -> HTTPRejection {
        exceeding(.maxRequestLineBytes, limits.maxRequestLineBytes, "request line", .uriTooLong)
    }

    /// `what` (`body of N bytes`, `chunked body`) is larger than `maxBodyBytes`: 413.
    static func bodyTooLarge(_ what: String, _ limits: HTTPParserLimits) -> HTTPRejection {
        exceeding(.maxBodyBytes, limits.maxBodyBytes, what, .payloadTooLarge)
    }

    /// A chunk-size line longer than `maxChunkLineBytes`: 400.
    static func chunkLineTooLong(_ limits: HTTPParserLimits) -> HTTPRejection {
        exceeding(.maxChunkLineBytes, limits.maxChunkLineBytes, "chunk-size line", .badRequest)
    }

    /// `what` is larger than `bytes`, the value of `limit`.
    private static func exceeding(_ limit: HTTPLimit, _ bytes: Int, _ what: String, _ kind: Kind) -> HTTPRejection {
        HTTPRejection(kind, "\(what) exceeds the limit of \(bytes) bytes", limit: limit)
    }

    /// A connection over `maxConnections`: 503.
    static func overCapacity() -> HTTPRejection {
        HTTPRejection(.overloaded, "too many open connections; retry later", limit: .maxConnections)
    }

    /// A connection whose client address has `limit` connections open already (`maxConnectionsPerAddress`): 503.
    static func overCapacityPerAddress(_ limit: Int) -> HTTPRejection {
        HTTPRejection(
            .overloaded, "too many open connections from one address (at most \(limit)); retry later",
            limit: .maxConnectionsPerAddress)
    }

    /// The reason `HTTPServerMetrics.rejections` counts this rejection under: the error code, or for a connection
    /// cap the cap's own reason, since both answer `overloaded`.
    var metricsReason: String {
        switch limit {
        case .maxConnections?: "connection_limit"
        case .maxConnectionsPerAddress?: "connection_limit_per_address"
        default: code
        }
    }

    /// Whether the client is refused for load that passes, and so is told when to try again (`Retry-After`).
    var isRetryable: Bool {
        limit == .maxConnections || limit == .maxConnectionsPerAddress
    }

    /// The rejection classes; the raw value is the error code on the wire.
    enum Kind: String {
        case badRequest = "bad_request"
        case payloadTooLarge = "payload_too_large"
        case uriTooLong = "uri_too_long"
        case headerFieldsTooLarge = "header_fields_too_large"
        case notImplemented = "not_implemented"
        case overloaded = "overloaded"
        case versionNotSupported = "http_version_not_supported"

        var status: Int {
            switch self {
            case .badRequest: return 400
            case .payloadTooLarge: return 413
            case .uriTooLong: return 414
            case .headerFieldsTooLarge: return 431
            case .notImplemented: return 501
            case .overloaded: return 503
            case .versionNotSupported: return 505
            }
        }
    }
}

/// A limit the engine enforces before a route is known; the raw value is its property in `HTTPParserLimits` or
/// `HTTPServerConfiguration`.
public enum HTTPLimit: String, Sendable, CaseIterable {
    /// `HTTPParserLimits.maxHeaderBytes`: the request head (and a chunked body's trailer section), in bytes.
    case maxHeaderBytes
    /// `HTTPParserLimits.maxHeaderCount`: header (or trailer) fields per request.
    case maxHeaderCount
    /// `HTTPParserLimits.maxRequestLineBytes`: the request line.
    case maxRequestLineBytes
    /// `HTTPParserLimits.maxBodyBytes`: the body after de-chunking.
    case maxBodyBytes
    /// `HTTPParserLimits.maxChunkLineBytes`: one chunk-size line of a chunked body.
    case maxChunkLineBytes
    /// `HTTPServerConfiguration.maxConnections`: open connections.
    case maxConnections
    /// `HTTPServerConfiguration.maxConnectionsPerAddress`: open connections per client address.
    case maxConnectionsPerAddress
}

/// Renders what the engine answers before a route is known (given in `HTTPServerConfiguration.renderRejection`).
/// Runs on a loop thread, so it must answer at once; the engine adds `Connection: close` and closes afterwards.
public typealias HTTPRejectionRenderer = @Sendable (HTTPRejection) -> HTTPResponse
