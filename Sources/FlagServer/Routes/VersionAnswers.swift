import FlagCore
import FlagHTTP
import FlagLock
import FlagSigning

/// The prepared HTTP answers of one version of a set: its 304, and its 200 with the whole document. The service
/// holds bytes and versions; this is where they become responses, once per version, so that every client asking
/// shares one encoded head and one document.
///
/// Made by the first request that needs one of them after the version is published (the service does not
/// assemble the document on its write path): nearly every client that asks after a change needs the new document.
final class VersionAnswers: Sendable {
    let state: SetState
    /// `If-None-Match` naming this version.
    let notModified: HTTPResponse
    /// `GET /v1/sets/{set}`'s 200.
    let document: HTTPResponse

    init(_ state: SetState) {
        self.state = state
        notModified = .prepared(status: 304, headers: ["ETag": state.etag, "Cache-Control": "no-cache"])
        var headers: HTTPHeaders = [
            "Content-Type": "application/json; charset=utf-8", "ETag": state.etag, "Cache-Control": "no-cache",
        ]
        if let signature = state.documentSignature { headers.add(name: Signature.headerName, value: signature) }
        document = .prepared(status: 200, headers: headers, body: state.document)
    }
}

/// The answers of each set's latest version seen, so that connections asking for the same version share them.
/// Read when a connection's memo no longer holds the current version, not on every request.
final class AnswerCache: Sendable {
    private let latest = Locked<[String: VersionAnswers]>([:])

    /// The answers of `state`: those made for it already, or new ones that replace an older version's.
    func answers(for state: SetState) -> VersionAnswers {
        latest.withLock { latest in
            if let known = latest[state.name], known.state === state { return known }
            let answers = VersionAnswers(state)
            if (latest[state.name]?.state.version ?? 0) <= state.version { latest[state.name] = answers }
            return answers
        }
    }
}
