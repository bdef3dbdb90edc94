// The secret that the fuzz targets' communicators hold, and the challenge their listeners send.
// The seed corpus carries proofs over them, so that the fuzzer starts from messages that pass the
// proof check and mutates what comes after it.
#pragma once

#include "src/bootstrap/auth.h"
#include "src/bootstrap/unique_id.h"
#include "src/link/secret_net_auth.h"

namespace slimeccl::fuzz {

inline CommSecret knownSecret() {
  CommSecret s;
  for (size_t i = 0; i < kSecretBytes; ++i) s.bytes[i] = static_cast<uint8_t>(0xa5 ^ (i * 7));
  return s;
}

inline Nonce knownChallenge() {
  Nonce n;
  for (size_t i = 0; i < kNonceBytes; ++i) n.bytes[i] = static_cast<uint8_t>(0x3c + i * 11);
  return n;
}

// A comm's net-module auth over the known secret, its listeners publishing the known challenge.
inline const SecretNetAuth& knownNetAuth() {
  static const CommSecret secret = knownSecret();
  static const SecretNetAuth auth = [] {
    SecretNetAuth a(&secret);
    a.setListenNonce(knownChallenge());
    return a;
  }();
  return auth;
}

}  // namespace slimeccl::fuzz
