#include "src/link/secret_net_auth.h"

#include <cstring>

namespace slimeccl {
namespace {

static_assert(NetAuth::kNonceBytes == kNonceBytes && NetAuth::kProofBytes == kProofBytes);

int64_t bindingOf(int rank, uint32_t kind) { return (static_cast<int64_t>(rank) << 8) | (kind & 0xff); }

Nonce nonceOf(const uint8_t* bytes) {
  Nonce n;
  memcpy(n.bytes, bytes, kNonceBytes);
  return n;
}

StreamClaim streamClaim(const NetClaim& claim) { return StreamClaim{claim.connection, claim.part}; }

}  // namespace

void SecretNetAuth::prove(const NetClaim& claim, const uint8_t* nonce, uint8_t* proof) const {
  const Proof p = proveStream(*secret_, bindingOf(claim.rank, claim.kind), nonceOf(nonce), streamClaim(claim));
  memcpy(proof, p.bytes, kProofBytes);
}

bool SecretNetAuth::holds(const NetClaim& claim, const uint8_t* nonce, const uint8_t* proof) const {
  Proof p;
  memcpy(p.bytes, proof, kProofBytes);
  return streamProofHolds(p, *secret_, bindingOf(claim.rank, claim.kind), nonceOf(nonce), streamClaim(claim));
}

}  // namespace slimeccl
