import Dispatch
import FlagCore

/// The documents executor: where the whole document of a set's current version is assembled from its items, and for
/// a signed set signed (or the signed bytes another server stored are read), when a client first asks for it. The
/// write only publishes its patch; serving state holds data, never I/O, and a route on an event loop that finds no
/// document yet hands its request here instead of making one.
extension FlagService {
    /// Calls `body` on the documents executor with the current version of `set` and its document, made now if
    /// nobody asked for it before.
    func withServedDocument(
        _ set: String,
        _ body: @escaping @Sendable (Result<(state: SetState, served: ServedDocument), any Error>) -> Void
    ) {
        documents.async { [self] in body(Result { try servedOnDocuments(set) }) }
    }

    /// The current version of `set` and its document, waiting for the documents executor to make it when nobody
    /// has yet. For callers off that executor: admin reads, exports, tests.
    package func servedVersion(_ set: String) throws -> (state: SetState, served: ServedDocument) {
        dispatchPrecondition(condition: .notOnQueue(documents))
        return try documents.sync { try servedOnDocuments(set) }
    }

    /// The document of the current version of `set` (`servedVersion`).
    package func servedDocument(_ set: String) throws -> ServedDocument {
        try servedVersion(set).served
    }

    /// `servedDocument` on the documents executor: the one installed, or one made and installed now. A version
    /// published meanwhile is served instead of the one it replaced.
    private func servedOnDocuments(_ set: String) throws -> (state: SetState, served: ServedDocument) {
        while true {
            guard let (state, served) = registry.record(set) else {
                throw ServiceError.notFound("no flag set \"\(set)\"", subject: .set)
            }
            if let served { return (state, served) }
            if let installed = registry.install(makeServed(state), for: state) { return (state, installed) }
        }
    }

    /// The document of `state` as served: its items assembled, and for a signed set the signed bytes stored for the
    /// version (or these, signed now and stored). Costs the set: run it on the documents executor only.
    func makeServed(_ state: SetState) -> ServedDocument {
        let assembled = state.assembledDocument()
        guard state.isSigned,
            let signed = documentSigner.signedDocument(
                set: state.name, version: state.version, assembled: assembled, key: activeKey(state.name))
        else { return ServedDocument(bytes: assembled, signature: nil) }
        return ServedDocument(bytes: signed.bytes, signature: signed.signature)
    }
}
