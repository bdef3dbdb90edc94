// The bytes each rank sends, derived from (op, sender, tag) alone so that any receiver can check
// them; and guard bytes after each receive buffer, to catch a write past its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace slimeccl_soak {

constexpr size_t kGuardBytes = 64;
constexpr unsigned char kGuardByte = 0xcd;

void fillPattern(void* buf, size_t bytes, uint64_t op, int sender, uint64_t tag);
// Empty when buf holds the pattern, else where and how it differs.
std::string comparePattern(const void* buf, size_t bytes, uint64_t op, int sender, uint64_t tag);

void fillGuard(void* guard);
bool guardIntact(const void* guard);

}  // namespace slimeccl_soak
