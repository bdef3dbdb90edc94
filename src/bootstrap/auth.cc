#include "src/bootstrap/auth.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>

#include "src/util/secure.h"

namespace slimeccl {
namespace {

// HMAC-SHA256 over purpose, binding and nonce, in a fixed little-endian layout.
void hmac(const CommSecret& secret, ProofPurpose purpose, int64_t binding, const Nonce& nonce, uint8_t out[32]) {
  uint8_t message[sizeof(uint32_t) + sizeof(int64_t) + kNonceBytes];
  const uint32_t p = static_cast<uint32_t>(purpose);
  memcpy(message, &p, sizeof(p));
  memcpy(message + sizeof(p), &binding, sizeof(binding));
  memcpy(message + sizeof(p) + sizeof(binding), nonce.bytes, kNonceBytes);
  unsigned int length = 32;
  HMAC(EVP_sha256(), secret.bytes, kSecretBytes, message, sizeof(message), out, &length);
}

}  // namespace

bool makeNonce(Nonce* out) { return randomBytes(out->bytes, kNonceBytes); }

Proof proveSecret(const CommSecret& secret, ProofPurpose purpose, int64_t binding, const Nonce& nonce) {
  Proof proof;
  hmac(secret, purpose, binding, nonce, proof.bytes);
  return proof;
}

bool proofHolds(const Proof& proof, const CommSecret& secret, ProofPurpose purpose, int64_t binding,
                const Nonce& nonce) {
  const Proof expected = proveSecret(secret, purpose, binding, nonce);
  return equalConstantTime(proof.bytes, expected.bytes, kProofBytes);
}

CommSecret deriveSecret(const CommSecret& parent, int64_t binding, const Nonce& salt) {
  static_assert(kSecretBytes == 32, "a derived secret is one HMAC-SHA256");
  CommSecret derived;
  hmac(parent, ProofPurpose::SplitSecret, binding, salt, derived.bytes);
  return derived;
}

}  // namespace slimeccl
