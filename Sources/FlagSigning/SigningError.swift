/// Why a key, a signature or a sealed key was refused, or why the platform's cryptography failed.
///
/// Messages name what is wrong and never carry secret bytes: a private key, its seed or a key-encryption key.
public struct SigningError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        /// A public key, private key or key-encryption key that is not what it must be (base64, length).
        case malformedKey
        /// A `Flagstaff-Signature` value that does not follow `v1; key=ID; sig=BASE64`.
        case malformedSignature
        /// A signature that the key does not accept for the message, or one made by another key.
        case signatureRefused
        /// Sealed bytes that are not a sealed key of a known version.
        case malformedSealedKey
        /// A sealed key that does not open: another key-encryption key, another set, or changed bytes.
        case sealedKeyRefused
        /// The platform's cryptography failed where it should not (out of memory, a library without Ed25519).
        case cryptography
    }

    private let code: Code
    /// What went wrong and what to do about it.
    public let message: String
    /// The platform library's own reason (OpenSSL's error strings on Linux), when it gave one.
    public let underlying: String?

    private init(_ code: Code, _ message: String, underlying: String? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    static func malformedKey(_ message: String) -> SigningError {
        SigningError(.malformedKey, message)
    }

    static func malformedSignature(_ message: String) -> SigningError {
        SigningError(.malformedSignature, message)
    }

    static func signatureRefused(_ message: String) -> SigningError {
        SigningError(.signatureRefused, message)
    }

    static func malformedSealedKey(_ message: String) -> SigningError {
        SigningError(.malformedSealedKey, message)
    }

    static func sealedKeyRefused(_ message: String) -> SigningError {
        SigningError(.sealedKeyRefused, message)
    }

    static func cryptography(_ message: String, underlying: String?) -> SigningError {
        SigningError(.cryptography, message, underlying: underlying)
    }

    /// Whether a key was malformed: not base64, or not 32 bytes.
    public var isMalformedKey: Bool { code == .malformedKey }

    /// Whether a signature value did not follow `v1; key=ID; sig=BASE64`.
    public var isMalformedSignature: Bool { code == .malformedSignature }

    /// Whether a well-formed signature was refused: made by another key, or not over this message.
    public var isSignatureRefused: Bool { code == .signatureRefused }

    /// Whether sealed bytes were not a sealed key of a version this library reads.
    public var isMalformedSealedKey: Bool { code == .malformedSealedKey }

    /// Whether a sealed key did not open: a wrong key-encryption key, a wrong set, or tampered bytes.
    public var isSealedKeyRefused: Bool { code == .sealedKeyRefused }

    public var description: String {
        underlying.map { "\(message) (\($0))" } ?? message
    }
}
