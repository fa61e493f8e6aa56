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
        checkWritesBack("the key", text) {
            let key = try SigningKey(base64: $0)
            check(key.id == String(SHA256.hex(key.publicKey).prefix(16)), "the id of \(key.base64)")
            return key.base64
        }
    case 2:
        checkWritesBack("the key-encryption key", text) { try KeyEncryptionKey(base64: $0).base64 }
    case 3:
        checkWritesBack("the webhook secret", text) { try WebhookSecret(text: $0).text }
    case 4:
        checkOpensOnlyAsSealed("webhook secret", sealedSecret, for: "chat", input: bytes) {
            (try? WebhookSecret(sealed: $0, with: keyEncryptionKey, hook: $1)) != nil
        }
    default:
        checkOpensOnlyAsSealed("key", sealed, for: "mobile", input: bytes) {
            (try? PrivateSigningKey(sealed: $0, with: keyEncryptionKey, set: $1)) != nil
        }
    }
    return 0
}

/// Reads `text` with `read`, which answers what the value it made writes back as: exactly `text`, or a refusal.
private func checkWritesBack(_ what: String, _ text: String, _ read: (String) throws -> String) {
    do {
        let written = try read(text)
        check(written == text, "\(what) \(text.debugDescription) writes back as \(written.debugDescription)")
    } catch {
        checkRefusal(error, of: text)
    }
}

/// Random bytes, and `sealed` (sealed for `owner`) with bytes flipped by the input: neither opens. `sealed` itself
/// opens for `owner` only. `open` answers whether bytes open for a set or hook.
private func checkOpensOnlyAsSealed(
    _ what: String, _ sealed: [UInt8], for owner: String, input bytes: [UInt8], open: ([UInt8], String) -> Bool
) {
    check(!open(bytes, owner) || bytes == sealed, "random bytes opened as a sealed \(what): \(bytes)")
    let flipped = flip(sealed, by: bytes)
    check(open(flipped, owner) == (flipped == sealed), "a changed sealed \(what) opened")
    check(!open(sealed, "web"), "a sealed \(what) of \(owner) opened for web")
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
