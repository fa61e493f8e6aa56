import FlagCore
import FlagHTTP
import Foundation
import Synchronization

/// One request being answered: the responder, its route (for metrics) and when it started. Answers at most once,
/// from any thread.
final class Exchange: Sendable {
    let request: HTTPRequest
    let responder: HTTPResponder
    /// The route the request resolved to; nil for a path or method that none has (counted as `unmatched`).
    let route: Route?
    private let metrics: ServerMetrics
    /// Monotonic nanoseconds: when the engine read the request (or, for a request not from a socket, now).
    private let started: Int64
    private let answered = Atomic<Bool>(false)

    init(request: HTTPRequest, responder: HTTPResponder, route: Route?, metrics: ServerMetrics) {
        self.request = request
        self.responder = responder
        self.route = route
        self.metrics = metrics
        self.started = request.receivedAt > 0 ? request.receivedAt : HTTPRequest.monotonicNow()
    }

    /// Sends the response if nothing has been sent yet; returns whether this call sent it.
    @discardableResult
    func respond(_ response: HTTPResponse) -> Bool {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        metrics.record(route: route, status: response.status, since: started)
        responder.respond(response)
        return true
    }

    /// Starts a streamed response (counted as answered with its status at once).
    func startStream(_ head: HTTPResponse) -> HTTPStream? {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return nil }
        metrics.record(route: route, status: head.status, since: started)
        return responder.startStream(head)
    }
}

/// A request matched to its route, as a handler gets it: the exchange that answers it, the path's parameters and
/// the caller, already checked against the route's `Access`.
struct Call: Sendable {
    let exchange: Exchange
    let parameters: RouteParameters
    /// Who sent it; nil only on routes anyone may call.
    let principal: Principal?
    /// What the connection remembered once the caller was checked.
    let memo: ConnectionMemo?
    /// The token authority's generation read before the caller was checked: a revocation since has moved it.
    var generation = 0

    var request: HTTPRequest { exchange.request }
    /// The path's `{set}`.
    var set: String { parameters.set }
    /// The path's `{key}`.
    var key: String { parameters.key }
    /// The path's `{name}`.
    var name: String { parameters.name }
    /// The audit log's actor: the token's name.
    var actor: String { principal?.name ?? "" }
}

/// Builders for the JSON responses of the API.
enum JSONResponse {
    /// A JSON response written by `build`.
    static func make(
        status: Int = 200, headers: HTTPHeaders = [:], capacity: Int = 256, _ build: (inout JSONWriter) -> Void
    ) -> HTTPResponse {
        var writer = JSONWriter(reservingCapacity: capacity)
        build(&writer)
        return make(status: status, headers: headers, body: writer.bytes)
    }

    /// A JSON response of `body`, with the headers every JSON answer has: its type, and no caching.
    static func make(status: Int, headers: HTTPHeaders, body: [UInt8]) -> HTTPResponse {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.replaceOrAdd(name: "Cache-Control", value: "no-store")
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// A JSON object response whose members `build` writes.
    static func object(
        status: Int = 200, headers: HTTPHeaders = [:], capacity: Int = 256, _ build: (inout JSONWriter) -> Void
    ) -> HTTPResponse {
        make(status: status, headers: headers, capacity: capacity) { writer in
            writer.beginObject()
            build(&writer)
            writer.endObject()
        }
    }

    /// The error body of SPEC §4: `{"error":{"code","message","path"}}`, plus `subject` when the error is about a
    /// thing (FlagAPI's `ErrorSubject`), `problems` for a 422 and `currentVersion` for a 409.
    static func error(_ error: ServiceError) -> HTTPResponse {
        var headers: HTTPHeaders = [:]
        if let current = error.currentVersion { headers.add(name: "ETag", value: "\"\(current)\"") }
        if error.status == 401 { headers.add(name: "WWW-Authenticate", value: "Bearer realm=\"flagserver\"") }
        if let seconds = error.retryAfterSeconds { headers.add(name: "Retry-After", value: String(seconds)) }
        return make(status: error.status, headers: headers) { writer in
            writer.beginObject()
            writer.key("error")
            writer.beginObject()
            writer.key("code")
            writer.string(error.errorCode)
            writer.key("message")
            writer.string(error.message)
            writer.key("path")
            if let path = error.path { writer.string(path) } else { writer.null() }
            writer.member("subject", error.subject?.rawValue)
            if let current = error.currentVersion {
                writer.key("currentVersion")
                writer.int(current)
            }
            if !error.problems.isEmpty {
                writer.key("problems")
                writer.beginArray()
                for problem in error.problems {
                    writer.beginObject()
                    writer.key("path")
                    writer.string(problem.path)
                    writer.key("message")
                    writer.string(problem.message)
                    writer.endObject()
                }
                writer.endArray()
            }
            if let incompatibility = error.incompatibility { incompatibility.write(members: &writer) }
            writer.endObject()
            writer.endObject()
        }
    }
}

extension JSONWriter {
    /// Writes `"name": value` for an optional string, or nothing when it is `nil`.
    mutating func member(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// Writes `"name": n`.
    mutating func member(_ name: String, _ value: Int) {
        key(name)
        int(value)
    }
}
