/// Why a verifying client (``FlagClient/Configuration/trustedKeys`` not empty) did not activate a document or a
/// patch, or did not start from its cache or bootstrap document: in ``ClientState/refused(version:_:)`` and, with
/// the same message, in the log.
///
/// ```swift
/// if case .refused(_, let refusal) = client.state, refusal.code == .untrustedKey { reportKeyRotationProblem() }
/// ```
public struct SetRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of refusal; the raw values are stable, for logs and dashboards.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The stable name, such as `BAD_SIGNATURE`.
        public let rawValue: String

        /// The code with the stable name `rawValue`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// No signature came with the bytes.
        public static let unsigned = Code(rawValue: "UNSIGNED")
        /// A signature value that does not read as `v1; key=ID; sig=BASE64`.
        public static let malformedSignature = Code(rawValue: "MALFORMED_SIGNATURE")
        /// Signed by a key the client does not trust (another set's key, or one not shipped with the app yet).
        public static let untrustedKey = Code(rawValue: "UNTRUSTED_KEY")
        /// A trusted key's signature that does not match: the bytes changed, or it was made for another set,
        /// version or base version.
        public static let badSignature = Code(rawValue: "BAD_SIGNATURE")
        /// A properly signed version lower than the one in use or the bootstrap document's: a replay.
        public static let rollback = Code(rawValue: "ROLLBACK")
        /// Cached patches that do not follow each other from the cached document's version.
        public static let brokenChain = Code(rawValue: "BROKEN_CHAIN")

        /// The stable name.
        public var description: String { rawValue }
    }

    /// What kind of refusal.
    public let code: Code
    /// What was refused and why, for people; never holds a key or a token.
    public let message: String
    /// The version the refused bytes claimed, when it could be read.
    public let refusedVersion: Int?

    init(_ code: Code, _ message: String, refusedVersion: Int?) {
        self.code = code
        self.message = message
        self.refusedVersion = refusedVersion
    }

    /// The code, then the message: `BAD_SIGNATURE: the patch v8 (from v7) …`.
    public var description: String { "\(code): \(message)" }
}
