/// A signature as it travels: the id of the key that made it and its 64 bytes.
///
/// On an HTTP answer it is the header `Flagstaff-Signature: v1; key=ID; sig=BASE64`; in a server-sent event, a
/// `signature:` line with the same value before the `data:` lines. `ID` is the signing key's
/// ``SigningKey/id`` and `BASE64` the standard base64 of the signature, 88 characters.
/// ```swift
/// let signature = try Signature(headerValue: response.value(forHTTPHeaderField: Signature.headerName) ?? "")
/// try trustedKeys.verify(signature, for: SignedMessage(set: "mobile", version: 7, baseVersion: nil, body: body))
/// ```
public struct Signature: Sendable, Hashable, CustomStringConvertible {
    /// The HTTP header that carries a signature.
    public static let headerName = "Flagstaff-Signature"
    /// The server-sent event field that carries a signature.
    public static let eventField = "signature"
    /// The version of the value's format, its first part.
    public static let formatVersion = "v1"

    /// The ``SigningKey/id`` of the key that made the signature: 16 lowercase hexadecimal characters.
    public let keyID: String
    /// The 64 bytes of the Ed25519 signature.
    public let bytes: [UInt8]

    /// A signature by the key with id `keyID`; throws ``SigningError`` when the id is not 16 lowercase hexadecimal
    /// characters or the signature not 64 bytes.
    public init(keyID: String, bytes: [UInt8]) throws {
        guard Self.isKeyID(keyID) else {
            throw SigningError.malformedSignature(
                "a key id is 16 lowercase hexadecimal characters, not '\(Self.excerpt(keyID))'")
        }
        guard bytes.count == Primitives.ed25519SignatureCount else {
            throw SigningError.malformedSignature(
                "an Ed25519 signature is \(Primitives.ed25519SignatureCount) bytes, this one is \(bytes.count)")
        }
        self.keyID = keyID
        self.bytes = bytes
    }

    /// The value of a `Flagstaff-Signature` header or a `signature:` event field, read strictly.
    ///
    /// Exactly `v1; key=ID; sig=BASE64`: the parts in this order, each `;` followed by one space. Spaces and tabs
    /// around the whole value are ignored, as HTTP ignores them around a field value. Throws ``SigningError``
    /// (``SigningError/isMalformedSignature``) naming the part that is wrong.
    public init(headerValue: String) throws {
        let value = Self.trimmingOptionalWhitespace(headerValue)
        let usage = "a signature must read 'v1; key=ID; sig=BASE64'"
        guard !value.isEmpty else {
            throw SigningError.malformedSignature("\(usage); this one is empty")
        }
        let parts = value.split(separator: ";", omittingEmptySubsequences: false)
        guard let version = parts.first, version == Self.formatVersion[...] else {
            let first = parts.first.map(String.init) ?? ""
            let reason =
                first.hasPrefix("v") && !first.contains(" ")
                ? "its version '\(Self.excerpt(first))' is not one this library reads (v1): update the client"
                : "it starts with '\(Self.excerpt(first))'"
            throw SigningError.malformedSignature("\(usage); \(reason)")
        }
        guard parts.count == 3 else {
            throw SigningError.malformedSignature(
                "\(usage); this one has \(parts.count) parts separated by ';', not 3")
        }
        guard parts[1].hasPrefix(" key=") else {
            throw SigningError.malformedSignature(
                "\(usage); the second part must be ' key=ID', not '\(Self.excerpt(String(parts[1])))'")
        }
        guard parts[2].hasPrefix(" sig=") else {
            throw SigningError.malformedSignature(
                "\(usage); the third part must be ' sig=BASE64', not '\(Self.excerpt(String(parts[2])))'")
        }
        let keyID = String(parts[1].dropFirst(" key=".count))
        guard Self.isKeyID(keyID) else {
            throw SigningError.malformedSignature(
                "\(usage); the key id must be 16 lowercase hexadecimal characters, not '\(Self.excerpt(keyID))'")
        }
        let bytes = try StrictBase64.decode(String(parts[2].dropFirst(" sig=".count))) {
            .malformedSignature("\(usage); the signature after 'sig=' \($0)")
        }
        guard bytes.count == Primitives.ed25519SignatureCount else {
            throw SigningError.malformedSignature(
                "\(usage); the signature after 'sig=' decodes to \(bytes.count) bytes, not "
                    + "\(Primitives.ed25519SignatureCount)")
        }
        self.keyID = keyID
        self.bytes = bytes
    }

    /// The value of a `Flagstaff-Signature` header or a `signature:` event field: `v1; key=ID; sig=BASE64`.
    public var headerValue: String {
        "\(Self.formatVersion); key=\(keyID); sig=\(StrictBase64.encode(bytes))"
    }

    public var description: String { headerValue }

    private static func isKeyID(_ text: String) -> Bool {
        text.utf8.count == 16 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// HTTP's optional whitespace (RFC 9110 §5.6.3) around a field value: spaces and horizontal tabs.
    private static func trimmingOptionalWhitespace(_ text: String) -> String {
        let isOptionalWhitespace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        let bytes = Array(text.utf8)
        guard let start = bytes.firstIndex(where: { !isOptionalWhitespace($0) }),
            let end = bytes.lastIndex(where: { !isOptionalWhitespace($0) })
        else { return "" }
        return String(decoding: bytes[start...end], as: UTF8.self)
    }

    /// The start of a wrong part, for an error message: enough to recognize it, never a whole header of junk.
    private static func excerpt(_ text: String) -> String {
        text.count <= 24 ? text : text.prefix(24) + "…"
    }
}
