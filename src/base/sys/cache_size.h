// The size of the CPU's last-level cache, as the kernel describes it.
#pragma once

#include <cstddef>

namespace slimeccl {

// The largest cache of CPU 0 in /sys/devices/system/cpu/cpu0/cache (the L3 slice its core shares
// on most machines); fallback when the kernel does not say. Read once.
size_t lastLevelCacheBytes(size_t fallback);

}  // namespace slimeccl
