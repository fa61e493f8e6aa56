import FlagAPI
import FlagCore
import FlagHTTP

/// A handler's typed answer, with what the one adapter (`JSONResponse.answer`) needs besides it: the status and the
/// set's version for the `ETag`.
struct Reply<Answer: APIAnswer>: Sendable {
    /// The answer, written by its own `encodedAnswer()`.
    var answer: Answer
    /// `200` unless the route created something (`201`).
    var status = 200
    /// The set's version the answer reflects, sent as `ETag: "{version}"`.
    var version: Int?

    init(_ answer: Answer, status: Int = 200, version: Int? = nil) {
        self.answer = answer
        self.status = status
        self.version = version
    }
}

extension RouteSpec {
    /// A route of the admin API: the request is decoded (from the body, then the query) into the endpoint's request
    /// type, the handler returns the endpoint's answer type, and `JSONResponse.answer` writes it.
    static func answer<Request, Answer>(
        _ endpoint: Endpoint<Request, Answer>, on executor: Executor = .store,
        _ handler: @escaping @Sendable (FlagServerApp, Call, Request) throws -> Reply<Answer>
    ) -> RouteSpec {
        RouteSpec(endpoint: endpoint.info, executor: executor, answersHead: false) { app, call in
            if !API.setWrites.contains(endpoint.info.name) {
                for option in ["propose", "withoutReview"] where call.request.query(option) != nil {
                    throw ServiceError.badRequest(
                        "\(endpoint.info.label) writes no version of a set, so it takes no \(option); only the "
                            + "writes of a set's flags and cohorts are reviewed", path: option)
                }
            }
            return try JSONResponse.answer(handler(app, call, try call.decode(Request.self)))
        }
    }
}

extension Call {
    /// The request as the endpoint's request type: the members of the JSON body, then the query parameters.
    /// A member of the wrong type, or one missing, is a 400 that names it; so is text people read (`writtenText`: a
    /// reason, a description) with a control character.
    func decode<Request: APIRequest>(_ type: Request.Type) throws -> Request {
        var query: [String: String] = [:]
        for (name, value) in request.queryItems where query[name] == nil { query[name] = value }
        let decoded: Request
        do {
            decoded = try WireDecoder.decodeRequest(type, body: request.body, query: query)
        } catch {
            guard let field = error.field else { throw ServiceError.badRequest(error.description) }
            throw ServiceError.badRequest("\"\(field)\" \(error.message)", path: field)
        }
        for text in decoded.writtenText {
            guard let refusal = text.text?.controlCharacterRefusal(multiline: text.multiline) else { continue }
            throw ServiceError.badRequest("\"\(text.member)\" \(refusal)", path: text.member)
        }
        return decoded
    }
}

extension Call {
    /// The version named by `If-Match: "{version}"`, if the header is present (`*` names none).
    func ifMatch() throws -> Int? {
        guard let header = request.headers["If-Match"]?.trimmingHTTPSpaces() else { return nil }
        if header == "*" { return nil }
        guard let version = Self.entityVersion(header) else {
            throw ServiceError.badRequest("If-Match must be a version ETag such as \"42\" (with the quotes)")
        }
        return version
    }

    /// The version in an entity tag `"42"` or `W/"42"`.
    static func entityVersion(_ tag: some StringProtocol) -> Int? {
        var text = tag.trimmingHTTPSpaces()
        if text.hasPrefix("W/") { text = text.dropFirst(2) }
        guard text.count >= 3, text.first == "\"", text.last == "\"" else { return nil }
        return Int(text.dropFirst().dropLast())
    }
}

extension JSONResponse {
    /// The one adapter from a typed answer to HTTP: the answer's JSON, its status, `ETag` for a version, and the
    /// headers of every JSON answer.
    static func answer<Answer>(_ reply: Reply<Answer>) throws -> HTTPResponse {
        var headers: HTTPHeaders = [:]
        if let version = reply.version { headers.add(name: "ETag", value: "\"\(version)\"") }
        return make(status: reply.status, headers: headers, body: try reply.answer.encodedAnswer())
    }
}
