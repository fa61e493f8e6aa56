import FlagCore

/// `GET /v1/sets/{set}` from a client whose key this connection has already checked: nearly every request a busy
/// server gets (SDKs poll it with `If-None-Match`), answered without an `Exchange` and with one pass over the fields.
extension FlagServerApp {
    /// Answers the request if it is the plain document route and every check passes on what is already known (the
    /// connection's remembered token, the set's current state); returns false, having done nothing, otherwise, and
    /// the general router answers it — with exactly the status this path would have given, since it only answers
    /// when none of the router's checks (method, `?wait=`, one `Authorization`, its principal, the set) can fail.
    func answerDocumentQuickly(_ request: HTTPRequest, _ responder: HTTPResponder) -> Bool {
        guard request.rawQuery == nil, let connection = request.connection else { return false }
        let method = request.method
        guard method == "GET" || method == "HEAD", let set = Self.documentSet(request.path),
            let state = service.state(set)
        else { return false }
        var authorizations = 0
        var principal: Principal?
        var sawIfNoneMatch = false
        var notModified = false
        request.headers.forEachField { name, value in
            // Both names are 13 bytes long: one length test keeps every other field to a compare.
            guard name.count == 13 else { return true }
            if ASCII.equalsIgnoringCase(name, "authorization") {
                authorizations += 1
                if authorizations == 1 { principal = tokens.rememberedPrincipal(value, connection: connection) }
            } else if !sawIfNoneMatch && ASCII.equalsIgnoringCase(name, "if-none-match") {
                sawIfNoneMatch = true
                notModified = Self.ifNoneMatch(value, names: state.version)
            }
            return true
        }
        guard authorizations == 1, let principal, principal.mayRead(set) else { return false }
        let response = notModified ? state.notModifiedResponse : state.documentResponse
        let started = request.receivedAt > 0 ? request.receivedAt : Socket.monotonicNanoseconds()
        metrics.record(route: .document, status: response.status, since: started)
        responder.respond(response)
        return true
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
