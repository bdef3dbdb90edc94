// FNV-1a: stable 64-bit hashes of host identities and strings (not for security).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace slimeccl {

inline uint64_t fnv1a64(const void* data, size_t len, uint64_t seed = 0xcbf29ce484222325ULL) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < len; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

inline uint64_t fnv1a64(std::string_view text) { return fnv1a64(text.data(), text.size()); }

}  // namespace slimeccl
