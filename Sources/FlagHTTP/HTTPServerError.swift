import Glibc

/// Why the server could not start: what failed, where, and the system's reason.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        case invalidAddress
        case socketFailed
        case alreadyStarted
        case threadFailed
    }

    private let code: Code
    /// What went wrong and how to remedy it.
    public let message: String
    /// The `errno` of the failing call, if any.
    public let systemError: Int32?

    private init(_ code: Code, _ message: String, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.systemError = errno
    }

    /// Whether starting failed because the address could not be bound (in use, no permission).
    public var isAddressUnavailable: Bool {
        code == .socketFailed && (systemError == EADDRINUSE || systemError == EACCES || systemError == EADDRNOTAVAIL)
    }

    /// The message, with the system's description of `errno` when there is one.
    public var description: String {
        guard let systemError else { return message }
        return "\(message): \(errnoDescription(systemError)) (errno \(systemError))"
    }

    static func invalidAddress(_ host: String, _ port: Int) -> HTTPServerError {
        HTTPServerError(
            .invalidAddress,
            "cannot listen on \(host):\(port): expected an IPv4 or IPv6 literal or "
                + "localhost, and a port in 0...65535")
    }

    static func socket(_ operation: String, _ host: String, _ port: Int, errno: Int32) -> HTTPServerError {
        HTTPServerError(.socketFailed, "\(operation) failed for \(host):\(port)", errno: errno)
    }

    static let alreadyStarted = HTTPServerError(.alreadyStarted, "the server was already started; create a new one")

    static func thread(errno: Int32) -> HTTPServerError {
        HTTPServerError(.threadFailed, "could not create an event-loop thread", errno: errno)
    }
}

/// The system's text for an `errno` value.
func errnoDescription(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "unknown error" }
    return String(decoding: UnsafeRawBufferPointer(start: text, count: strlen(text)), as: UTF8.self)
}
