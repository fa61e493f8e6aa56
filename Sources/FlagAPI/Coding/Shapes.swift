import FlagCore

/// An answer of the API: written by the server's one adapter, read back by its clients with `decode(answer:)`.
///
/// A `Codable` answer gets both from `WireEncoder` and `WireDecoder`; an answer in a format of its own (a flag-set
/// document, the Prometheus text) implements them itself.
public protocol APIAnswer: Sendable {
    /// The answer as the server sends it.
    func encodedAnswer() throws -> [UInt8]
    /// Reads an answer; unknown members are ignored.
    /// - Throws: `WireFormatError` naming the member at fault.
    static func decode(answer bytes: [UInt8]) throws(WireFormatError) -> Self
}

/// A request of the API: its JSON body, or for `GET` and `DELETE` its query parameters.
public protocol APIRequest: Sendable, Codable {
    /// The members people write for people to read (a reason, a description), which the server refuses with a
    /// control character in them; none by default, `reason` for a `MutationRequest`.
    var writtenText: [WrittenText] { get }
}

extension APIRequest {
    /// No member written for people to read.
    public var writtenText: [WrittenText] { [] }
}

/// A member of a request that people write for people to read: it reaches terminals (flagctl) and the dashboard,
/// so a control character in it is refused (docs/admin-api.md, "Text people write").
public struct WrittenText: Sendable, Hashable {
    /// The member's path in the request, e.g. `reason` or `values[2]`.
    public var member: String
    /// Its text; `nil` when the request leaves it out.
    public var text: String?
    /// Whether the text may hold line breaks and tabs (a description); every other control character is refused.
    public var multiline: Bool

    /// A member and its text, one line unless `multiline`.
    public init(_ member: String, _ text: String?, multiline: Bool = false) {
        self.member = member
        self.text = text
        self.multiline = multiline
    }
}

/// A request that writes a version of a set: it may say why (`reason`, recorded in the audit log) and ask to write
/// what active clients cannot evaluate (`allowIncompatible`, flagctl's `--force`).
public protocol MutationRequest: APIRequest {
    /// Why, for the history and the audit log.
    var reason: String? { get }
    /// Write even what active clients cannot evaluate (the compatibility gate).
    var allowIncompatible: Bool? { get }
}

extension MutationRequest {
    /// The reason, which the audit log and the history show.
    public var writtenText: [WrittenText] { [WrittenText("reason", reason)] }
}

extension APIAnswer where Self: Codable {
    /// The canonical JSON of the answer.
    public func encodedAnswer() throws -> [UInt8] {
        try WireEncoder.encode(self)
    }

    /// Reads the answer with `WireDecoder`; messages name the type, e.g. `the TokenList's "tokens[0].name" …`.
    public static func decode(answer bytes: [UInt8]) throws(WireFormatError) -> Self {
        try WireDecoder.decode(Self.self, from: bytes, format: String(describing: Self.self))
    }
}

/// A request with nothing in it: a `GET` without parameters.
public struct NoRequest: APIRequest, Hashable {
    /// The empty request.
    public init() {}
}

/// A request that only says why: the actions on one flag (kill, restore, archive, …), deletes, session starts.
public struct ChangeRequest: MutationRequest, Hashable {
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A request with a reason, and `--force`'s `allowIncompatible`.
    public init(reason: String? = nil, allowIncompatible: Bool? = nil) {
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}

/// An answer in a format that is not the admin API's JSON, kept as its bytes: a flag-set document (FlagCore's
/// format, served with its `ETag` and signature), the Prometheus text of `/metrics`, a dashboard file.
public struct OpaqueAnswer: APIAnswer, Hashable {
    /// The body as sent.
    public let bytes: [UInt8]

    /// An answer of these bytes.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The bytes.
    public func encodedAnswer() -> [UInt8] { bytes }

    /// The bytes, unread.
    public static func decode(answer bytes: [UInt8]) -> OpaqueAnswer { OpaqueAnswer(bytes: bytes) }
}

/// A route that answers with no body (`204`).
public struct NoAnswer: APIAnswer, Hashable {
    /// The empty answer.
    public init() {}

    /// No bytes.
    public func encodedAnswer() -> [UInt8] { [] }

    /// Anything: the body is not read.
    public static func decode(answer bytes: [UInt8]) -> NoAnswer { NoAnswer() }
}
