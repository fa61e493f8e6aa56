import FlagSigning
import Foundation
import Testing

/// Where Tests/signing/run put Python's file and wants Swift's; outside the suite, whose trait reads it.
let crossCheckDirectory = ProcessInfo.processInfo.environment["FLAGSTAFF_SIGNING_CROSSCHECK"].map {
    URL(fileURLWithPath: $0, isDirectory: true)
}

/// The Swift half of the cross-check against Python's `cryptography` (Tests/signing/run): Python signs and seals
/// into `python.json`, this suite verifies and opens those, then signs and seals into `swift.json` for Python to
/// verify and open. Both sides build the signed message from its parts, each from docs/signing.md.
struct CrossCheckTests {
    /// One test, so that a run without Python says it was skipped in one line.
    @Test(
        .enabled(
            if: crossCheckDirectory != nil,
            "Python cross-check skipped: run it with `Tests/signing/run` (Python's cryptography in a venv)"))
    func pythonAndSwiftAgree() throws {
        let directory = try #require(crossCheckDirectory)
        try verifyAndOpenPythons(in: directory)
        try signAndSealForPython(in: directory)
    }

    /// A signed body with its message's parts; `valid` says whether the signature should verify.
    struct SignedCase: Codable {
        var name: String
        var publicKey: String
        var set: String
        var version: Int
        var baseVersion: Int?
        var body: String
        var signature: String
        var valid: Bool
    }

    /// A private key sealed for `set`, with the public key it must open to.
    struct SealedCase: Codable {
        var name: String
        var keyEncryptionKey: String
        var set: String
        var sealed: String
        var publicKey: String
    }

    struct Cases: Codable {
        var signed: [SignedCase]
        var sealed: [SealedCase]
    }

    /// Python's signatures verify (and its wrong ones are refused), its sealed keys open.
    private func verifyAndOpenPythons(in directory: URL) throws {
        let cases = try JSONDecoder().decode(
            Cases.self, from: Data(contentsOf: directory.appendingPathComponent("python.json")))
        #expect(cases.signed.count >= 8 && cases.sealed.count >= 3)
        for item in cases.signed {
            let key = try SigningKey(base64: item.publicKey)
            let signature = try Signature(headerValue: item.signature)
            let message = SignedMessage(
                set: item.set, version: item.version, baseVersion: item.baseVersion, body: try Self.bytes(item.body))
            if item.valid {
                #expect(throws: Never.self, "\(item.name)") { try [key].verify(signature, for: message) }
            } else {
                let error = try #require(throws: SigningError.self, "\(item.name)") {
                    try [key].verify(signature, for: message)
                }
                #expect(error.isSignatureRefused, "\(item.name)")
            }
        }
        for item in cases.sealed {
            let kek = try KeyEncryptionKey(bytes: try Self.bytes(item.keyEncryptionKey))
            let opened = try PrivateSigningKey(sealed: try Self.bytes(item.sealed), with: kek, set: item.set)
            #expect(opened.signingKey.base64 == item.publicKey, "\(item.name)")
        }
    }

    /// Signatures and sealed keys for Python to check, over bodies and set names that could trip either side.
    private func signAndSealForPython(in directory: URL) throws {
        var signed: [SignedCase] = []
        var sealed: [SealedCase] = []
        let bodies: [(String, [UInt8])] = [
            ("document", Array(#"{"flags":{"checkout":{"type":"boolean","default":false}}}"#.utf8)),
            ("empty body", []),
            ("every byte value", (0...255).map(UInt8.init)),
            ("200 KB", (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }),
        ]
        for (index, set) in ["mobile", "café-ñ", "a/b c"].enumerated() {
            let key = try PrivateSigningKey.generate()
            let kek = try KeyEncryptionKey.generate()
            for (name, body) in bodies {
                for baseVersion in [nil, index + 40] {
                    let message = SignedMessage(set: set, version: index + 41, baseVersion: baseVersion, body: body)
                    signed.append(
                        SignedCase(
                            name: "\(set) \(name) base \(baseVersion.map(String.init) ?? "-")",
                            publicKey: key.signingKey.base64, set: set, version: message.version,
                            baseVersion: baseVersion, body: Data(body).base64EncodedString(),
                            signature: try key.sign(message).headerValue, valid: true))
                }
            }
            sealed.append(
                SealedCase(
                    name: set, keyEncryptionKey: Data(kek.bytes).base64EncodedString(), set: set,
                    sealed: Data(try key.sealed(with: kek, set: set)).base64EncodedString(),
                    publicKey: key.signingKey.base64))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(Cases(signed: signed, sealed: sealed))
            .write(to: directory.appendingPathComponent("swift.json"))
    }

    /// The bytes of standard base64 in the exchange files, which both sides write.
    private static func bytes(_ base64: String) throws -> [UInt8] {
        [UInt8](try #require(Data(base64Encoded: base64), "not base64 in the exchange file: \(base64.prefix(20))"))
    }
}
