// A comm's NetAuth: proofs over its secret (src/bootstrap/auth.h, proveStream), and the
// connection nonce its rank publishes. The secret is read when a proof is made or checked, so a
// split comm may learn it after its listeners opened.
#pragma once

#include "net/net.h"
#include "src/bootstrap/auth.h"

namespace slimeccl {

class SecretNetAuth final : public NetAuth {
 public:
  explicit SecretNetAuth(const CommSecret* secret) : secret_(secret) {}
  void setListenNonce(const Nonce& nonce) { nonce_ = nonce; }

  const uint8_t* listenNonce() const override { return nonce_.bytes; }
  void prove(const NetClaim& claim, const uint8_t* nonce, uint8_t* proof) const override;
  bool holds(const NetClaim& claim, const uint8_t* nonce, const uint8_t* proof) const override;

 private:
  const CommSecret* secret_;
  Nonce nonce_{};
};

}  // namespace slimeccl
