// Proof that a peer holds the comm secret, without the secret crossing the wire: the side that
// listens hands each connection a fresh random nonce (or, for connections of net modules, which
// carry one direction only, a nonce of its own published at init); the side that connects answers
// HMAC-SHA256(secret, purpose, binding, nonce) (libsodium). The purpose keeps a proof
// made for one handshake from serving another; the binding ties it to the connecting rank.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/bootstrap/unique_id.h"

namespace slimeccl {

constexpr size_t kNonceBytes = 32;
constexpr size_t kProofBytes = 32;

struct Nonce {
  uint8_t bytes[kNonceBytes];
};

struct Proof {
  uint8_t bytes[kProofBytes];
};

enum class ProofPurpose : uint32_t {
  RootHello = 1,    // a rank joining at the bootstrap root
  RingHello = 2,    // a rank connecting to its next one on the bootstrap ring
  Connection = 3,   // a net module connection of a comm (binding: the connecting rank and kind)
  SplitSecret = 4,  // a split comm's secret, derived from its parent's (binding: the split)
  Stream = 5,       // a net module's own introduction of a connection (binding: the rank and kind)
};

// What a net-module stream's proof covers beyond rank and kind: the connecting side's random id
// for the connection and the stream's place in it. A listener refuses an id it has accepted
// before, so a proof seen once on the wire opens nothing a second time.
struct StreamClaim {
  uint64_t connection;
  uint64_t part;
};

// A fresh random nonce; false when the system's random source failed.
bool makeNonce(Nonce* out);

Proof proveSecret(const CommSecret& secret, ProofPurpose purpose, int64_t binding, const Nonce& nonce);
// A Stream proof: HMAC-SHA256 over the purpose, binding and nonce, then the claim.
Proof proveStream(const CommSecret& secret, int64_t binding, const Nonce& nonce, const StreamClaim& claim);

// Whether `proof` is the one proveSecret gives, compared in constant time.
bool proofHolds(const Proof& proof, const CommSecret& secret, ProofPurpose purpose, int64_t binding,
                const Nonce& nonce);
bool streamProofHolds(const Proof& proof, const CommSecret& secret, int64_t binding, const Nonce& nonce,
                      const StreamClaim& claim);

// A secret for a comm split from one whose secret is `parent`: only holders of the parent's secret
// can compute it from the public `salt`.
CommSecret deriveSecret(const CommSecret& parent, int64_t binding, const Nonce& salt);

}  // namespace slimeccl
