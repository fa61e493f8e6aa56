#if !canImport(CryptoKit)
    import CCrypto

    // OpenSSL's libcrypto (1.1.1 or later; Debian bookworm ships 3.0) through its EVP interface. Every object made here
    // is freed by a `defer` next to the line that made it. OpenSSL's error queue is per thread: it is cleared before
    // each operation, so that a reason left behind by other code on the thread is not reported as ours, and drained
    // into the error when an operation fails.

    extension Primitives {
        /// A new private key's 32-byte seed, from libcrypto's key generation.
        static func ed25519GenerateSeed() throws -> [UInt8] {
            ERR_clear_error()
            guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else {
                throw libcryptoFailure("set up Ed25519 key generation")
            }
            defer { EVP_PKEY_CTX_free(context) }
            var generated: OpaquePointer?
            guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_keygen(context, &generated) == 1, let key = generated
            else {
                throw libcryptoFailure("generate an Ed25519 key")
            }
            defer { EVP_PKEY_free(key) }
            var seed = [UInt8](repeating: 0, count: ed25519KeyCount)
            var length = seed.count
            guard EVP_PKEY_get_raw_private_key(key, &seed, &length) == 1, length == ed25519KeyCount else {
                throw libcryptoFailure("read the seed of a new Ed25519 key")
            }
            return seed
        }

        /// The public key of the private key made from `seed` (32 bytes).
        static func ed25519PublicKey(seed: [UInt8]) throws -> [UInt8] {
            try withPrivateKey(seed: seed) { key in
                var publicKey = [UInt8](repeating: 0, count: ed25519KeyCount)
                var length = publicKey.count
                guard EVP_PKEY_get_raw_public_key(key, &publicKey, &length) == 1, length == ed25519KeyCount else {
                    throw libcryptoFailure("derive the Ed25519 public key")
                }
                return publicKey
            }
        }

        /// The signature of `message` by the private key made from `seed` (32 bytes): pure Ed25519, no pre-hash.
        static func ed25519Sign(seed: [UInt8], message: [UInt8]) throws -> [UInt8] {
            try withPrivateKey(seed: seed) { key in
                guard let context = EVP_MD_CTX_new() else { throw libcryptoFailure("allocate a signing context") }
                defer { EVP_MD_CTX_free(context) }
                // Ed25519 hashes the message itself: the digest must be NULL.
                guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1 else {
                    throw libcryptoFailure("start an Ed25519 signature")
                }
                var signature = [UInt8](repeating: 0, count: ed25519SignatureCount)
                var length = signature.count
                let status = message.withNonNullBytes { bytes, count in
                    EVP_DigestSign(context, &signature, &length, bytes, count)
                }
                guard status == 1, length == ed25519SignatureCount else {
                    throw libcryptoFailure("sign with Ed25519")
                }
                return signature
            }
        }

        /// Whether `signature` (64 bytes) is `publicKey`'s (32 bytes) over `message`; throws only when libcrypto
        /// could not run the check at all.
        static func ed25519Verify(publicKey: [UInt8], signature: [UInt8], message: [UInt8]) throws -> Bool {
            ERR_clear_error()
            // A signature that does not verify leaves reasons on the queue; they are no failure of ours.
            defer { ERR_clear_error() }
            let made = publicKey.withNonNullBytes { bytes, count in
                EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, bytes, count)
            }
            guard let key = made else { throw libcryptoFailure("make an Ed25519 public key from its 32 bytes") }
            defer { EVP_PKEY_free(key) }
            guard let context = EVP_MD_CTX_new() else { throw libcryptoFailure("allocate a verification context") }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else {
                throw libcryptoFailure("start an Ed25519 verification")
            }
            // 1: valid. 0: not valid. Negative: a malformed signature, which is not valid either.
            let status = signature.withNonNullBytes { signatureBytes, signatureCount in
                message.withNonNullBytes { messageBytes, messageCount in
                    EVP_DigestVerify(context, signatureBytes, signatureCount, messageBytes, messageCount)
                }
            }
            return status == 1
        }

        /// The SHA-256 digest of `bytes` (32 bytes), through `EVP_Digest`: libcrypto's assembly runs several times
        /// faster than FlagCore's portable Swift, which counts for a 1 MB document verified at every launch.
        static func sha256(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
            ERR_clear_error()
            var digest = [UInt8](repeating: 0, count: sha256Count)
            var length: UInt32 = 0
            let placeholder: UInt8 = 0
            let status = withUnsafePointer(to: placeholder) { empty in
                EVP_Digest(
                    bytes.baseAddress ?? UnsafeRawPointer(empty), bytes.count, &digest, &length, EVP_sha256(), nil)
            }
            guard status == 1, length == sha256Count else { throw libcryptoFailure("compute a SHA-256 digest") }
            return digest
        }

        /// The HMAC-SHA256 of `message` under `key` (RFC 2104), through libcrypto's one-shot `HMAC`.
        static func hmacSHA256(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
            guard let keyCount = Int32(exactly: key.count) else {
                throw SigningError.cryptography("an HMAC key over 2 GiB", underlying: nil)
            }
            ERR_clear_error()
            var mac = [UInt8](repeating: 0, count: sha256Count)
            var length: UInt32 = 0
            let placeholder: UInt8 = 0
            let made = withUnsafePointer(to: placeholder) { empty in
                message.withUnsafeBufferPointer { body in
                    HMAC(
                        EVP_sha256(), key, keyCount, body.baseAddress ?? empty, body.count, &mac, &length)
                }
            }
            guard made != nil, length == sha256Count else { throw libcryptoFailure("compute an HMAC-SHA256") }
            return mac
        }

        /// `count` bytes from libcrypto's cryptographically secure generator.
        static func randomBytes(count: Int) throws -> [UInt8] {
            ERR_clear_error()
            var bytes = [UInt8](repeating: 0, count: count)
            guard let length = Int32(exactly: count), RAND_bytes(&bytes, length) == 1 else {
                throw libcryptoFailure("produce \(count) random bytes")
            }
            return bytes
        }

        /// `plaintext` encrypted with AES-256-GCM under `key` (32 bytes) and a fresh random 12-byte nonce,
        /// authenticating `authenticatedData` too.
        static func aes256GCMSeal(
            key: [UInt8], plaintext: [UInt8], authenticating authenticatedData: [UInt8]
        ) throws -> (nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
            let nonce = try randomBytes(count: gcmNonceCount)
            guard let plaintextCount = Int32(exactly: plaintext.count),
                let authenticatedCount = Int32(exactly: authenticatedData.count)
            else {
                throw SigningError.cryptography("AES-GCM input over 2 GiB", underlying: nil)
            }
            ERR_clear_error()
            guard let context = EVP_CIPHER_CTX_new() else { throw libcryptoFailure("allocate a cipher context") }
            defer { EVP_CIPHER_CTX_free(context) }
            // The default IV length of GCM in libcrypto is 12 bytes, the nonce's.
            guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1 else {
                throw libcryptoFailure("start AES-256-GCM encryption")
            }
            var length: Int32 = 0
            var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
            var finalBlock = [UInt8](repeating: 0, count: 16)
            var tag = [UInt8](repeating: 0, count: gcmTagCount)
            // A NULL output makes an update add authenticated data instead of encrypting.
            guard
                authenticatedData.withNonNullBytes({ bytes, _ in
                    EVP_EncryptUpdate(context, nil, &length, bytes, authenticatedCount)
                }) == 1,
                plaintext.withNonNullBytes({ bytes, _ in
                    EVP_EncryptUpdate(context, &ciphertext, &length, bytes, plaintextCount)
                }) == 1,
                length == plaintextCount,
                EVP_EncryptFinal_ex(context, &finalBlock, &length) == 1,
                length == 0,
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(gcmTagCount), &tag) == 1
            else {
                throw libcryptoFailure("encrypt with AES-256-GCM")
            }
            return (nonce, ciphertext, tag)
        }

        /// The plaintext of an AES-256-GCM box, or `nil` when it does not authenticate: another key, other
        /// authenticated data, or changed bytes.
        static func aes256GCMOpen(
            key: [UInt8], nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8],
            authenticating authenticatedData: [UInt8]
        ) throws -> [UInt8]? {
            guard let ciphertextCount = Int32(exactly: ciphertext.count),
                let authenticatedCount = Int32(exactly: authenticatedData.count)
            else {
                throw SigningError.cryptography("AES-GCM input over 2 GiB", underlying: nil)
            }
            ERR_clear_error()
            defer { ERR_clear_error() }
            guard let context = EVP_CIPHER_CTX_new() else { throw libcryptoFailure("allocate a cipher context") }
            defer { EVP_CIPHER_CTX_free(context) }
            guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1 else {
                throw libcryptoFailure("start AES-256-GCM decryption")
            }
            var length: Int32 = 0
            var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
            var finalBlock = [UInt8](repeating: 0, count: 16)
            var expectedTag = tag
            guard
                authenticatedData.withNonNullBytes({ bytes, _ in
                    EVP_DecryptUpdate(context, nil, &length, bytes, authenticatedCount)
                }) == 1,
                ciphertext.withNonNullBytes({ bytes, _ in
                    EVP_DecryptUpdate(context, &plaintext, &length, bytes, ciphertextCount)
                }) == 1,
                length == ciphertextCount,
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(expectedTag.count), &expectedTag) == 1
            else {
                throw libcryptoFailure("decrypt with AES-256-GCM")
            }
            // The final step compares the tags: anything but success means the box does not authenticate.
            guard EVP_DecryptFinal_ex(context, &finalBlock, &length) > 0 else { return nil }
            return plaintext
        }

        /// Runs `body` with the libcrypto private key made from `seed`, freed afterwards.
        private static func withPrivateKey<Result>(
            seed: [UInt8], _ body: (OpaquePointer) throws -> Result
        ) throws -> Result {
            ERR_clear_error()
            let made = seed.withNonNullBytes { bytes, count in
                EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, bytes, count)
            }
            guard let key = made else { throw libcryptoFailure("make an Ed25519 private key from its 32-byte seed") }
            defer { EVP_PKEY_free(key) }
            return try body(key)
        }

        /// The error for a libcrypto call that failed while trying to `operation`, with the reasons OpenSSL queued
        /// (`ERR_error_string_n`: library, function and reason), and the queue left empty.
        private static func libcryptoFailure(_ operation: String) -> SigningError {
            var reasons: [String] = []
            var code = ERR_get_error()
            while code != 0 {
                // A few reasons say it all; the rest of a long queue only repeats the chain of callers.
                if reasons.count < 4 {
                    var buffer = [CChar](repeating: 0, count: 256)
                    ERR_error_string_n(code, &buffer, buffer.count)
                    let text = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
                    reasons.append(String(decoding: text, as: UTF8.self))
                }
                code = ERR_get_error()
            }
            return .cryptography(
                "libcrypto could not \(operation)", underlying: reasons.isEmpty ? nil : reasons.joined(separator: "; "))
        }
    }

    extension Array where Element == UInt8 {
        /// Calls `body` with a pointer to the bytes and their count, a valid pointer even when the array is empty:
        /// libcrypto reads some NULL pointers as "no output wanted" or refuses them, where an empty input is meant.
        fileprivate func withNonNullBytes<Result>(_ body: (UnsafePointer<UInt8>, Int) throws -> Result) rethrows
            -> Result
        {
            try withUnsafeBufferPointer { buffer in
                if let base = buffer.baseAddress {
                    return try body(base, buffer.count)
                }
                let placeholder: UInt8 = 0
                return try withUnsafePointer(to: placeholder) { try body($0, 0) }
            }
        }
    }
#endif
