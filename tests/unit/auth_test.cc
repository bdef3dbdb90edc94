// The proof of the comm secret (src/bootstrap/auth.h): it holds only for the secret, purpose,
// binding and nonce it was made with, and a derived secret is fixed by its parent and salt.
#include "src/bootstrap/auth.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tests/unit/test_secrets.h"

namespace slimeccl {
namespace {

TEST(Auth, ProofHoldsOnlyForWhatItWasMadeWith) {
  const CommSecret secret = secretOf(1);
  Nonce nonce, other;
  ASSERT_TRUE(makeNonce(&nonce));
  ASSERT_TRUE(makeNonce(&other));
  ASSERT_NE(memcmp(nonce.bytes, other.bytes, kNonceBytes), 0) << "two fresh nonces are equal";
  const Proof proof = proveSecret(secret, ProofPurpose::RingHello, 3, nonce);
  EXPECT_TRUE(proofHolds(proof, secret, ProofPurpose::RingHello, 3, nonce));
  EXPECT_FALSE(proofHolds(proof, secretOf(2), ProofPurpose::RingHello, 3, nonce)) << "another secret";
  EXPECT_FALSE(proofHolds(proof, secret, ProofPurpose::RootHello, 3, nonce)) << "another purpose";
  EXPECT_FALSE(proofHolds(proof, secret, ProofPurpose::RingHello, 4, nonce)) << "another binding";
  EXPECT_FALSE(proofHolds(proof, secret, ProofPurpose::RingHello, 3, other)) << "another nonce";
  Proof flipped = proof;
  flipped.bytes[kProofBytes - 1] ^= 1;
  EXPECT_FALSE(proofHolds(flipped, secret, ProofPurpose::RingHello, 3, nonce)) << "a changed proof";
  // The proof is no copy of the secret.
  EXPECT_NE(memcmp(proof.bytes, secret.bytes, kProofBytes), 0);
}

TEST(Auth, DerivedSecretDependsOnParentBindingAndSalt) {
  Nonce salt, otherSalt;
  ASSERT_TRUE(makeNonce(&salt));
  ASSERT_TRUE(makeNonce(&otherSalt));
  const CommSecret a = deriveSecret(secretOf(1), 7, salt);
  const CommSecret again = deriveSecret(secretOf(1), 7, salt);
  EXPECT_EQ(memcmp(a.bytes, again.bytes, kSecretBytes), 0) << "every member derives the same secret";
  for (const CommSecret& other : {deriveSecret(secretOf(2), 7, salt), deriveSecret(secretOf(1), 8, salt),
                                  deriveSecret(secretOf(1), 7, otherSalt)})
    EXPECT_NE(memcmp(a.bytes, other.bytes, kSecretBytes), 0);
  EXPECT_NE(memcmp(a.bytes, secretOf(1).bytes, kSecretBytes), 0) << "the parent's secret itself";
}

}  // namespace
}  // namespace slimeccl
