#include "byte_pattern.h"

#include <cstring>

namespace slimeccl_soak {
namespace {

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t streamSeed(uint64_t op, int sender, uint64_t tag) {
  return mix(op * 0x100000001b3ull ^ mix(static_cast<uint64_t>(sender) << 32 ^ tag));
}

unsigned char byteAt(uint64_t seed, size_t i) { return static_cast<unsigned char>(mix(seed + i / 8) >> (8 * (i % 8))); }

}  // namespace

void fillPattern(void* buf, size_t bytes, uint64_t op, int sender, uint64_t tag) {
  uint64_t seed = streamSeed(op, sender, tag);
  auto* out = static_cast<unsigned char*>(buf);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t word = mix(seed + i / 8);
    memcpy(out + i, &word, 8);
  }
  for (; i < bytes; ++i) out[i] = byteAt(seed, i);
}

std::string comparePattern(const void* buf, size_t bytes, uint64_t op, int sender, uint64_t tag) {
  uint64_t seed = streamSeed(op, sender, tag);
  const auto* in = static_cast<const unsigned char*>(buf);
  // Whole words first (the common, equal case); a differing word is then found byte by byte.
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t word = mix(seed + i / 8);
    if (memcmp(in + i, &word, 8) != 0) break;
  }
  for (; i < bytes; ++i) {
    unsigned char want = byteAt(seed, i);
    if (in[i] != want)
      return "byte " + std::to_string(i) + " of " + std::to_string(bytes) + " is " + std::to_string(in[i]) +
             ", expected " + std::to_string(want);
  }
  return "";
}

void fillGuard(void* guard) { memset(guard, kGuardByte, kGuardBytes); }

bool guardIntact(const void* guard) {
  const auto* g = static_cast<const unsigned char*>(guard);
  for (size_t i = 0; i < kGuardBytes; ++i)
    if (g[i] != kGuardByte) return false;
  return true;
}

}  // namespace slimeccl_soak
