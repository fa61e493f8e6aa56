import FlagSigning
import Foundation
import Testing

/// Webhook secrets: the Standard Webhooks signature, the `whsec_` text, and sealing with the key-encryption key.
struct WebhookSecretTests {
    /// The example of the Standard Webhooks specification's reference libraries: their secret, id, timestamp and
    /// body give this signature.
    @Test func theSignatureIsTheStandardOne() throws {
        let secret = try WebhookSecret(text: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let signature = try secret.signature(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: Array(#"{"test": 2432232314}"#.utf8))
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(secret.text == "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    }

    @Test func aNewSecretIsRandomAndReadsBack() throws {
        let one = try WebhookSecret.generate()
        let other = try WebhookSecret.generate()
        #expect(one != other)
        #expect(one.bytes.count == 32)
        #expect(try WebhookSecret(text: one.text) == one)
        #expect("\(one)" == "WebhookSecret(redacted)")
        #expect(!String(reflecting: one).contains(one.text))
    }

    @Test(arguments: [
        ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "starts with \"whsec_\""),
        ("whsec_MfKQ9r8GKYqr TwjUPD8ILPZIo2LaLaSw", "whitespace"),
        ("whsec_AAAA", "24 to 64 bytes"),
    ])
    func aMalformedSecretSaysWhatIsWrong(text: String, says: String) {
        #expect {
            try WebhookSecret(text: text)
        } throws: { error in
            "\(error)".contains(says) && !"\(error)".contains(text)
        }
    }

    @Test func aSealedSecretOpensOnlyForItsHookWithItsKey() throws {
        let key = try KeyEncryptionKey.generate()
        let secret = try WebhookSecret.generate()
        let sealed = try secret.sealed(with: key, hook: "chat")
        #expect(try WebhookSecret(sealed: sealed, with: key, hook: "chat") == secret)
        #expect(try secret.sealed(with: key, hook: "chat") != sealed)  // a fresh nonce each time
        #expect(throws: SigningError.self) { try WebhookSecret(sealed: sealed, with: key, hook: "other") }
        #expect(throws: SigningError.self) {
            try WebhookSecret(sealed: sealed, with: try KeyEncryptionKey.generate(), hook: "chat")
        }
        var changed = sealed
        changed[20] ^= 1
        #expect(throws: SigningError.self) { try WebhookSecret(sealed: changed, with: key, hook: "chat") }
        #expect(throws: SigningError.self) {
            try WebhookSecret(sealed: Array(sealed.prefix(20)), with: key, hook: "chat")
        }
    }
}
