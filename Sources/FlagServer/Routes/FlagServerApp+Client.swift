import Dispatch
import FlagCore
import FlagHTTP
import FlagLock
import FlagSigning
import Foundation
import Synchronization

/// The client API (SDK key or admin token): the current document with ETags and long-polls, old versions, and
/// the event stream.
extension FlagServerApp {
    /// `GET /v1/sets/{set}/versions/{n}`: an old version's document, immutable. Cacheable by the client that asked,
    /// never by a shared cache: the request is authorized, and a shared cache would hand it to anyone.
    func oldVersion(_ call: Call) throws -> HTTPResponse {
        let text = call.parameters.version
        guard let version = Int(text), version >= 1 else {
            throw ServiceError.badRequest("version must be a positive integer, not \"\(text)\"")
        }
        let (document, signature) = try service.signedDocument(call.set, version: version)
        var headers: HTTPHeaders = [
            "Content-Type": "application/json; charset=utf-8", "ETag": "\"\(version)\"",
            "Cache-Control": "private, max-age=31536000, immutable",
        ]
        if let signature { headers.add(name: Signature.headerName, value: signature) }
        return HTTPResponse(status: 200, headers: headers, body: document)
    }

    /// `GET /v1/sets/{set}`: 200 with the document, 304 when `If-None-Match` names the current version, or a
    /// long-poll with `?wait=N` that answers when a newer version appears or after N seconds (304).
    func currentDocument(_ call: Call) throws -> HTTPResponse? {
        let request = call.request
        let current = try requireAnswers(call)
        let state = current.state
        let instance = pollInstance(call)
        guard Self.ifNoneMatch(request.headers, names: state.version) else {
            if let document = current.document { return Self.issuing(instance, document) }
            // No document made yet for this version: the documents executor makes it and answers.
            answerWithDocument(call.exchange, set: call.set) { Self.issuing(instance, $0) }
            return nil
        }
        var wait = 0
        if let text = request.query("wait") {
            guard let seconds = Int(text), seconds >= 0 else {
                throw ServiceError.badRequest("wait must be a whole number of seconds, not \"\(text)\"", path: "wait")
            }
            wait = min(seconds, settings.longPollMaxSeconds)
        }
        if wait == 0 { return Self.issuing(instance, current.notModified) }
        longPoll(call, known: state.version, wait: wait, instance: instance)
        return nil
    }

    /// Answers `exchange` with the 200 of the current version of `set`, passed through `shape`, from the documents
    /// executor once the document is made there (at once if it was made already).
    func answerWithDocument(
        _ exchange: Exchange, set: String, _ shape: @escaping @Sendable (HTTPResponse) -> HTTPResponse
    ) {
        documentAnswer(set) { [self] result in
            switch result {
            case .success(let document): exchange.respond(shape(document))
            case .failure(let error): exchange.respond(errorResponse(error, exchange))
            }
        }
    }

    /// Calls `body` on the documents executor with the 200 of the current version of `set`.
    func documentAnswer(_ set: String, _ body: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void) {
        let answers = self.answers
        service.withServedDocument(set) { result in
            body(
                result.map { state, served in
                    answers.answers(for: state, served: served).document ?? VersionAnswers.document(of: state, served)
                })
        }
    }

    /// Waits for a version newer than `known`; every path that answers goes through one `Exchange.respond`.
    private func longPoll(_ call: Call, known: Int, wait: Int, instance: String?) {
        let (exchange, set) = (call.exchange, call.set)
        let metrics = self.metrics
        let registry = service.registry
        let deadlines = self.deadlines
        let answers = self.answers
        metrics.waitingPolls.add(1, ordering: .relaxed)
        let done = Atomic<Bool>(false)
        let deadlineID = Atomic<Int>(0)
        let subscriptionID = Atomic<Int>(0)
        let unwatch = Locked<(@Sendable () -> Void)?>(nil)
        let finish: @Sendable (HTTPResponse?) -> Void = { response in
            guard !done.exchange(true, ordering: .acquiringAndReleasing) else { return }
            metrics.waitingPolls.subtract(1, ordering: .relaxed)
            deadlines.remove(deadlineID.load(ordering: .acquiring))
            unwatch.withLock { $0 }?()
            if let response { exchange.respond(Self.issuing(instance, response)) }
        }
        // Revoked or expired while waiting: 401 at once, and the connection closes (its next request would be
        // refused anyway).
        let refuse: @Sendable () -> Void = { [timers] in
            timers.async { registry.unsubscribe(set, subscriptionID.load(ordering: .acquiring)) }
            finish(Self.tokenEnded)
        }
        guard let stopWatching = watchToken(of: call, refuse) else {
            finish(Self.tokenEnded)
            return
        }
        unwatch.withLock { $0 = stopWatching }
        if done.load(ordering: .acquiring) { stopWatching() }
        let expiresAt = call.principal?.expiresAt
        let clock = self.clock
        // Registered before subscribing, so that whatever answers the poll finds the deadline to remove.
        let deadline = deadlines.add(after: .seconds(wait)) { [service] in
            registry.unsubscribe(set, subscriptionID.load(ordering: .acquiring))
            finish(
                service.state(set).map { Self.notModifiedHead(version: $0.version) }
                    ?? Self.notModifiedHead(version: known))
        }
        deadlineID.store(deadline, ordering: .releasing)
        // The 200 of the version that woke the poll, from the documents executor: never made on a loop thread, nor
        // on the fan-out queue, which tells every subscriber in turn.
        let wake: @Sendable () -> Void = { [self] in
            documentAnswer(set) { result in
                switch result {
                case .success(let document): finish(document)
                case .failure(let error): finish(self.errorResponse(error, exchange))
                }
            }
        }
        // Set when a newer version is there already and the poll is answered without subscribing.
        let answered = Atomic<Bool>(false)
        let id = registry.subscribe(set) { state, served -> SetRegistry.Callback? in
            if done.load(ordering: .acquiring) { return nil }
            if state.version != known {
                answered.store(true, ordering: .relaxed)
                if let served {
                    finish(answers.answers(for: state, served: served).document)
                } else {
                    wake()
                }
                return nil
            }
            return { signal in
                switch signal {
                case .update:
                    if let expiresAt, clock.now() >= expiresAt {
                        finish(Self.tokenEnded)
                        return false
                    }
                    wake()
                    return false
                case .served, .heartbeat:
                    return !done.load(ordering: .acquiring)
                case .shutdown:
                    finish(Self.notModifiedHead(version: known))
                    return false
                }
            }
        }
        guard let id else {
            if !answered.load(ordering: .relaxed) {
                finish(JSONResponse.error(.unavailable("the server is shutting down")))
            }
            return
        }
        subscriptionID.store(id, ordering: .releasing)
        // The engine may report the close from inside `subscribe`'s first look, which holds the registry's lock:
        // unsubscribe later.
        exchange.responder.onClose { [timers] in
            finish(nil)
            timers.async { registry.unsubscribe(set, id) }
        }
    }

    /// `GET /v1/sets/{set}/stream`: Server-Sent Events, a `put` of the document on connect (a `: current` comment
    /// when `Last-Event-ID` is current), then one `patch` per version and a heartbeat comment every 15 s.
    func openStream(_ call: Call) throws -> HTTPResponse? {
        let (exchange, request, set) = (call.exchange, call.request, call.set)
        _ = try requireState(call)
        let lastEventID = request.headers["Last-Event-ID"].flatMap { Int($0.trimmingHTTPSpaces()) }
        let instance = streamInstance(call)
        let head = Self.issuing(
            instance,
            HTTPResponse(
                status: 200,
                headers: [
                    "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache",
                    "X-Accel-Buffering": "no",
                ]))
        let telemetry = service.telemetry
        guard let stream = exchange.startStream(head) else {
            if let instance { telemetry.streamClosed(set: set, id: instance) }
            return nil
        }
        let metrics = self.metrics
        let registry = service.registry
        metrics.openStreams.add(1, ordering: .relaxed)
        let closed = Atomic<Bool>(false)
        let unwatch = Locked<(@Sendable () -> Void)?>(nil)
        let ended: @Sendable () -> Void = {
            if !closed.exchange(true, ordering: .acquiringAndReleasing) {
                metrics.openStreams.subtract(1, ordering: .relaxed)
                if let instance { telemetry.streamClosed(set: set, id: instance) }
                unwatch.withLock { $0 }?()
            }
        }
        let subscription = Atomic<Int>(0)
        // The engine may report the close from inside `subscribe`'s first look, which holds the registry's lock, and a
        // revocation may end the stream from inside one: unsubscribe later.
        let unsubscribe: @Sendable () -> Void = { [timers] in
            let id = subscription.load(ordering: .acquiring)
            if id != 0 { timers.async { registry.unsubscribe(set, id) } }
        }
        let finish: @Sendable () -> Void = {
            stream.finish()
            ended()
            unsubscribe()
        }
        guard let stopWatching = watchToken(of: call, finish) else {
            finish()
            return nil
        }
        unwatch.withLock { $0 = stopWatching }
        // `ended` may have run before the watch was stored, and found none to stop.
        if closed.load(ordering: .acquiring) { stopWatching() }
        let expiresAt = call.principal?.expiresAt
        let clock = self.clock
        let service = self.service
        // Set while the stream waits for the document of the current version, which the documents executor makes
        // and announces (`.served`): it is put then, and versions published meanwhile are in it. Read and written
        // by the registry's callbacks only, which its fan-out queue runs one at a time (after the first look, under
        // its lock, that stored the subscription).
        let awaitingPut = Atomic<Bool>(false)
        let put: @Sendable (SetState, ServedDocument) -> Void = { state, served in
            stream.write(SetStreamEvent.put.head(id: String(state.version), signature: served.signature))
            stream.write(served.bytes)
            stream.write(SetStreamEvent.end)
        }
        let id = registry.subscribe(set) { state, served -> SetRegistry.Callback? in
            if lastEventID == state.version {
                stream.write(SetStreamEvent.current)
            } else if let served {
                put(state, served)
            } else {
                awaitingPut.store(true, ordering: .relaxed)
                service.withServedDocument(set) { _ in }
            }
            return { signal in
                switch signal {
                case .update(let update):
                    // The expiry's deadline may fire a moment late: no version made after it goes out.
                    if let expiresAt, clock.now() >= expiresAt {
                        stream.finish()
                    } else if !awaitingPut.load(ordering: .relaxed) {
                        stream.write(update.patchEvent)
                    }
                case .served(let state, let served):
                    if awaitingPut.exchange(false, ordering: .relaxed) {
                        if let expiresAt, clock.now() >= expiresAt { stream.finish() } else { put(state, served) }
                    }
                case .heartbeat: stream.write(SetStreamEvent.heartbeat)
                case .shutdown: stream.finish()
                }
                if stream.isOpen { return true }
                ended()
                return false
            }
        }
        guard let id else {
            finish()
            return nil
        }
        subscription.store(id, ordering: .releasing)
        exchange.responder.onClose {
            ended()
            unsubscribe()
        }
        return nil
    }

    /// Whether an `If-None-Match` header names `version` (`"N"`, `W/"N"` or `*` among its comma-separated tags).
    /// Read byte by byte: this runs on every conditional request, and splitting into strings showed in the profile.
    static func ifNoneMatch(_ header: String?, names version: Int) -> Bool {
        guard var header else { return false }
        return header.withUTF8 { ifNoneMatch(UnsafeRawBufferPointer($0), names: version) }
    }

    /// Whether the first `If-None-Match` field of `headers` names `version`, read without making a `String`.
    static func ifNoneMatch(_ headers: HTTPHeaders, names version: Int) -> Bool {
        var matched = false
        headers.forEachValue(named: "If-None-Match") { value in
            matched = ifNoneMatch(value, names: version)
            return false
        }
        return matched
    }

    static func ifNoneMatch(_ bytes: UnsafeRawBufferPointer, names version: Int) -> Bool {
        var matched = false
        HTTPHeaders.forEachListElement(bytes) { tag in
            if !matched && entityTag(tag, names: version) { matched = true }
        }
        return matched
    }

    /// Whether one entity tag is `*` or names `version`.
    private static func entityTag(_ tag: UnsafeRawBufferPointer, names version: Int) -> Bool {
        if tag.count == 1 && tag[0] == UInt8(ascii: "*") { return true }
        var start = 0
        if tag.count >= 2 && tag[0] == UInt8(ascii: "W") && tag[1] == UInt8(ascii: "/") { start = 2 }
        let end = tag.count - 1
        guard end - start >= 2, end - start <= 19, tag[start] == UInt8(ascii: "\""), tag[end] == UInt8(ascii: "\"")
        else { return false }
        var value = 0
        for index in (start + 1)..<end {
            let digit = tag[index] &- UInt8(ascii: "0")
            guard digit <= 9 else { return false }
            value = value * 10 + Int(digit)
        }
        return value == version
    }

    /// The answer to a long-poll whose token stopped being valid while it waited.
    static let tokenEnded: HTTPResponse = {
        var response = JSONResponse.error(
            .unauthorized("the token stopped being valid while the request waited: it was revoked or expired"))
        response.headers.replaceOrAdd(name: "Connection", value: "close")
        return response
    }()

    /// 304 naming `version`.
    static func notModifiedHead(version: Int) -> HTTPResponse {
        HTTPResponse(status: 304, headers: ["ETag": "\"\(version)\"", "Cache-Control": "no-cache"])
    }
}
