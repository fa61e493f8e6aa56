import FlagCore
import FlagHTTP
import FlagLock
import FlagSigning

/// The prepared HTTP answers of one version of a set: its 304, and once its document is made, its 200 with the
/// whole document. The service holds bytes and versions; this is where they become responses, once per version, so
/// that every client asking shares one encoded head and one document.
final class VersionAnswers: Sendable {
    let state: SetState
    /// The document the 200 serves; `nil` until the documents executor made it.
    let served: ServedDocument?
    /// `If-None-Match` naming this version.
    let notModified: HTTPResponse
    /// `GET /v1/sets/{set}`'s 200; `nil` until the document is made (the route then hands the request to the
    /// documents executor rather than make it on a loop thread).
    let document: HTTPResponse?

    init(_ state: SetState, served: ServedDocument?) {
        self.state = state
        self.served = served
        notModified = .prepared(status: 304, headers: ["ETag": state.etag, "Cache-Control": "no-cache"])
        document = served.map { Self.document(of: state, $0) }
    }

    /// The 200 of `state` serving `served`.
    static func document(of state: SetState, _ served: ServedDocument) -> HTTPResponse {
        var headers: HTTPHeaders = [
            "Content-Type": "application/json; charset=utf-8", "ETag": state.etag, "Cache-Control": "no-cache",
        ]
        if let signature = served.signature { headers.add(name: Signature.headerName, value: signature) }
        return .prepared(status: 200, headers: headers, body: served.bytes)
    }
}

/// The answers of each set's latest version seen, so that connections asking for the same version share them.
/// Read when a connection's memo no longer holds the current version, not on every request.
final class AnswerCache: Sendable {
    private let latest = Locked<[String: VersionAnswers]>([:])

    /// The answers of `state` serving `served`: those made for them already, or new ones that replace an older
    /// version's (or the same version's without its document).
    func answers(for state: SetState, served: ServedDocument?) -> VersionAnswers {
        latest.withLock { latest in
            if let known = latest[state.name], known.state === state, known.served === served { return known }
            let answers = VersionAnswers(state, served: served)
            if let known = latest[state.name] {
                let newer =
                    known.state.version < state.version
                    || (known.state.version == state.version && served != nil)
                if newer { latest[state.name] = answers }
            } else {
                latest[state.name] = answers
            }
            return answers
        }
    }
}
