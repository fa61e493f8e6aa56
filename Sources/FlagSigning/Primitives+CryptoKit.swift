#if canImport(CryptoKit)
    import CryptoKit
    import Foundation

    // CryptoKit on Apple platforms: `Curve25519.Signing` for Ed25519 (a key's `rawRepresentation` is the 32-byte seed
    // of RFC 8032, its public key's the 32 raw bytes) and `AES.GCM`. The same contract as `Primitives+LibCrypto.swift`.
    //
    // CryptoKit's Ed25519 signatures are randomized: valid, and verified by any RFC 8032 implementation, but not the
    // deterministic bytes of RFC 8032 §7.1. The tests compare signature bytes with the RFC only under libcrypto.

    extension Primitives {
        /// A new private key's 32-byte seed.
        static func ed25519GenerateSeed() throws -> [UInt8] {
            Array(Curve25519.Signing.PrivateKey().rawRepresentation)
        }

        /// The public key of the private key made from `seed` (32 bytes).
        static func ed25519PublicKey(seed: [UInt8]) throws -> [UInt8] {
            Array(try privateKey(seed: seed).publicKey.rawRepresentation)
        }

        /// A signature of `message` by the private key made from `seed` (32 bytes).
        static func ed25519Sign(seed: [UInt8], message: [UInt8]) throws -> [UInt8] {
            let key = try privateKey(seed: seed)
            do {
                return Array(try key.signature(for: message))
            } catch {
                throw SigningError.cryptography("CryptoKit could not sign with Ed25519", underlying: "\(error)")
            }
        }

        /// Whether `signature` (64 bytes) is `publicKey`'s (32 bytes) over `message`.
        static func ed25519Verify(publicKey: [UInt8], signature: [UInt8], message: [UInt8]) throws -> Bool {
            let key: Curve25519.Signing.PublicKey
            do {
                key = try Curve25519.Signing.PublicKey(rawRepresentation: publicKey)
            } catch {
                throw SigningError.cryptography(
                    "CryptoKit could not make an Ed25519 public key from its 32 bytes", underlying: "\(error)")
            }
            return key.isValidSignature(signature, for: message)
        }

        /// The SHA-256 digest of `bytes` (32 bytes). Spelled `CryptoKit.SHA256`: FlagCore has a `SHA256` too.
        static func sha256(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
            Array(CryptoKit.SHA256.hash(data: bytes))
        }

        /// The HMAC-SHA256 of `message` under `key` (RFC 2104).
        static func hmacSHA256(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
            Array(CryptoKit.HMAC<CryptoKit.SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        }

        /// `count` bytes from the system's cryptographically secure generator.
        static func randomBytes(count: Int) throws -> [UInt8] {
            // `SystemRandomNumberGenerator` is documented as cryptographically secure on every platform (arc4random
            // on Apple platforms), so no Security framework call is needed.
            var generator = SystemRandomNumberGenerator()
            return (0..<count).map { _ in generator.next() }
        }

        /// `plaintext` encrypted with AES-256-GCM under `key` (32 bytes) and a fresh random 12-byte nonce,
        /// authenticating `authenticatedData` too.
        static func aes256GCMSeal(
            key: [UInt8], plaintext: [UInt8], authenticating authenticatedData: [UInt8]
        ) throws -> (nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
            do {
                // `AES.GCM.Nonce()` is 12 random bytes.
                let box = try AES.GCM.seal(
                    plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(),
                    authenticating: authenticatedData)
                return (Array(box.nonce), Array(box.ciphertext), Array(box.tag))
            } catch {
                throw SigningError.cryptography("CryptoKit could not encrypt with AES-256-GCM", underlying: "\(error)")
            }
        }

        /// The plaintext of an AES-256-GCM box, or `nil` when it does not authenticate: another key, other
        /// authenticated data, or changed bytes.
        static func aes256GCMOpen(
            key: [UInt8], nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8],
            authenticating authenticatedData: [UInt8]
        ) throws -> [UInt8]? {
            let box: AES.GCM.SealedBox
            do {
                box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            } catch {
                throw SigningError.cryptography("CryptoKit could not read an AES-GCM box", underlying: "\(error)")
            }
            do {
                return Array(try AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: authenticatedData))
            } catch {
                // For a well-formed box the only failure is a tag that does not match. CryptoKit reports it as
                // `CryptoKitError.authenticationFailure`; swift-crypto, the same API over BoringSSL, as
                // `underlyingCoreCryptoError`. Either way the box does not open.
                return nil
            }
        }

        private static func privateKey(seed: [UInt8]) throws -> Curve25519.Signing.PrivateKey {
            do {
                return try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
            } catch {
                throw SigningError.cryptography(
                    "CryptoKit could not make an Ed25519 private key from its 32-byte seed", underlying: "\(error)")
            }
        }
    }
#endif
