import FlagHTTP

/// What flagserver answers for a request the HTTP engine refuses before any route sees it (`ServerConfiguration.http`
/// gives this to the engine): the engine's message, then, when a limit refused it, the setting of the configuration
/// file to raise, in the error shape of the route the request was for (OFREP's on `/ofrep/v1/`).
extension FlagServerApp {
    /// The response for `rejection`.
    @Sendable package static func renderRejection(_ rejection: HTTPRejection) -> HTTPResponse {
        let message = rejection.message + remedy(for: rejection.limit)
        if let path = rejection.path, let response = ofrepError(status: rejection.status, message, path: path) {
            return response
        }
        return HTTPResponse.jsonError(status: rejection.status, code: rejection.code, message: message)
    }

    /// What to do about a limit, for the end of a message; empty without one.
    static func remedy(for limit: HTTPLimit?) -> String {
        guard let limit else { return "" }
        guard let setting = ServerConfiguration.setting(for: limit) else { return " (a limit fixed in flagserver)" }
        return " (raise \(setting) in the server's configuration file to allow more)"
    }
}
