// The secret that the fuzz targets' communicators hold. The seed corpus carries it, so that the
// fuzzer starts from messages that pass the secret check and mutates what comes after it.
#pragma once

#include "src/bootstrap/unique_id.h"

namespace slimeccl::fuzz {

inline CommSecret knownSecret() {
  CommSecret s;
  for (size_t i = 0; i < kSecretBytes; ++i) s.bytes[i] = static_cast<uint8_t>(0xa5 ^ (i * 7));
  return s;
}

}  // namespace slimeccl::fuzz
