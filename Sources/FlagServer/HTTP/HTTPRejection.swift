/// Why the parser refused a request: the status and JSON error to answer with, after which the connection closes.
public struct HTTPRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status to answer with (400, 413, 414, 431, 501 or 505).
    public let status: Int
    /// The machine-readable error code written into the JSON body, e.g. `header_fields_too_large`.
    public let code: String
    /// What was wrong and where, for people.
    public let message: String

    init(_ kind: Kind, _ message: String) {
        self.status = kind.status
        self.code = kind.rawValue
        self.message = message
    }

    /// The JSON error response for this rejection.
    public var response: HTTPResponse {
        HTTPResponse.jsonError(status: status, code: code, message: message)
    }

    /// A human-readable summary with status and code.
    public var description: String { "\(status) \(code): \(message)" }

    /// The rejection classes; the raw value is the error code on the wire.
    enum Kind: String {
        case badRequest = "bad_request"
        case payloadTooLarge = "payload_too_large"
        case uriTooLong = "uri_too_long"
        case headerFieldsTooLarge = "header_fields_too_large"
        case notImplemented = "not_implemented"
        case versionNotSupported = "http_version_not_supported"

        var status: Int {
            switch self {
            case .badRequest: return 400
            case .payloadTooLarge: return 413
            case .uriTooLong: return 414
            case .headerFieldsTooLarge: return 431
            case .notImplemented: return 501
            case .versionNotSupported: return 505
            }
        }
    }
}
