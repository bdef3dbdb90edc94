// Secrets: random bytes from the kernel and comparison that does not leak where bytes differ.
#pragma once

#include <cstddef>
#include <cstdint>

namespace slimeccl {

bool randomBytes(void* out, size_t len);
bool equalConstantTime(const void* a, const void* b, size_t len);

}  // namespace slimeccl
