import FlagCore

/// What a set's signature covers: the set, the version, the version a patch applies to, and the exact body bytes.
///
/// Its ``bytes`` are the UTF-8 of five lines joined by `\n`, with no newline at the end:
/// ```
/// flagstaff-signature-v1
/// {set}
/// {version}
/// {base version, or - when the body is a whole document}
/// {lowercase hex SHA-256 of the exact body bytes}
/// ```
/// Versions are decimal integers as Swift writes them. Only the set may contain a newline, and it is the one free
/// field, so a message reads back unambiguously from its end.
public struct SignedMessage: Sendable, Hashable {
    /// The first line: the format and its version.
    public static let formatLine = "flagstaff-signature-v1"

    /// The flag set the body belongs to.
    public let set: String
    /// The version the body is, or brings the set to.
    public let version: Int
    /// The version a patch applies to; `nil` for a whole document.
    public let baseVersion: Int?
    /// The SHA-256 of the body, as 64 lowercase hexadecimal digits.
    public let bodySHA256: String

    /// The message over `body`, the exact bytes sent: a whole document when `baseVersion` is `nil`, else a patch
    /// from `baseVersion` to `version`.
    public init(set: String, version: Int, baseVersion: Int?, body: some Sequence<UInt8>) {
        self.set = set
        self.version = version
        self.baseVersion = baseVersion
        self.bodySHA256 = SHA256.hexString(Self.digest(body))
    }

    /// The SHA-256 of `body` from the platform's cryptography (libcrypto, CryptoKit), several times faster than
    /// FlagCore's portable one on a large document. Should the library fail (it has no reason to but memory),
    /// FlagCore's gives the same digest.
    private static func digest(_ body: some Sequence<UInt8>) -> [UInt8] {
        let platform =
            body.withContiguousStorageIfAvailable { buffer in
                Result { try Primitives.sha256(UnsafeRawBufferPointer(buffer)) }
            } ?? Result { try Array(body).withUnsafeBytes { try Primitives.sha256($0) } }
        switch platform {
        case .success(let digest): return digest
        case .failure: return SHA256.hash(body)
        }
    }

    /// The message as text: five lines without a final newline.
    public var text: String {
        [Self.formatLine, set, String(version), baseVersion.map(String.init) ?? "-", bodySHA256]
            .joined(separator: "\n")
    }

    /// The bytes that are signed: the UTF-8 of ``text``.
    public var bytes: [UInt8] { Array(text.utf8) }
}
