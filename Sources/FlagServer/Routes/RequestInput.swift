import FlagCore
import FlagHTTP
import Foundation

/// The parameters of a request: members of its JSON object body, then its query parameters, read with
/// `400`s that name the field at fault.
struct RequestInput {
    let request: HTTPRequest
    let body: [String: JSONValue]

    /// Reads the body as a JSON object (an empty body is an empty object).
    init(_ request: HTTPRequest) throws {
        self.request = request
        guard !request.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            body = [:]
            return
        }
        let value: JSONValue
        do {
            value = try JSONReader.parse(request.body)
        } catch {
            throw ServiceError.badRequest("the body is not valid JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw ServiceError.badRequest("the body must be a JSON object")
        }
        body = object
    }

    /// Reads the body like `init(_:)`, except that the member `name` is returned as its exact bytes instead of being
    /// parsed into a `JSONValue`: a flag-set document is then decoded once, straight from the request, rather than
    /// parsed, re-encoded and parsed again (a third of a 1,000-flag import's time).
    static func reading(_ request: HTTPRequest, rawMember name: String) throws -> (input: RequestInput, raw: [UInt8]?) {
        guard !request.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            return (RequestInput(request: request, body: [:]), nil)
        }
        var members: [String: JSONValue] = [:]
        var raw: [UInt8]?
        var isObject = true
        do {
            try JSONReader.read(request.body) { reader in
                guard try reader.peek() == .object else {
                    isObject = false
                    try reader.skipValue()
                    return
                }
                try reader.readObject { reader, field in
                    if field == name {
                        raw = try reader.readRawValue()
                    } else {
                        members[field] = try reader.readValue()
                    }
                }
            }
        } catch {
            throw ServiceError.badRequest("the body is not valid JSON: \(error)")
        }
        guard isObject else { throw ServiceError.badRequest("the body must be a JSON object") }
        return (RequestInput(request: request, body: members), raw)
    }

    private init(request: HTTPRequest, body: [String: JSONValue]) {
        self.request = request
        self.body = body
    }

    /// A member of the body, as sent.
    func value(_ name: String) -> JSONValue? {
        body[name]
    }

    /// A value for a flag of type `type`: the member `name` as JSON, or `nameText` read as that type reads text
    /// (`"valueText": "42"`, `FlagType.value(fromText:)`), so that a client such as flagctl need not fetch the flag
    /// to learn its type. `nil` when neither is given; 400 when both are, or when the text is not such a value.
    func value(_ name: String, of type: FlagType) throws -> JSONValue? {
        let textName = name + "Text"
        switch (body[name], try string(textName)) {
        case (nil, nil): return nil
        case (let value?, nil): return value
        case (nil, let text?):
            do {
                return try type.value(fromText: text)
            } catch {
                throw ServiceError.badRequest(error.message, path: textName)
            }
        case (.some, .some):
            throw ServiceError.badRequest("give \"\(name)\" or \"\(textName)\", not both", path: textName)
        }
    }

    /// A string from the body or the query.
    func string(_ name: String) throws -> String? {
        switch body[name] {
        case .string(let text)?: return text
        case .null?, nil: return request.query(name)
        case .some: throw ServiceError.badRequest("\"\(name)\" must be a string", path: name)
        }
    }

    /// Whether the caller asks to write what active clients cannot evaluate (`allowIncompatible`, flagctl
    /// `--force`), from the body or the query.
    func allowsIncompatible() throws -> Bool {
        try bool("allowIncompatible") ?? false
    }

    /// A required string.
    func requireString(_ name: String) throws -> String {
        guard let text = try string(name), !text.isEmpty else {
            throw ServiceError.badRequest("\"\(name)\" is required", path: name)
        }
        return text
    }

    /// An integer from the body or the query.
    func int(_ name: String) throws -> Int? {
        switch body[name] {
        case .int(let number)?: return Int(exactly: number)
        case .double(let number)? where number.rounded() == number && abs(number) < 1e15: return Int(number)
        case .null?, nil:
            guard let text = request.query(name) else { return nil }
            guard let number = Int(text) else {
                throw ServiceError.badRequest("\"\(name)\" must be an integer, not \"\(text)\"", path: name)
            }
            return number
        case .some: throw ServiceError.badRequest("\"\(name)\" must be an integer", path: name)
        }
    }

    /// A number from the body or the query.
    func double(_ name: String) throws -> Double? {
        switch body[name] {
        case .int(let number)?: return Double(number)
        case .double(let number)?: return number
        case .null?, nil:
            guard let text = request.query(name) else { return nil }
            guard let number = Double(text), number.isFinite else {
                throw ServiceError.badRequest("\"\(name)\" must be a number, not \"\(text)\"", path: name)
            }
            return number
        case .some: throw ServiceError.badRequest("\"\(name)\" must be a number", path: name)
        }
    }

    /// A boolean from the body or the query (`true`/`false`, `1`/`0`).
    func bool(_ name: String) throws -> Bool? {
        switch body[name] {
        case .bool(let flag)?: return flag
        case .null?, nil:
            guard let text = request.query(name) else { return nil }
            switch text {
            case "true", "1", "": return true
            case "false", "0": return false
            default: throw ServiceError.badRequest("\"\(name)\" must be true or false, not \"\(text)\"", path: name)
            }
        case .some: throw ServiceError.badRequest("\"\(name)\" must be true or false", path: name)
        }
    }

    /// An ISO-8601 instant from the body or the query.
    func date(_ name: String) throws -> Date? {
        guard let text = try string(name) else { return nil }
        do {
            return try ISO8601.date(from: text)
        } catch {
            throw ServiceError.badRequest("\"\(name)\": \(error.message)", path: name)
        }
    }

    /// A duration such as `2h` or `90s` from the body or the query, in seconds.
    func duration(_ name: String) throws -> Int? {
        guard let text = try string(name) else { return nil }
        do {
            return try DurationText.parse(text)
        } catch {
            throw ServiceError.badRequest("\"\(name)\": \(error.message)", path: name)
        }
    }

    /// The optional reason every mutation carries into the audit log.
    func reason() throws -> String? {
        try string("reason")
    }

    /// The version named by `If-Match: "{version}"`, if the header is present.
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
