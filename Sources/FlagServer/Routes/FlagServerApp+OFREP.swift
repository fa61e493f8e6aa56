import FlagCore
import FlagHTTP
import Foundation

/// Server-side evaluation in the OpenFeature Remote Evaluation Protocol, for clients that cannot evaluate locally.
/// An SDK key evaluates against its own set; an admin token names the set with `?set=`.
///
/// Errors on `/ofrep/v1/` paths take OFREP's shapes (open-feature/protocol `service/openapi.yaml`), whoever answers
/// them (this handler, the router, the HTTP engine): a single evaluation `{"key","errorCode","errorDetails"}`,
/// anything else `{"errorCode","errorDetails"}`. The codes: `PARSE_ERROR` for a body that is not a JSON object,
/// `INVALID_CONTEXT` for a `context` that is not an object, `TARGETING_KEY_MISSING`, `FLAG_NOT_FOUND` for a 404 of
/// a single evaluation (the only code OFREP's 404 allows), `GENERAL` for the rest. OFREP defines no body for 401,
/// 403 and 429, which keep the API's error.
extension FlagServerApp {
    /// `POST /ofrep/v1/evaluate/flags`: every flag of the set that is not archived.
    func ofrepBulk(_ call: Call) throws -> HTTPResponse {
        try ofrep(call, key: nil)
    }

    /// `POST /ofrep/v1/evaluate/flags/{key}`: one flag.
    func ofrepFlag(_ call: Call) throws -> HTTPResponse {
        try ofrep(call, key: call.key)
    }

    private func ofrep(_ call: Call, key: String?) throws -> HTTPResponse {
        let request = call.request
        let set: String
        switch call.principal {
        case .sdk(_, let own)?: set = own
        case .admin(let caller)?:
            guard let named = request.query("set") else {
                throw ServiceError.badRequest("an admin token must name the flag set with ?set=NAME", path: "set")
            }
            guard caller.mayAccess(named) else {
                throw ServiceError.forbidden("the token of \"\(caller.name)\" may not access flag set \"\(named)\"")
            }
            set = named
        case nil:
            throw ServiceError.unauthorized("this route needs a token")
        }
        let state = try service.requireState(set)
        let body: [String: JSONValue]
        do {
            body = try Self.members(of: request.body)
        } catch let error as ServiceError {
            return Self.ofrepError(400, key: key, .parseError, error.message)
        }
        // OFREP makes `context` optional: without one there is no targeting key, which is the error to report.
        let context: [String: JSONValue]
        switch body["context"] {
        case nil, .null?: context = [:]
        case .object(let members)?: context = members
        default: return Self.ofrepError(400, key: key, .invalidContext, "\"context\" must be an object")
        }
        guard case .string(let unit)? = context["targetingKey"], !unit.isEmpty else {
            return Self.ofrepError(400, key: key, .targetingKeyMissing, "context.targetingKey is required")
        }
        var attributes: [String: String] = [:]
        for (name, value) in context where name != "targetingKey" {
            switch value {
            case .string(let text): attributes[name] = text
            case .bool(let flag): attributes[name] = flag ? "true" : "false"
            case .int(let number): attributes[name] = String(number)
            case .double(let number): attributes[name] = String(number)
            default: continue
            }
        }
        let evaluation = EvaluationContext(unitID: unit, attributes: attributes)
        let now = clock.now()
        if let key {
            let (detail, _) = state.compiled.explain(key, context: evaluation, at: now)
            if detail.errorCode == .flagNotFound {
                return Self.ofrepError(404, key: key, .flagNotFound, detail.errorMessage ?? "no such flag")
            }
            if let code = detail.errorCode {
                return Self.ofrepError(400, key: key, code, detail.errorMessage ?? code.rawValue)
            }
            service.telemetry.countServerEvaluations(set: set, [key: [detail.variant ?? "": 1]])
            return JSONResponse.object(headers: ["ETag": state.etag]) { writer in
                Self.writeOFREP(key: key, detail, to: &writer)
            }
        }
        let keys = state.compiled.readableFlags.filter { !$0.archived }.map(\.key).sorted(by: utf8Less)
        var counts: [String: [String: Int]] = [:]
        let response = JSONResponse.object(capacity: 64 * keys.count + 64) { writer in
            writer.key("flags")
            writer.beginArray()
            for key in keys {
                let detail = state.compiled.explain(key, context: evaluation, at: now).detail
                counts[key] = [detail.variant ?? "": 1]
                writer.beginObject()
                Self.writeOFREP(key: key, detail, to: &writer)
                writer.endObject()
            }
            writer.endArray()
        }
        service.telemetry.countServerEvaluations(set: set, counts)
        return Self.bulkValidated(response, ifNoneMatch: request.headers["If-None-Match"])
    }

    /// The bulk answer depends on the context and the clock (rollout steps) as well as the version, so its `ETag`
    /// is a digest of the body: equal for equal answers, which is what lets a provider's `If-None-Match` get 304.
    static func bulkValidated(_ response: HTTPResponse, ifNoneMatch: String?) -> HTTPResponse {
        var response = response
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a, 64 bits: a cache validator, not a security boundary
        for byte in response.body {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        let etag = "\"ofrep-\(String(repeating: "0", count: 16 - digits.count))\(digits)\""
        response.headers.replaceOrAdd(name: "ETag", value: etag)
        let named = (ifNoneMatch ?? "").split(separator: ",").map { tag in
            let trimmed = tag.trimmingCharacters(in: .whitespaces)
            return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
        }
        guard named.contains(etag) || named.contains("*") else { return response }
        return HTTPResponse(status: 304, headers: ["ETag": etag, "Cache-Control": "no-store"])
    }

    /// The members of one OFREP result: always `key`, `reason` and `variant`, then `value` or the error.
    private static func writeOFREP(key: String, _ detail: EvaluationDetail<JSONValue>, to writer: inout JSONWriter) {
        writer.member("key", key)
        writer.member("reason", detail.reason.rawValue)
        writer.member("variant", detail.variant ?? detail.reason.rawValue.lowercased())
        if let code = detail.errorCode {
            writer.member("errorCode", code.rawValue)
            writer.member("errorDetails", detail.errorMessage)
        } else {
            writer.key("value")
            writer.value(detail.value)
        }
        writer.key("metadata")
        writer.beginObject()
        if let version = detail.version { writer.member("version", version) }
        writer.endObject()
    }

    /// OFREP's error body: with `key` for a single evaluation, without for the bulk one.
    private static func ofrepError(_ status: Int, key: String?, _ code: ErrorCode, _ details: String) -> HTTPResponse {
        JSONResponse.object(status: status) { writer in
            writer.member("key", key)
            writer.member("errorCode", code.rawValue)
            writer.member("errorDetails", details)
        }
    }

    /// OFREP's error body for an error of `status` answered on `path` without a more precise code (`GENERAL`, or
    /// `FLAG_NOT_FOUND` for a single evaluation's 404); nil off `/ofrep/v1/` and for 401, 403 and 429.
    static func ofrepError(status: Int, _ details: String, path: String) -> HTTPResponse? {
        guard status != 401 && status != 403 && status != 429 else { return nil }
        guard path == "/ofrep/v1" || path.hasPrefix("/ofrep/v1/") else { return nil }
        // The key the router would evaluate, so that a refusal names the flag a single evaluation asked for.
        var key: String?
        switch router.match(method: "POST", path: path) {
        case .route(let endpoint, let parameters), .wrongMethod(let endpoint, let parameters):
            if endpoint.route == .ofrepFlag { key = parameters.key }
        case .notFound:
            break
        }
        return ofrepError(status, key: key, status == 404 && key != nil ? .flagNotFound : .general, details)
    }

    /// The answer for `error` on `path`: OFREP's shape on an OFREP path (see above), else the API's error.
    static func errorResponse(_ error: ServiceError, path: String) -> HTTPResponse {
        ofrepError(status: error.status, error.message, path: path) ?? JSONResponse.error(error)
    }

    /// The members of an OFREP request's JSON object body (an empty body has none): OFREP's request is its own
    /// format, not one of the admin API's request types.
    static func members(of body: [UInt8]) throws -> [String: JSONValue] {
        guard !body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else { return [:] }
        let value: JSONValue
        do {
            value = try JSONReader.parse(body)
        } catch {
            throw ServiceError.badRequest("the body is not valid JSON: \(error)")
        }
        guard case .object(let object) = value else { throw ServiceError.badRequest("the body must be a JSON object") }
        return object
    }
}
