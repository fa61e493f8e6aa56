import FlagCore
import Glibc

/// `GET /v1/sets/{set}` from a client whose key this connection has already checked: nearly every request a busy
/// server gets (SDKs poll it with `If-None-Match`), answered without an `Exchange` and with one pass over the fields.
extension FlagServerApp {
    /// Answers the request if it is the plain document route and every check passes on what is already known (the
    /// connection's remembered token, the set's current state); returns false, having done nothing, otherwise, and
    /// the general router answers it — with exactly the status this path would have given, since it only answers
    /// when none of the router's checks (method, `?wait=`, one `Authorization`, its principal, the set) can fail.
    /// A check added to `currentDocument` must be added here too (`ServingFastPathLiveTests` pins the statuses).
    func answerDocumentQuickly(_ request: HTTPRequest, _ responder: HTTPResponder) -> Bool {
        guard request.rawQuery == nil, let connection = request.connection,
            let credential = connection.attachment as? CachedCredential,
            credential.generation == tokens.generation.load(ordering: .acquiring)
        else { return false }
        let method = request.method
        guard method == "GET" || method == "HEAD" else { return false }
        // The set: what this connection read last, while no set has changed since; else looked up (and remembered
        // below, once the request has passed every check).
        let path = request.path
        let registry = service.registry
        let epoch = registry.epoch.load(ordering: .acquiring)
        let state: SetState
        let mayRead: Bool
        var remember: RememberedDocument?
        if let memo = credential.document, memo.epoch == epoch, Self.path(path, namesSet: memo.name) {
            (state, mayRead) = (memo.state, memo.mayRead)
        } else {
            guard let set = Self.documentSet(path), let found = registry.state(set) else { return false }
            (state, mayRead) = (found, credential.principal.mayRead(set))
            remember = RememberedDocument(name: Array(set.utf8), state: found, epoch: epoch, mayRead: mayRead)
        }
        var authorizations = 0
        var remembered = false
        var sawIfNoneMatch = false
        var notModified = false
        request.headers.forEachField { name, value in
            // Both names are 13 bytes long: one length test keeps every other field to a compare.
            guard name.count == 13 else { return true }
            if ASCII.equalsIgnoringCase(name, "authorization") {
                authorizations += 1
                if authorizations == 1 {
                    remembered = TokenAuthority.bytesEqualInConstantTime(value, credential.header)
                }
            } else if !sawIfNoneMatch && ASCII.equalsIgnoringCase(name, "if-none-match") {
                sawIfNoneMatch = true
                notModified = Self.ifNoneMatch(value, names: state.version)
            }
            return true
        }
        guard authorizations == 1, remembered, mayRead else { return false }
        if let remember {
            connection.attach(
                CachedCredential(
                    header: credential.header, principal: credential.principal, generation: credential.generation,
                    document: remember))
        }
        let response = notModified ? state.notModifiedResponse : state.documentResponse
        let started = request.receivedAt > 0 ? request.receivedAt : Socket.monotonicNanoseconds()
        metrics.record(route: .document, status: response.status, since: started)
        responder.respond(response)
        return true
    }

    /// Whether `path` is `/v1/sets/` followed by exactly `name`.
    private static func path(_ path: String, namesSet name: [UInt8]) -> Bool {
        var path = path
        return path.withUTF8 { bytes in
            let prefix: StaticString = "/v1/sets/"
            let count = prefix.utf8CodeUnitCount
            guard bytes.count == count + name.count, let base = bytes.baseAddress,
                memcmp(base, prefix.utf8Start, count) == 0
            else { return false }
            return name.withUnsafeBytes { name in
                guard let nameBase = name.baseAddress else { return false }
                return memcmp(base + count, nameBase, name.count) == 0
            }
        }
    }
}

extension HTTPHeaders {
    /// Calls `body` with the name and value bytes of every field, in order, until it returns false; no `String` is
    /// made for a field of a parsed request.
    func forEachField(_ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool) {
        switch storage {
        case .raw(let raw):
            raw.visit(body)
        case .built(let fields):
            for field in fields {
                var name = field.name
                var value = field.value
                let more = name.withUTF8 { name in
                    value.withUTF8 { body(UnsafeRawBufferPointer(name), UnsafeRawBufferPointer($0)) }
                }
                if !more { return }
            }
        }
    }
}
