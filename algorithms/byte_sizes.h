// Sizes in bytes that the tuner's tables are written in.
#pragma once

#include <cstddef>

namespace slimeccl {

inline constexpr size_t kKiB = 1024;
inline constexpr size_t kMiB = 1024 * kKiB;

}  // namespace slimeccl
