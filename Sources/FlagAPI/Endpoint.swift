import FlagCore
import Foundation

/// One route of the API as data: its method, path template and who may call it, and the types of its request and
/// answer. The server compiles its router from these, flagctl sends them, the dashboard reads them as
/// `/ui/endpoints.json`: a template is written once, here.
///
/// ```swift
/// let call = try API.kill.call(PathParameters(set: "ios-prod", key: "new-checkout"), ChangeRequest(reason: "errors"))
/// // POST /v1/admin/sets/ios-prod/flags/new-checkout/kill, body {"reason":"errors"}
/// let answer = try API.kill.answer(bytes)  // a MutationResult
/// ```
public struct Endpoint<Request: APIRequest, Answer: APIAnswer>: Sendable {
    /// The endpoint without its types: what the route table and the dashboard need.
    public let info: EndpointInfo

    /// An endpoint named `name` (a Swift identifier, the dashboard's key for it).
    public init(
        _ name: String, _ method: APIMethod, _ template: String, _ access: Access, confirmsPerson: Bool = false
    ) {
        info = EndpointInfo(
            name: name, method: method, template: template, access: access, confirmsPerson: confirmsPerson)
    }

    /// The request for `parameters` and `request`: the path with its parameters filled in, and the request as the
    /// query (`GET`, `DELETE`) or as the JSON body; `review` goes into the query of a write of a set.
    /// - Throws: `EndpointError` when a parameter of the template is not given, or a query member is not a scalar.
    public func call(
        _ parameters: PathParameters = PathParameters(), _ request: Request, ifMatch: Int? = nil,
        createOnly: Bool = false, review: ReviewChoice? = nil
    ) throws(EndpointError) -> APICall {
        var target = try info.path(parameters)
        var body: [UInt8] = []
        var members: JSONValue
        do {
            members = try WireEncoder.jsonValue(request)
        } catch {
            throw EndpointError("\(info.label): the request cannot be written: \(error)")
        }
        if info.method.sendsBody {
            body = members.canonicalBytes
            members = .object([:])
        }
        if let review {
            guard case .object(var query) = members else {
                throw EndpointError("\(info.label): a review choice needs a request of members")
            }
            switch review {
            case .propose(let title, let at):
                query["propose"] = .string(title)
                if let at { query["at"] = .string(ISO8601.format(at)) }
            case .withoutReview(let reason): query["withoutReview"] = .string(reason)
            }
            members = .object(query)
        }
        target += try Self.query(members, for: info)
        var headers: [(String, String)] = []
        if !body.isEmpty { headers.append(("Content-Type", "application/json")) }
        if let ifMatch { headers.append(("If-Match", "\"\(ifMatch)\"")) }
        if createOnly { headers.append(("If-None-Match", "*")) }
        return APICall(method: info.method.rawValue, target: target, headers: headers, body: body)
    }

    /// Reads a 2xx answer's body.
    /// - Throws: `WireFormatError` naming the member at fault.
    public func answer(_ bytes: [UInt8]) throws(WireFormatError) -> Answer {
        try Answer.decode(answer: bytes)
    }

    /// `?a=1&b=x` from the request's scalar members, in their canonical order.
    private static func query(_ members: JSONValue, for info: EndpointInfo) throws(EndpointError) -> String {
        guard case .object(let members) = members else { return "" }
        var items: [String] = []
        for name in members.keys.sorted(by: utf8Less) {
            let text: String
            switch members[name] ?? .null {
            case .null: continue
            case .string(let string): text = string
            case .bool(let flag): text = flag ? "true" : "false"
            case .int(let number): text = String(number)
            case .double(let number): text = String(decoding: JSONValue.double(number).canonicalBytes, as: UTF8.self)
            case .array, .object:
                throw EndpointError("\(info.label): \"\(name)\" cannot go into a query string")
            }
            items.append(PercentEncoding.encode(name) + "=" + PercentEncoding.encode(text))
        }
        return items.isEmpty ? "" : "?" + items.joined(separator: "&")
    }
}

/// How a write of a set meets the set's reviews (docs/reviews.md).
public enum ReviewChoice: Sendable, Hashable {
    /// Held back as a change request with this title (`?propose=TITLE`), which the server applies at `at` once it
    /// needs nothing more (`&at=TIME`).
    case propose(String, at: Date? = nil)
    /// Written at once on a set whose reviews are required, by an admin not limited to sets
    /// (`?withoutReview=REASON`).
    case withoutReview(String)
}

/// The methods the API uses.
public enum APIMethod: String, Sendable, Hashable, Codable, CaseIterable {
    /// Reads; the request goes into the query.
    case get = "GET"
    /// Creates or acts; the request is the body.
    case post = "POST"
    /// Creates or replaces; the request is the body.
    case put = "PUT"
    /// Removes; the request goes into the query.
    case delete = "DELETE"

    /// Whether the request is sent as a JSON body rather than as query parameters.
    public var sendsBody: Bool { self == .post || self == .put }
}

/// An endpoint without its request and answer types.
public struct EndpointInfo: Sendable, Hashable {
    /// The Swift name of the endpoint in `API`, e.g. `kill`: the dashboard's key for it.
    public let name: String
    /// The HTTP method.
    public let method: APIMethod
    /// The path template, e.g. `/v1/admin/sets/{set}/flags/{key}/kill`.
    public let template: String
    /// Who may call it.
    public let access: Access
    /// Whether a dashboard session must send its person's own token (`Flagstaff-Confirm-Token`) as well: the
    /// routes that make or revoke tokens and SDK keys.
    public let confirmsPerson: Bool

    /// `POST /v1/admin/sets/{set}/flags/{key}/kill`: the route's label in `/metrics` and in messages.
    public var label: String { "\(method.rawValue) \(template)" }

    /// The parameters the template names, in order: `[.set, .key]`.
    public var parameters: [PathParameter] {
        template.split(separator: "/").compactMap { segment in
            guard segment.first == "{", segment.last == "}" else { return nil }
            return PathParameter(rawValue: String(segment.dropFirst().dropLast()))
        }
    }

    /// The path with each `{parameter}` replaced by its percent-encoded value.
    /// - Throws: `EndpointError` for a parameter the template names and `parameters` lacks.
    public func path(_ parameters: PathParameters) throws(EndpointError) -> String {
        var path = ""
        for segment in template.split(separator: "/") {
            path += "/"
            guard segment.first == "{", segment.last == "}" else {
                path += segment
                continue
            }
            let name = String(segment.dropFirst().dropLast())
            guard let parameter = PathParameter(rawValue: name), let value = parameters[parameter] else {
                throw EndpointError("\(label) needs the path parameter {\(name)}")
            }
            path += PercentEncoding.encode(value)
        }
        return path
    }
}

/// A parameter a path template may name, e.g. `{set}`.
public enum PathParameter: String, Sendable, Hashable, CaseIterable {
    /// `{set}`: a flag set's name.
    case set
    /// `{key}`: a flag's key.
    case key
    /// `{name}`: a cohort's, a rule's, a token's, an SDK key's or a signing key's name.
    case name
    /// `{n}`: a version number.
    case version = "n"
}

/// The values of a path's parameters.
public struct PathParameters: Sendable, Hashable {
    /// `{set}`.
    public var set: String?
    /// `{key}`.
    public var key: String?
    /// `{name}`.
    public var name: String?
    /// `{n}`.
    public var version: Int?

    /// Parameters; those a template does not name are ignored.
    public init(set: String? = nil, key: String? = nil, name: String? = nil, version: Int? = nil) {
        self.set = set
        self.key = key
        self.name = name
        self.version = version
    }

    /// The value of `parameter`, as text.
    public subscript(_ parameter: PathParameter) -> String? {
        switch parameter {
        case .set: set
        case .key: key
        case .name: name
        case .version: version.map(String.init)
        }
    }
}

/// One request to send, ready for any transport: flagctl's URLSession, a test's in-process server.
public struct APICall: Sendable {
    /// `GET`, `POST`, …
    public let method: String
    /// The path and query, e.g. `/v1/admin/sets/ios-prod/history?limit=5`.
    public let target: String
    /// `Content-Type`, `If-Match`, `If-None-Match` as the call needs them (the caller adds its token).
    public let headers: [(String, String)]
    /// The JSON body; empty for `GET` and `DELETE`.
    public let body: [UInt8]
}

/// A call that cannot be made as asked: a path parameter missing, a request that cannot go into a query string.
public struct EndpointError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Percent-encoding of path segments and query items: everything but RFC 3986's unreserved characters.
enum PercentEncoding {
    private static let hex = Array("0123456789ABCDEF".utf8)

    static func encode(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
