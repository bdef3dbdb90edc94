#include "src/bootstrap/auth.h"

#include <sodium.h>

#include <cstring>

#include "src/base/util/secure.h"

namespace slimeccl {
namespace {

// HMAC-SHA256 over purpose, binding, nonce and `extra` bytes, in a fixed little-endian layout.
void hmac(const CommSecret& secret, ProofPurpose purpose, int64_t binding, const Nonce& nonce, const void* extra,
          size_t extraBytes, uint8_t out[32]) {
  uint8_t message[sizeof(uint32_t) + sizeof(int64_t) + kNonceBytes];
  const uint32_t p = static_cast<uint32_t>(purpose);
  memcpy(message, &p, sizeof(p));
  memcpy(message + sizeof(p), &binding, sizeof(binding));
  memcpy(message + sizeof(p) + sizeof(binding), nonce.bytes, kNonceBytes);
  static_assert(crypto_auth_hmacsha256_BYTES == 32 && crypto_auth_hmacsha256_KEYBYTES == kSecretBytes);
  // Pure computation: no allocation and no per-thread state, so any thread may prove or check.
  // sodium_init picks the fastest implementations once; it is safe to call from every thread.
  static const bool initialised = sodium_init() >= 0;
  (void)initialised;
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, secret.bytes, kSecretBytes);
  crypto_auth_hmacsha256_update(&state, message, sizeof(message));
  if (extraBytes > 0) crypto_auth_hmacsha256_update(&state, static_cast<const uint8_t*>(extra), extraBytes);
  crypto_auth_hmacsha256_final(&state, out);
  sodium_memzero(&state, sizeof(state));
}

}  // namespace

bool makeNonce(Nonce* out) { return randomBytes(out->bytes, kNonceBytes); }

Proof proveSecret(const CommSecret& secret, ProofPurpose purpose, int64_t binding, const Nonce& nonce) {
  Proof proof;
  hmac(secret, purpose, binding, nonce, nullptr, 0, proof.bytes);
  return proof;
}

Proof proveStream(const CommSecret& secret, int64_t binding, const Nonce& nonce, const StreamClaim& claim) {
  const uint64_t fields[2] = {claim.connection, claim.part};
  Proof proof;
  hmac(secret, ProofPurpose::Stream, binding, nonce, fields, sizeof(fields), proof.bytes);
  return proof;
}

bool proofHolds(const Proof& proof, const CommSecret& secret, ProofPurpose purpose, int64_t binding,
                const Nonce& nonce) {
  const Proof expected = proveSecret(secret, purpose, binding, nonce);
  return equalConstantTime(proof.bytes, expected.bytes, kProofBytes);
}

bool streamProofHolds(const Proof& proof, const CommSecret& secret, int64_t binding, const Nonce& nonce,
                      const StreamClaim& claim) {
  const Proof expected = proveStream(secret, binding, nonce, claim);
  return equalConstantTime(proof.bytes, expected.bytes, kProofBytes);
}

CommSecret deriveSecret(const CommSecret& parent, int64_t binding, const Nonce& salt) {
  static_assert(kSecretBytes == 32, "a derived secret is one HMAC-SHA256");
  CommSecret derived;
  hmac(parent, ProofPurpose::SplitSecret, binding, salt, nullptr, 0, derived.bytes);
  return derived;
}

}  // namespace slimeccl
