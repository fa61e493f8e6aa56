import FlagSigning
import Testing

@Suite("SigningKey")
struct SigningKeyTests {
    /// RFC 8032's TEST 1 public key; its id is the SHA-256 of the 32 bytes (`xxd -r -p | sha256sum`), cut to 16.
    static let test1Base64 = "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="

    @Test func aKeyReadsFromBase64AndHasItsID() throws {
        let key = try SigningKey(base64: Self.test1Base64)
        #expect(key.publicKey == RFC8032.vectors[0].publicKey)
        #expect(key.id == "21fe31dfa154a261")
        #expect(key.base64 == Self.test1Base64)
        #expect(try SigningKey(publicKey: key.publicKey) == key)
        #expect("\(key)" == "SigningKey(21fe31dfa154a261)")
    }

    @Test(arguments: [
        ("", "is empty"),
        (test1Base64 + "\n", "contains whitespace or a line break (a value read from a file often ends in one)"),
        (" " + test1Base64, "contains whitespace or a line break (a value read from a file often ends in one)"),
        (
            "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
            "uses the URL-safe alphabet ('-', '_') where standard base64 has '+' and '/'"
        ),
        (
            String(test1Base64.dropLast()),
            "is 43 characters long, not a multiple of 4: standard base64 is padded with '='"
        ),
        (
            "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHUR!=",
            "has characters outside standard base64, or '=' before the end"
        ),
        (
            "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURp=",
            "is not the canonical encoding of its bytes (the unused bits before '=' must be zero)"
        ),
        ("AAAA", "decodes to 3 bytes"),
        // 64 bytes: what a libsodium secret key or a signature would be.
        (String(repeating: "A", count: 86) + "==", "decodes to 64 bytes"),
    ])
    func malformedKeysAreRefusedSayingWhy(text: String, reason: String) throws {
        let error = try #require(throws: SigningError.self) { try SigningKey(base64: text) }
        #expect(error.isMalformedKey)
        #expect(
            error.message
                == "a signing key must be the standard base64 of its 32 bytes (44 characters ending in '='); "
                + "this one \(reason)")
        #expect(text.count < 8 || !error.message.contains(text), "the message never repeats the text")
    }

    @Test func rawKeysOfTheWrongLengthAreRefused() throws {
        let error = try #require(throws: SigningError.self) { try SigningKey(publicKey: [1, 2, 3]) }
        #expect(error.isMalformedKey)
        #expect(error.message == "an Ed25519 public key is 32 bytes, this one is 3")
    }

    @Test func keysCompareByTheirBytes() throws {
        let keys = try RFC8032.vectors.map { try SigningKey(publicKey: $0.publicKey) }
        #expect(Set(keys).count == RFC8032.vectors.count)
        #expect(Set(keys.map(\.id)).count == RFC8032.vectors.count)
        #expect(keys.allSatisfy { $0.id.count == 16 && $0.id.allSatisfy { "0123456789abcdef".contains($0) } })
    }
}
