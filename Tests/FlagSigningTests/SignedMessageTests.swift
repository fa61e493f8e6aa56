import FlagCore
import FlagSigning
import Testing

@Suite("Signed message")
struct SignedMessageTests {
    /// The docs' example (docs/signing.md): digest from `printf '{"flags":{}}' | sha256sum`.
    @Test func aWholeDocumentsMessage() {
        let message = SignedMessage(set: "mobile", version: 7, baseVersion: nil, body: Array(#"{"flags":{}}"#.utf8))
        #expect(message.bodySHA256 == "b0c7411faa13dd876ec5dc0ee0d37461b0346afcd63632f8d2619f55f4f6dc48")
        #expect(
            message.text
                == "flagstaff-signature-v1\nmobile\n7\n-\n"
                + "b0c7411faa13dd876ec5dc0ee0d37461b0346afcd63632f8d2619f55f4f6dc48")
        #expect(message.bytes == Array(message.text.utf8))
    }

    @Test func aPatchsMessageNamesItsBaseVersion() {
        let message = SignedMessage(set: "mobile", version: 8, baseVersion: 7, body: Array(#"{"version":8}"#.utf8))
        #expect(
            message.text
                == "flagstaff-signature-v1\nmobile\n8\n7\n"
                + "9e7feab6660f23cb63046272f63f9bf3dd2a83f92d5af0962878464a8c038783")
    }

    @Test func theBodyIsHashedAsBytesWhateverItsContainer() {
        let body = Array("é ✓ 😀\n".utf8)
        let fromArray = SignedMessage(set: "s", version: 1, baseVersion: nil, body: body)
        let fromSlice = SignedMessage(set: "s", version: 1, baseVersion: nil, body: body[...])
        let fromView = SignedMessage(set: "s", version: 1, baseVersion: nil, body: "é ✓ 😀\n".utf8)
        #expect(fromArray == fromSlice && fromSlice == fromView)
        #expect(fromArray.bodySHA256 == SHA256.hex(body))
        #expect(SignedMessage(set: "s", version: 1, baseVersion: nil, body: []).bodySHA256 == SHA256.hex(""))
    }

    /// The platform's SHA-256 (libcrypto, CryptoKit) gives FlagCore's digest, for a body in one piece or not.
    @Test func theFastDigestIsTheSHA256OfTheBody() {
        let sequence = (0..<1_000_003).lazy.map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let body = Array(sequence)
        let expected = SHA256.hex(body)
        #expect(SignedMessage(set: "s", version: 1, baseVersion: nil, body: body).bodySHA256 == expected)
        #expect(SignedMessage(set: "s", version: 1, baseVersion: nil, body: sequence).bodySHA256 == expected)
        #expect(
            SignedMessage(set: "s", version: 1, baseVersion: nil, body: body[1...]).bodySHA256 == SHA256.hex(body[1...])
        )
    }

    /// Every field changes the bytes: a signature over one cannot be moved to another set, version or base.
    @Test func everyFieldIsInTheBytes() {
        let body = Array("{}".utf8)
        let messages = [
            SignedMessage(set: "mobile", version: 7, baseVersion: nil, body: body),
            SignedMessage(set: "web", version: 7, baseVersion: nil, body: body),
            SignedMessage(set: "mobile", version: 8, baseVersion: nil, body: body),
            SignedMessage(set: "mobile", version: 7, baseVersion: 6, body: body),
            SignedMessage(set: "mobile", version: 7, baseVersion: nil, body: body + [0x20]),
            // A set name with a newline cannot pass for other fields: the fields are read back from the end.
            SignedMessage(set: "mobile\n7", version: 7, baseVersion: nil, body: body),
        ]
        #expect(Set(messages.map(\.bytes)).count == messages.count)
    }
}
