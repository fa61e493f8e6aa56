/// The AES-256 key that seals private signing keys at rest, kept outside the database that holds them.
///
/// Its description and mirror never show its bytes.
public struct KeyEncryptionKey: Sendable, CustomStringConvertible, CustomReflectable {
    /// The 32 bytes of the key.
    public let bytes: [UInt8]

    /// The key with these 32 bytes; throws ``SigningError`` (``SigningError/isMalformedKey``) for another length.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == Primitives.aes256KeyCount else {
            throw SigningError.malformedKey(
                "a key-encryption key is \(Primitives.aes256KeyCount) bytes (AES-256), this one is \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// The key written as standard base64 (a key file's content, or `FLAGSERVER_SIGNING_KEY`); throws
    /// ``SigningError`` saying what is wrong, without repeating the text.
    public init(base64: String) throws {
        let bytes = try StrictBase64.decode(base64) {
            .malformedKey("a key-encryption key must be standard base64 of 32 bytes; it \($0)")
        }
        try self.init(bytes: bytes)
    }

    /// The key as standard base64, for writing a key file.
    public var base64: String { StrictBase64.encode(bytes) }

    /// A new key from the platform's secure random generator.
    public static func generate() throws -> KeyEncryptionKey {
        try KeyEncryptionKey(bytes: Primitives.randomBytes(count: Primitives.aes256KeyCount))
    }

    public var description: String { "KeyEncryptionKey(redacted)" }

    public var customMirror: Mirror { Mirror(self, children: []) }
}
