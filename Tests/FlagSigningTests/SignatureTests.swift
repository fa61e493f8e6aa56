import FlagSigning
import Testing

@Suite("Signature header")
struct SignatureTests {
    /// Made by Python's `cryptography` from RFC 8032's TEST 1 seed over SignedMessageTests' whole-document example.
    static let pythonHeader =
        "v1; key=21fe31dfa154a261; "
        + "sig=C6iPaOfwdl8YuzQL3SwpsJCpENnsoiHP30ndFJBuRGRAoDM2BIYaJwH1GLRhuGqGeD4o1LaIxblEhALZGTW6CA=="
    static let message = SignedMessage(set: "mobile", version: 7, baseVersion: nil, body: Array(#"{"flags":{}}"#.utf8))

    @Test func aSignatureFormatsAndParsesBack() throws {
        let key = try PrivateSigningKey(seed: RFC8032.vectors[0].seed)
        let signature = try key.sign(Self.message)
        #expect(signature.keyID == "21fe31dfa154a261")
        #expect(try Signature(headerValue: signature.headerValue) == signature)
        #expect(signature.headerValue.hasPrefix("v1; key=21fe31dfa154a261; sig="))
        #expect(signature.headerValue.count == "v1; key=; sig=".count + 16 + 88)
        #if !canImport(CryptoKit)
            #expect(signature.headerValue == Self.pythonHeader)
        #endif
    }

    @Test func anotherImplementationsSignatureVerifies() throws {
        let signature = try Signature(headerValue: Self.pythonHeader)
        let key = try SigningKey(base64: SigningKeyTests.test1Base64)
        try key.verify(signature, for: Self.message)
        #expect(try [key].verify(signature, for: Self.message) == key)
    }

    @Test func surroundingSpacesAndTabsAreIgnoredAsHTTPDoes() throws {
        let signature = try Signature(headerValue: Self.pythonHeader)
        #expect(try Signature(headerValue: " \t" + Self.pythonHeader + "\t ") == signature)
    }

    @Test(arguments: [
        ("", "this one is empty"),
        ("   ", "this one is empty"),
        (
            "v2; key=21fe31dfa154a261; sig=AAAA",
            "its version 'v2' is not one this library reads (v1): update the client"
        ),
        ("V1; key=21fe31dfa154a261; sig=AAAA", "it starts with 'V1'"),
        ("key=21fe31dfa154a261; sig=AAAA", "it starts with 'key=21fe31dfa154a261'"),
        ("v1", "this one has 1 parts separated by ';', not 3"),
        ("v1; key=21fe31dfa154a261", "this one has 2 parts separated by ';', not 3"),
        ("v1; key=21fe31dfa154a261; sig=AAAA; x=1", "this one has 4 parts separated by ';', not 3"),
        ("v1;key=21fe31dfa154a261; sig=AAAA", "the second part must be ' key=ID', not 'key=21fe31dfa154a261'"),
        ("v1; sig=AAAA; key=21fe31dfa154a261", "the second part must be ' key=ID', not ' sig=AAAA'"),
        ("v1; key=21fe31dfa154a261;  sig=AAAA", "the third part must be ' sig=BASE64', not '  sig=AAAA'"),
        (
            "v1; key=21FE31DFA154A261; sig=AAAA",
            "the key id must be 16 lowercase hexadecimal characters, not '21FE31DFA154A261'"
        ),
        (
            "v1; key=21fe31dfa154a26; sig=AAAA",
            "the key id must be 16 lowercase hexadecimal characters, not '21fe31dfa154a26'"
        ),
        ("v1; key=; sig=AAAA", "the key id must be 16 lowercase hexadecimal characters, not ''"),
        ("v1; key=21fe31dfa154a261; sig=", "the signature after 'sig=' is empty"),
        (
            "v1; key=21fe31dfa154a261; sig=AAA",
            "the signature after 'sig=' is 3 characters long, not a multiple of 4: standard base64 is padded with '='"
        ),
        ("v1; key=21fe31dfa154a261; sig=AAAA", "the signature after 'sig=' decodes to 3 bytes, not 64"),
        (
            "v1; key=21fe31dfa154a261; sig=A+/_",
            "the signature after 'sig=' uses the URL-safe alphabet ('-', '_') where standard base64 has '+' and '/'"
        ),
    ])
    func malformedValuesAreRefusedNamingThePart(value: String, reason: String) throws {
        let error = try #require(throws: SigningError.self) { try Signature(headerValue: value) }
        #expect(error.isMalformedSignature)
        #expect(error.message == "a signature must read 'v1; key=ID; sig=BASE64'; \(reason)")
    }

    @Test func aLongWrongPartIsCutShortInTheMessage() throws {
        let junk = String(repeating: "x", count: 5000)
        let error = try #require(throws: SigningError.self) { try Signature(headerValue: junk) }
        #expect(
            error.message
                == "a signature must read 'v1; key=ID; sig=BASE64'; it starts with 'xxxxxxxxxxxxxxxxxxxxxxxx…'")
    }

    @Test func aSignatureIsRefusedForAnotherMessageOrKey() throws {
        let signature = try Signature(headerValue: Self.pythonHeader)
        let key = try SigningKey(base64: SigningKeyTests.test1Base64)
        let body = Array(#"{"flags":{}}"#.utf8)
        for other in [
            SignedMessage(set: "web", version: 7, baseVersion: nil, body: body),
            SignedMessage(set: "mobile", version: 6, baseVersion: nil, body: body),
            SignedMessage(set: "mobile", version: 7, baseVersion: 6, body: body),
            SignedMessage(set: "mobile", version: 7, baseVersion: nil, body: body + [0x0a]),
        ] {
            let error = try #require(throws: SigningError.self) { try key.verify(signature, for: other) }
            #expect(error.isSignatureRefused)
            #expect(error.message.hasPrefix("the signature by key 21fe31dfa154a261 does not match set '\(other.set)'"))
        }
        let otherKey = try SigningKey(publicKey: RFC8032.vectors[1].publicKey)
        let wrongKey = try #require(throws: SigningError.self) { try otherKey.verify(signature, for: Self.message) }
        #expect(wrongKey.message == "the signature names key 21fe31dfa154a261, not this key (\(otherKey.id))")
        let untrusted = try #require(throws: SigningError.self) { try [otherKey].verify(signature, for: Self.message) }
        #expect(
            untrusted.message
                == "the signature names key 21fe31dfa154a261, which is not trusted (trusted: \(otherKey.id))")
        let none = try #require(throws: SigningError.self) { try [SigningKey]().verify(signature, for: Self.message) }
        #expect(none.message == "the signature names key 21fe31dfa154a261, which is not trusted (trusted: none)")
    }

    @Test func aSignatureIsMadeOnlyFromAKeyIDAnd64Bytes() throws {
        #expect(throws: SigningError.self) { try Signature(keyID: "21fe31dfa154a261", bytes: [0]) }
        #expect(throws: SigningError.self) { try Signature(keyID: "nothex", bytes: [UInt8](repeating: 0, count: 64)) }
        #expect(throws: Never.self) {
            try Signature(keyID: "21fe31dfa154a261", bytes: [UInt8](repeating: 0, count: 64))
        }
    }
}
