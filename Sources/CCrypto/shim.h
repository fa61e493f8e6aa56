// OpenSSL's libcrypto (Debian's libssl-dev): Ed25519 and AES-256-GCM through EVP, its random bytes, its error queue.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
