// libFuzzer harness for what FlagSigning reads from outside: the `Flagstaff-Signature` value (from any server,
// proxy or cache), public keys and key-encryption keys as base64 (from configuration and `flagctl verify --key`),
// sealed private keys (from the database), and webhook secrets as `whsec_` text and sealed. Run with `Fuzz/run signing`.
//
// The first input byte picks the reader, the rest is its input. Properties checked on every input; a violation traps:
// - no crash, no sanitizer report, whatever the bytes;
// - an accepted signature value is 16 hex digits and 64 bytes, and writes back as the input without the spaces and
//   tabs around it (one spelling per signature);
// - an accepted public key or key-encryption key writes back as exactly the input, and a key's id is the first 16
//   hex digits of the SHA-256 of its bytes;
// - a key's refusal never repeats the text refused (it may be a secret pasted in the wrong place);
// - a sealed key opens only if it is the one sealing made: random bytes never open, and what `sealed` makes opens
//   for its set only; the same for a webhook's sealed secret and its hook;
// - an accepted webhook secret writes back as exactly the input, and its refusal never repeats it.

import FlagCore

@testable import FlagSigning

private let keyEncryptionKey = try! KeyEncryptionKey(bytes: Array(0..<32))
private let sealed = try! PrivateSigningKey(seed: Array(repeating: 7, count: 32))
    .sealed(with: keyEncryptionKey, set: "mobile")
private let sealedSecret = try! WebhookSecret(bytes: Array(repeating: 9, count: 32))
    .sealed(with: keyEncryptionKey, hook: "chat")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let choice = input.byte() % 6
    let bytes = Array(input.bytes)
    let text = String(decoding: bytes, as: UTF8.self)
    switch choice {
    case 0:
        do {
            let signature = try Signature(headerValue: text)
            check(signature.keyID.count == 16 && signature.bytes.count == 64, "accepted \(text.debugDescription)")
            let trimmed = text.trimmingSpacesAndTabs
            check(signature.headerValue == trimmed, "\(text.debugDescription) writes back as \(signature.headerValue)")
        } catch {
            // A signature is public: its refusal may quote the start of a wrong part.
            check(error is SigningError, "refused with \(type(of: error)): \(error)")
        }
    case 1:
        do {
            let key = try SigningKey(base64: text)
            check(key.base64 == text, "the key \(text.debugDescription) writes back as \(key.base64)")
            check(key.id == String(SHA256.hex(key.publicKey).prefix(16)), "the id of \(key.base64)")
        } catch {
            checkRefusal(error, of: text)
        }
    case 2:
        do {
            let key = try KeyEncryptionKey(base64: text)
            check(key.base64 == text, "a key-encryption key writes back differently")
        } catch {
            checkRefusal(error, of: text)
        }
    case 3:
        do {
            let secret = try WebhookSecret(text: text)
            check(secret.text == text, "the webhook secret \(text.debugDescription) writes back as another")
        } catch {
            checkRefusal(error, of: text)
        }
    case 4:
        check(
            (try? WebhookSecret(sealed: bytes, with: keyEncryptionKey, hook: "chat")) == nil || bytes == sealedSecret,
            "random bytes opened as a sealed webhook secret: \(bytes)")
        let flipped = flip(sealedSecret, by: bytes)
        let opened = try? WebhookSecret(sealed: flipped, with: keyEncryptionKey, hook: "chat")
        check((opened != nil) == (flipped == sealedSecret), "a changed sealed webhook secret opened")
        check((try? WebhookSecret(sealed: sealedSecret, with: keyEncryptionKey, hook: "web")) == nil, "opened for web")
    default:
        // Random bytes, and the real sealed key with bytes flipped by the input: neither opens. The real one opens
        // for its own set only.
        check(
            (try? PrivateSigningKey(sealed: bytes, with: keyEncryptionKey, set: "mobile")) == nil || bytes == sealed,
            "random bytes opened as a sealed key: \(bytes)")
        let flipped = flip(sealed, by: bytes)
        let opened = try? PrivateSigningKey(sealed: flipped, with: keyEncryptionKey, set: "mobile")
        check((opened != nil) == (flipped == sealed), "a changed sealed key opened")
        check((try? PrivateSigningKey(sealed: sealed, with: keyEncryptionKey, set: "web")) == nil, "opened for web")
    }
    return 0
}

/// `sealed` with up to 8 of its bytes changed as the input's first bytes say (a zero byte changes nothing).
private func flip(_ sealed: [UInt8], by bytes: [UInt8]) -> [UInt8] {
    var flipped = sealed
    for (index, byte) in bytes.prefix(8).enumerated() where byte != 0 {
        flipped[(index * 7 + Int(byte)) % flipped.count] ^= byte
    }
    return flipped
}

/// A refusal is a `SigningError` and does not quote what it refused (unless that is empty or a single character,
/// which any message may happen to contain).
private func checkRefusal(_ error: any Error, of text: String) {
    check(error is SigningError, "refused with \(type(of: error)): \(error)")
    if text.unicodeScalars.count >= 8 {
        check(!contains(Array("\(error)".utf8), Array(text.utf8)), "the refusal repeats the text: \(error)")
    }
}

/// Whether `needle` occurs in `haystack`, byte for byte (Foundation's `String.contains` stops at a NUL on Linux).
private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains { start in
        haystack[start..<(start + needle.count)].elementsEqual(needle)
    }
}

extension String {
    fileprivate var trimmingSpacesAndTabs: String {
        let scalars = unicodeScalars
        let isBlank = { (scalar: Unicode.Scalar) in scalar == " " || scalar == "\t" }
        guard let start = scalars.firstIndex(where: { !isBlank($0) }),
            let end = scalars.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return String(scalars[start...end])
    }
}
