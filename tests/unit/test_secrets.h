// Comm secrets for tests: distinct bytes per seed.
#pragma once

#include <cstdint>

#include "src/bootstrap/unique_id.h"

namespace slimeccl {

inline CommSecret secretOf(uint8_t seed) {
  CommSecret s;
  for (size_t i = 0; i < kSecretBytes; ++i) s.bytes[i] = static_cast<uint8_t>(seed + i);
  return s;
}

}  // namespace slimeccl
