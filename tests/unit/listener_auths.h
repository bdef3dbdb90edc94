// What a test of a listener's proof check holds: the comm's auth and an intruder's (another
// secret), both publishing one fresh nonce, so that the listener must admit the one and drop the
// other.
#pragma once

#include <cstdint>

#include "src/bootstrap/auth.h"
#include "src/link/secret_net_auth.h"
#include "tests/unit/test_secrets.h"

namespace slimeccl {

struct ListenerAuths {
  explicit ListenerAuths(uint8_t seed) : secret(secretOf(seed)), otherSecret(secretOf(seed + 1)) {}
  // Both publish one fresh nonce; false when none could be made.
  bool publishFreshNonce() {
    Nonce nonce;
    if (!makeNonce(&nonce)) return false;
    auth.setListenNonce(nonce);
    intruderAuth.setListenNonce(nonce);
    return true;
  }

  CommSecret secret, otherSecret;
  SecretNetAuth auth{&secret}, intruderAuth{&otherSecret};
};

}  // namespace slimeccl
