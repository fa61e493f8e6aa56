import FlagSigning

/// What a verifying client checks before it activates bytes (docs/signing.md, "Verifying"): a signature by a trusted
/// key over the set it asked for, the version and base version the bytes claim, and the exact bytes. The message is
/// built here from what the client knows, never taken from the server.
struct SetVerifier: Sendable {
    let set: String
    let keys: [SigningKey]

    /// A verifier of `set` trusting `keys`; `nil` when `keys` is empty: nothing is verified then.
    init?(set: String, keys: [SigningKey]) {
        guard !keys.isEmpty else { return nil }
        self.set = set
        self.keys = keys
    }

    /// Returns the key that signed `body`, a whole document of `version` (`base` `nil`) or a patch from `base` to
    /// `version`, when `signature` (a header value; `nil` when there was none) verifies; throws a refusal naming
    /// `what` was refused and why.
    @discardableResult
    func verify(
        _ body: [UInt8], version: Int, base: Int?, signature text: String?, what: String
    ) throws(SetRefusal) -> SigningKey {
        guard let text else {
            throw SetRefusal(
                .unsigned, "\(what) carries no signature, and this client verifies: refused", refusedVersion: version)
        }
        let signature: Signature
        do {
            signature = try Signature(headerValue: text)
        } catch {
            throw SetRefusal(
                .malformedSignature, "\(what) has a malformed signature (\(error))", refusedVersion: version)
        }
        guard keys.contains(where: { $0.id == signature.keyID }) else {
            throw SetRefusal(
                .untrustedKey,
                "\(what) is signed by key \(signature.keyID), which this client does not trust (trusted: "
                    + "\(keys.map(\.id).joined(separator: ", ")))", refusedVersion: version)
        }
        do {
            return try keys.verify(
                signature, for: SignedMessage(set: set, version: version, baseVersion: base, body: body))
        } catch {
            throw SetRefusal(.badSignature, "\(what) does not match its signature: \(error)", refusedVersion: version)
        }
    }

    /// Throws a rollback refusal when `version` is below `floor`, the version in use or the bootstrap document's.
    func requireNotOlder(_ version: Int, than floor: Int, what: String) throws(SetRefusal) {
        guard version < floor else { return }
        throw SetRefusal(
            .rollback,
            "\(what) is signed, but older than v\(floor), which this client already had: a replayed old version",
            refusedVersion: version)
    }
}
